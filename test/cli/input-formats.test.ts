/**
 * An input whose format the CLI cannot tell is refused before anything is read or sent, with what
 * to do: a spreadsheet workbook (what a finance team often tries first) is to be saved as CSV.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit-codes.js';
import { resolveInputs } from '../../src/cli/readers/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-api-input-formats-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('an input of an unknown format', () => {
  it.each(['expenses.xlsx', 'expenses.XLS', 'expenses.ods'])(
    '%s is refused with how to save it as CSV',
    async (name) => {
      writeFileSync(join(dir, name), 'PK\u0003\u0004');
      const refusal = resolveInputs([join(dir, name)], undefined);
      await expect(refusal).rejects.toBeInstanceOf(UsageError);
      await expect(refusal).rejects.toThrow(
        `${join(dir, name)}: a spreadsheet workbook, which push-api does not read: save the sheet as CSV (in Excel, "CSV UTF-8") and publish the .csv`,
      );
    },
  );

  it('another extension names the formats --format takes', async () => {
    writeFileSync(join(dir, 'data.xml'), '<x/>');
    await expect(resolveInputs([join(dir, 'data.xml')], undefined)).rejects.toThrow(
      `${join(dir, 'data.xml')}: unknown format ".xml": use --format csv|tsv|jsonl|json`,
    );
  });
});
