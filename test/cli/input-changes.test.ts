import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintInputs } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { InputChangedError } from '../../src/cli/readers/file-identity.js';
import { readInput, resolveInputs } from '../../src/cli/readers/index.js';
import type { SourceRow } from '../../src/cli/readers/types.js';

const HEADER = 'created,currency,identifier,type,vendor,amount';
const row = (i: number) => `2025-01-01,EUR,u${i}@example.com,expense,V,1234.56`;
const rows = (count: number) => Array.from({ length: count }, (_, i) => row(i)).join('\n');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-api-input-changes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Reads every row it can; `between` runs after the first chunk of rows, as a writer would. */
async function readAll(path: string, between?: () => void): Promise<{ rows: SourceRow[]; error?: unknown }> {
  const [spec] = await resolveInputs([path], undefined);
  const read: SourceRow[] = [];
  try {
    for await (const chunk of readInput(spec as NonNullable<typeof spec>, { rules: rowRules({}) })) {
      read.push(...chunk);
      between?.();
      between = undefined;
    }
  } catch (error) {
    return { rows: read, error };
  }
  return { rows: read };
}

describe('an input file that changes while it is read', () => {
  it('reads an unchanged file whole', async () => {
    const path = join(dir, 'in.csv');
    writeFileSync(path, `${HEADER}\n${rows(3000)}\n`);
    const { rows: read, error } = await readAll(path);
    expect(error).toBeUndefined();
    expect(read).toHaveLength(3000);
  });

  it('stops with an error naming the file when it grows after it was checked', async () => {
    const path = join(dir, 'in.csv');
    writeFileSync(path, `${HEADER}\n${rows(3000)}\n`);
    const { error } = await readAll(path, () => appendFileSync(path, `${row(3000)}\n`));
    expect(error).toBeInstanceOf(InputChangedError);
    expect((error as Error).message).toContain(path);
  });

  it('never yields a row read after the file was rewritten in place, a half-written last row included', async () => {
    const path = join(dir, 'in.csv');
    writeFileSync(path, `${HEADER}\n${rows(3000)}\n`);
    const rewrite = () => writeFileSync(path, `${HEADER}\n${rows(2000)}\n2025-01-01,EUR,half@example.com,expense,V,12`);
    const { rows: read, error } = await readAll(path, rewrite);
    expect(error).toBeInstanceOf(InputChangedError);
    expect(read.length).toBeLessThan(2000);
    for (const each of read) expect(each).toMatchObject({ kind: 'record', record: { amount: 1234.56 } });
  });

  it('refuses to fingerprint a file that changed after it was checked, before anything is sent', async () => {
    const path = join(dir, 'in.csv');
    writeFileSync(path, `${HEADER}\n${rows(10)}\n`);
    const inputs = await resolveInputs([path], undefined);
    appendFileSync(path, `${row(10)}\n`);
    const fingerprint = fingerprintInputs(inputs, {});
    await expect(fingerprint).rejects.toBeInstanceOf(UsageError);
    await expect(fingerprint).rejects.toThrow(`${path} changed while it was read`);
  });
});
