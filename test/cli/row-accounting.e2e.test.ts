/**
 * Every row a run reads ends in exactly one bucket, even the rows the SDK refuses after the CLI
 * handed them over (too big for any request) and the rows a transform builds out of values JSON
 * cannot hold (a cycle, a BigInt). Real CLI processes against the emulator.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import {
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  killChildren,
  makeTempDir,
  type RunResult,
  runCli,
} from '../support/cli/run.js';

let cli: string;
let emulator: RunningEmulator;
let temp: ReturnType<typeof makeTempDir>;
beforeAll(async () => {
  [cli, emulator] = await Promise.all([buildCli(), startEmulator({ port: 0 })]);
}, 60_000);
afterAll(async () => {
  killChildren();
  await emulator.close();
});
beforeEach(() => {
  emulator.mock.reset();
  temp = makeTempDir();
});
afterEach(() => temp.remove());

const env = () => ({ ...emulatorEnv(emulator), PUSH_APP_ID: DEMO_APP_ID });
const stored = () => emulator.mock.state.recordCount(DEMO_APP_ID);

type Report = Record<string, number | boolean | string | undefined>;

function reportOf(result: RunResult): Report {
  const lines = result.stdout.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  return JSON.parse(lines[0] as string) as Report;
}

/** sent + invalid + failed + unknown + filtered + skipped + not read = rows read, for a run that read its whole input. */
function expectEveryRowCounted(report: Report): void {
  const n = (key: string) => report[key] as number;
  const settled =
    n('recordsSent') +
    n('recordsInvalid') +
    n('recordsFailed') +
    n('recordsUnknown') +
    n('recordsFiltered') +
    n('recordsSkipped') +
    n('recordsNotRead');
  expect(settled, JSON.stringify(report)).toBe(n('rowsRead'));
  expect(report.inputComplete).toBe(true);
  expect(n('recordsNotRead'), 'a run that read its whole input and stopped for nothing leaves nothing unread').toBe(0);
}

