/**
 * The disk refuses the checkpoint or the rejects file after records were sent (full, read-only,
 * gone): the run stops in order with exit 1 and one report with its counts, writes what it still
 * can, and names the file that failed; never exit 2 ("nothing was sent") nor an unexpected error.
 * A disk that refuses before the run is the other way round: exit 2, nothing sent.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { expect, it } from 'vitest';
import { expectRefusedBeforeSending, useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const VALID = 400;

function stored(): number {
  return ctx.emulator.mock.state.records(DEMO_APP_ID).length;
}

async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition() && Date.now() < deadline) await sleep(5);
}

/** 400 valid rows and one invalid one, 20 to a batch, one batch at a time and slowly. */
function slowRun(checkpoint: string, rejects: string) {
  writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\nnot a date,1,USD,x,expense,V,bad\n${csvRows(VALID)}\n`);
  ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 40, times: Infinity });
  const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20', '--concurrency', '1'];
  args.push('--checkpoint', checkpoint, '--rejects', rejects, ctx.temp.path('in.csv'));
  return startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
}

function onlyReport(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((line) => line.length > 0);
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

it('stops in order with exit 1, its counts and the rejects file when the checkpoint cannot be written mid-run', async () => {
  mkdirSync(ctx.temp.path('state'));
  const run = slowRun(ctx.temp.path('state/cp.json'), ctx.temp.path('rejects.jsonl'));
  await waitUntil(() => stored() >= 60);
  // The checkpoint's directory goes away under the run, as a disk that refuses every new file.
  renameSync(ctx.temp.path('state'), ctx.temp.path('state-moved'));
  const result = await run.done;

  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 1 });
  const report = onlyReport(result.stdout);
  expect(report).toMatchObject({ ok: false, exitCode: 1, stopped: true, recordsInvalid: 1 });
  expect(report.error).toMatchObject({ name: 'UnwritableOutputError' });
  expect((report.error as { message: string }).message).toContain('--checkpoint');
  expect(report.recordsSent).toBe(stored());
  expect(result.stderr).toContain('--checkpoint');
  // Written although the checkpoint failed: it holds the invalid row.
  const rejects = readFileSync(ctx.temp.path('rejects.jsonl'), 'utf8').trim().split('\n');
  expect(rejects.map((line) => JSON.parse(line).kind)).toContain('invalid');
  // What reached the disk accounts for every stored record: delivered, or reserved in flight.
  const checkpoint = JSON.parse(readFileSync(ctx.temp.path('state-moved/cp.json'), 'utf8'));
  const accounted = [...checkpoint.delivered, ...checkpoint.inFlight].reduce(
    (sum: number, [start, end]: [number, number]) => sum + end - start,
    0,
  );
  expect(accounted).toBeGreaterThanOrEqual(stored());
  expect(checkpoint.complete).toBe(false);
});

it('stops in order with exit 1 and its counts when the rejects file cannot be put in place at the end', async () => {
  const rejectsPath = ctx.temp.path('rejects.jsonl');
  const run = slowRun(ctx.temp.path('cp.json'), rejectsPath);
  await waitUntil(() => stored() >= 60);
  // Something takes the rejects file's name (the empty file holding it goes): renaming the
  // finished file over it fails.
  rmSync(rejectsPath);
  mkdirSync(rejectsPath);
  writeFileSync(`${rejectsPath}/occupied`, '');
  const result = await run.done;

  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 1 });
  const report = onlyReport(result.stdout);
  expect(report).toMatchObject({
    ok: false,
    exitCode: 1,
    stopped: true,
    recordsSent: VALID,
    recordsInvalid: 1,
    inputComplete: true,
  });
  expect(report.rejectsFile).toBeUndefined();
  expect(report.error).toMatchObject({ name: 'UnwritableOutputError' });
  expect((report.error as { message: string }).message).toContain('--rejects');
  expect(result.stderr).not.toContain('unexpected error');
  expect(stored()).toBe(VALID);
  expect(existsSync(ctx.temp.path('cp.json.lock'))).toBe(false);
});

it.each(['--checkpoint', '--rejects'])(
  'a disk that takes no bytes before the run (full, or a file size limit) refuses %s with exit 2 naming the file, nothing sent',
  async (option) => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(10)}\n`);
    // `ulimit -f 0`: every write to a file fails with EFBIG, as ENOSPC would on a full disk (Node
    // ignores SIGXFSZ). The lock is the first file the run writes.
    const node = ctx.temp.path('node-no-file-bytes.sh');
    writeFileSync(node, `#!/bin/sh\nulimit -f 0\nexec "${process.execPath}" "$@"\n`);
    chmodSync(node, 0o755);
    mkdirSync(ctx.temp.path('out'));
    const target = ctx.temp.path(option === '--checkpoint' ? 'out/cp.json' : 'out/rejects.jsonl');
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, option, target, ctx.temp.path('in.csv')];
    const result = await startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator), node }).done;

    expect(result.stderr).not.toContain('unexpected error');
    expectRefusedBeforeSending(
      result,
      new RegExp(`${option} \\S*out/\\S+: cannot write there \\(EFBIG\\)`),
      ctx.emulator,
    );
    // No lock, no temporary file left behind.
    expect(readdirSync(ctx.temp.path('out'))).toEqual([]);
  },
);
