/**
 * A CSV whose producer was killed mid-write, through the real CLI process against the emulator: the
 * last row, with no line break after it, is named in the summary and the JSON report, and
 * `--require-final-newline` keeps it from being sent (`1234.56` cut to `12` is still a number).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

/** The amount last: a row cut inside its last cell has every cell, and reads as valid. */
const HEADER = 'created,currency,identifier,type,vendor,amount';
const WHOLE = `${HEADER}\n2024-03-01,EUR,inv-1,expense,Acme,1234.56\n2024-03-02,EUR,inv-2,expense,Acme,1234.56\n`;
/** The same export, its writer killed two bytes into the last row's amount. */
const CUT = WHOLE.slice(0, WHOLE.lastIndexOf('1234.56') + 2);

const publish = (args: string[], stdin?: string) =>
  runCli(ctx.cli, ['finance', 'publish', '--app', DEMO_APP_ID, ...args], {
    env: emulatorEnv(ctx.emulator),
    cwd: ctx.temp.dir,
    stdin,
  });
const amountsStored = () => ctx.emulator.mock.state.records(DEMO_APP_ID).map((record) => record.amount);

describe('an input that ends inside its last row', () => {
  it('by default sends the row as read, and names it with the option that refuses it', async () => {
    ctx.emulator.mock.reset();
    const result = await publish(['--format', 'csv', '--json', '-'], CUT);
    expect(result.code).toBe(0);
    expect(amountsStored()).toEqual([1234.56, 12]);
    expect(JSON.parse(result.stdout).rowsWithoutFinalNewline).toEqual([{ file: '<stdin>', line: 3 }]);
    expect(result.stderr).toContain(
      '<stdin> ends with no line break after its last row (line 3), which was read as it is',
    );
    expect(result.stderr).toContain('--require-final-newline refuses such a row');
  });

  it('with --require-final-newline refuses it, naming its line, and sends every whole row', async () => {
    ctx.emulator.mock.reset();
    const rejects = ctx.temp.path('cut.rejects.jsonl');
    const result = await publish(
      ['--format', 'csv', '--require-final-newline', '--rejects', rejects, '--json', '-'],
      CUT,
    );
    expect(result.code).toBe(3);
    expect(amountsStored()).toEqual([1234.56]);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ recordsSent: 1, recordsInvalid: 1 });
    expect(report.rowsWithoutFinalNewline).toEqual([{ file: '<stdin>', line: 3 }]);
    const [rejected] = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rejected).toMatchObject({ file: '<stdin>', line: 3, kind: 'invalid', record: { amount: 12 } });
    expect(rejected.reasons[0].message).toContain('the input ends inside this row');
  });

  it('notes nothing and refuses nothing for an input that ends with its line break (CRLF too)', async () => {
    ctx.emulator.mock.reset();
    const file = ctx.temp.path('whole.csv');
    writeFileSync(file, WHOLE.replaceAll('\n', '\r\n'));
    const result = await publish(['--require-final-newline', '--json', file]);
    expect(result.code).toBe(0);
    expect(amountsStored()).toEqual([1234.56, 1234.56]);
    expect(JSON.parse(result.stdout).rowsWithoutFinalNewline).toEqual([]);
    expect(result.stderr).not.toContain('line break');
  });

  it('names a file whose only row is cut once, though its head is read before the run to check the header', async () => {
    ctx.emulator.mock.reset();
    const file = ctx.temp.path('one-row.csv');
    writeFileSync(file, `${HEADER}\n2024-03-01,EUR,inv-1,expense,Acme,12`);
    const result = await publish(['--json', file]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).rowsWithoutFinalNewline).toEqual([{ file, line: 2 }]);
    expect(result.stderr.match(/ends with no line break/g)).toHaveLength(1);
  });

  it('names the first few of many inputs that end with no line break, and counts the rest (--json lists them all)', async () => {
    const files = Array.from({ length: 30 }, (_, i) => {
      const file = ctx.temp.path(`many-${String(i).padStart(2, '0')}.csv`);
      writeFileSync(file, `${HEADER}\n2024-03-01,EUR,many-${i},expense,Acme,12`);
      return file;
    });
    const result = await publish(['--dry-run', '--json', ...files]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).rowsWithoutFinalNewline).toHaveLength(30);
    expect(result.stderr.match(/ends with no line break/g)).toHaveLength(5);
    expect(result.stderr).toContain('and 25 more inputs end with no line break after their last row');
  });

  it('does not resume, with the option, a checkpoint written without it: the rows it makes differ', async () => {
    ctx.emulator.mock.reset();
    const file = ctx.temp.path('cut.csv');
    const checkpoint = ctx.temp.path('cut.checkpoint.json');
    writeFileSync(file, CUT);
    expect((await publish(['--checkpoint', checkpoint, file])).code).toBe(0);
    const again = await publish(['--require-final-newline', '--checkpoint', checkpoint, file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('was written for different input or options');
    // Without the option it resumes: nothing is left to send.
    const resumed = await publish(['--json', '--checkpoint', checkpoint, file]);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ recordsSent: 0, recordsSkipped: 2 });
    expect(amountsStored()).toEqual([1234.56, 12]);
  });
});