function rejectsOf(
  path: string,
): { file: string; line: number; kind: string; reasons: { field: string; message: string }[] }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('a row too big for any request', () => {
  it('is an invalid row with its line and reason, exit 3, and a checkpointed re-run reports it again', async () => {
    const input = temp.path('in.csv');
    const rows = csvRows(3).split('\n');
    // Line 3 of the file (the header is line 1): a vendor no 200,000-byte request can carry.
    rows[1] = rows[1]?.replace(/Vendor \d/, 'V'.repeat(300_000)) as string;
    writeFileSync(input, `${CSV_HEADER}\n${rows.join('\n')}\n`);
    const rejects = temp.path('rj.jsonl');
    const checkpoint = temp.path('cp.json');
    const args = ['finance', 'publish', input, '--max-batch-bytes', '200000', '--rejects', rejects, '--json'];

    const first = await runCli(cli, [...args, '--checkpoint', checkpoint], { env: env() });
    const report = reportOf(first);
    expect(first.code, first.stderr).toBe(3);
    expect(report).toMatchObject({ ok: false, exitCode: 3, recordsSent: 2, recordsInvalid: 1, recordsValid: 2 });
    expectEveryRowCounted(report);
    expect(stored()).toBe(2);
    const [reject, ...others] = rejectsOf(rejects);
    expect(others).toEqual([]);
    expect(reject).toMatchObject({ file: input, line: 3, kind: 'invalid' });
    expect(reject?.reasons[0]?.message).toMatch(/record is \d+ bytes as JSON; .*exceed maxBatchBytes \(200000\)/);

    const again = await runCli(cli, [...args, '--checkpoint', checkpoint], { env: env() });
    const second = reportOf(again);
    expect(again.code, again.stderr).toBe(3);
    expect(second).toMatchObject({ recordsSent: 0, recordsSkipped: 2, recordsInvalid: 1 });
    expectEveryRowCounted(second);
    expect(rejectsOf(rejects)).toHaveLength(1);
    expect(stored()).toBe(2);
  }, 60_000);

  it('is invalid on a dry run too, with the same reason', async () => {
    const input = temp.path('in.csv');
    const rows = csvRows(3).split('\n');
    rows[1] = rows[1]?.replace(/Vendor \d/, 'V'.repeat(300_000)) as string;
    writeFileSync(input, `${CSV_HEADER}\n${rows.join('\n')}\n`);
    const rejects = temp.path('rj.jsonl');
    const args = ['finance', 'publish', input, '--dry-run', '--max-batch-bytes', '200000', '--rejects', rejects];
    const result = await runCli(cli, [...args, '--json'], { env: env() });
    expect(result.code, result.stderr).toBe(3);
    expect(reportOf(result)).toMatchObject({ recordsValid: 2, recordsInvalid: 1, rowsRead: 3 });
    const [reject] = rejectsOf(rejects);
    expect(reject).toMatchObject({ line: 3, kind: 'invalid' });
    expect(reject?.reasons[0]?.message).toMatch(/record is \d+ bytes as JSON; .*exceed maxBatchBytes \(200000\)/);
    expect(stored()).toBe(0);
  }, 60_000);

  it('from a transform over the default 5 MiB is invalid too, and the rows after it are sent', async () => {
    const input = temp.path('in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(4)}\n`);
    const transform = temp.path('big.mjs');
    writeFileSync(
      transform,
      `export default (row, { line }) => ({ ...row, amount: Number(row.amount), created: Number(row.created),
        ...(line === 3 && { vendor: 'x'.repeat(6 * 1024 * 1024) }) });\n`,
    );
    const rejects = temp.path('rj.jsonl');
    const result = await runCli(
      cli,
      ['finance', 'publish', input, '--transform', transform, '--rejects', rejects, '--json'],
      { env: env(), timeoutMs: 40_000 },
    );
    const report = reportOf(result);
    expect(result.code, result.stderr).toBe(3);
    expect(report).toMatchObject({ recordsSent: 3, recordsInvalid: 1 });
    expectEveryRowCounted(report);
    expect(rejectsOf(rejects).map((entry) => [entry.line, entry.kind])).toEqual([[3, 'invalid']]);
  }, 60_000);
});

describe('a transform returning what JSON cannot hold', () => {
  it('makes that row invalid, naming the field, and the run goes on', async () => {
    const input = temp.path('in.csv');
    writeFileSync(input, `${CSV_HEADER}\n${csvRows(5)}\n`);
    const transform = temp.path('odd.mjs');
    writeFileSync(
      transform,
      `export default (row, { line }) => {
        const record = { ...row, amount: Number(row.amount), created: Number(row.created) };
        if (line === 2) record.self = record;
        if (line === 3) record.amount = 10n;
        if (line === 4) record.meta = { n: 2n ** 64n };
        return record;
      };\n`,
    );
    const rejects = temp.path('rj.jsonl');
    const result = await runCli(
      cli,
      ['finance', 'publish', input, '--transform', transform, '--rejects', rejects, '--json'],
      { env: env() },
    );
    const report = reportOf(result);
    expect(result.code, result.stderr).toBe(3);
    expect(report).toMatchObject({ recordsSent: 2, recordsInvalid: 3 });
    expectEveryRowCounted(report);
    expect(stored()).toBe(2);
    const entries = rejectsOf(rejects);
    expect(entries.map((entry) => [entry.line, entry.reasons.map((reason) => reason.field)])).toEqual([
      [2, ['self']],
      [3, ['amount']],
      [4, ['meta']],
    ]);
    // The CLI copies what the transform returned: `self` is the transform's object, whose own `self` closes the cycle.
    expect(JSON.stringify((entries[0] as unknown as { record: unknown }).record)).toContain('"self":"[Circular]"');
    expect((entries[1] as unknown as { record: { amount: string } }).record.amount).toBe('10');
  }, 60_000);
});
