/**
 * An input row nesting tens of thousands of arrays deep: a few hundred KB that JSON.parse accepts,
 * and that overflowed the stack when its rejects line was written, ending the whole run. It must be
 * an invalid row naming its line and field, and every other row must be sent.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_ROW_DEPTH } from '../../src/cli/readers/depth.js';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, jsonlRecord, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

const DEPTH = 50_000;
const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
const deepRow = `{"created":1704067200000,"amount":1,"currency":"EUR","identifier":"x","type":"expense","vendor":${deep}}`;
const count = () => ctx.emulator.mock.state.recordCount(DEMO_APP_ID);

function rejectsOf(path: string): { kind: string; line: number; reasons: { field: string; message: string }[] }[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

describe('an input row nested too deep', () => {
  for (const format of ['jsonl', 'json'] as const) {
    it(`${format}: is an invalid row in --rejects naming its line and field, and the valid rows are sent (exit 3)`, async () => {
      const rows = [jsonlRecord(1), jsonlRecord(2), deepRow, jsonlRecord(3)];
      const text = format === 'jsonl' ? `${rows.join('\n')}\n` : `[\n${rows.join(',\n')}\n]\n`;
      const input = ctx.temp.path(`in.${format}`);
      const rejects = ctx.temp.path(`rejects-${format}.jsonl`);
      writeFileSync(input, text);
      const before = count();
      const result = await runCli(
        ctx.cli,
        ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--rejects', rejects, input],
        { env: emulatorEnv(ctx.emulator) },
      );
      expect(result.stderr).not.toMatch(/RangeError|Maximum call stack/);
      expect(result.code).toBe(3);
      expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 3, recordsInvalid: 1 });
      expect(count() - before).toBe(3);
      const [entry, ...others] = rejectsOf(rejects);
      expect(others).toEqual([]);
      expect(entry).toMatchObject({ kind: 'invalid', line: format === 'jsonl' ? 3 : 4 });
      expect(entry?.reasons).toEqual([
        {
          field: 'vendor',
          message: `nested deeper than ${MAX_ROW_DEPTH} levels of arrays or objects; finance record fields are flat values`,
        },
      ]);
    });
  }

  it('a run over the same file again stops the same way: the deep row is invalid again, nothing crashes', async () => {
    const input = ctx.temp.path('again.jsonl');
    writeFileSync(input, `${deepRow}\n${jsonlRecord(9)}\n`);
    for (let run = 0; run < 2; run++) {
      const rejects = ctx.temp.path(`again-${run}.jsonl`);
      const result = await runCli(
        ctx.cli,
        ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--rejects', rejects, input],
        { env: emulatorEnv(ctx.emulator) },
      );
      expect(result.code).toBe(3);
      expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 1, recordsInvalid: 1 });
      expect(rejectsOf(rejects).map((entry) => [entry.line, entry.reasons[0]?.field])).toEqual([[1, 'vendor']]);
    }
  });
});
