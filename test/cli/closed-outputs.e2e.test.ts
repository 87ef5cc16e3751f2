/**
 * A reader of the CLI's stdout or stderr that goes away mid-run (`push-api … 2>&1 | head -n 2`, a
 * log shipper that restarts): the run goes on to its ordered end, writes its files and exits with
 * the code it would have had, instead of dying at its next line of output.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const VALID = 200;

/** 200 valid rows and one invalid one, sent 20 at a time and slowly enough for the reader to leave first. */
function slowRun(extra: string[]) {
  writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(VALID)}\nnot a date,1,USD,x,expense,V,bad\n`);
  ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 50, times: Infinity });
  const args = [
    'finance',
    'publish',
    '--app',
    DEMO_APP_ID,
    '--batch-size',
    '20',
    '--concurrency',
    '1',
    '--rejects',
    ctx.temp.path('rejects.jsonl'),
    '--checkpoint',
    ctx.temp.path('cp.json'),
    ...extra,
    ctx.temp.path('in.csv'),
  ];
  return startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
}

function expectFilesOfAFinishedRun(): void {
  expect(ctx.emulator.mock.state.records(DEMO_APP_ID)).toHaveLength(VALID);
  const rejects = readFileSync(ctx.temp.path('rejects.jsonl'), 'utf8').trim().split('\n');
  expect(rejects.map((line) => JSON.parse(line).kind)).toEqual(['invalid']);
  const checkpoint = JSON.parse(readFileSync(ctx.temp.path('cp.json'), 'utf8'));
  expect(checkpoint).toMatchObject({ delivered: [[0, VALID]], inFlight: [], complete: true });
  expect(existsSync(ctx.temp.path('cp.json.lock'))).toBe(false);
}

it('finishes the run with its report, files and exit code when the stderr reader goes away', async () => {
  const run = slowRun(['--json', '--verbose']);
  // The first --verbose line arrives, then the reader leaves: every later line meets a closed pipe.
  run.child.stderr?.once('data', () => run.child.stderr?.destroy());
  const result = await run.done;
  expect(result.code).toBe(3);
  const lines = result.stdout.split('\n').filter((line) => line.length > 0);
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0] as string)).toMatchObject({
    ok: false,
    exitCode: 3,
    recordsSent: VALID,
    recordsInvalid: 1,
    stopped: false,
    inputComplete: true,
  });
  expectFilesOfAFinishedRun();
});

it('finishes the run with its files and exit code when the one reader of stdout and stderr goes away', async () => {
  // As `push-api … 2>&1 | head -n 1`: a plain progress line, then the summary, meet closed pipes.
  const run = slowRun(['--verbose']);
  run.child.stdout?.destroy();
  run.child.stderr?.once('data', () => run.child.stderr?.destroy());
  const result = await run.done;
  expect(result.code).toBe(3);
  expectFilesOfAFinishedRun();
});

it('says once on stderr that the report is lost when stdout is a full disk, and keeps its exit code and files', async () => {
  // /dev/full answers every write with ENOSPC, as a redirect (`--json > report.json`) to a full disk does.
  const full = openSync('/dev/full', 'w');
  writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(VALID)}\nnot a date,1,USD,x,expense,V,bad\n`);
  const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20'];
  const files = ['--rejects', ctx.temp.path('rejects.jsonl'), '--checkpoint', ctx.temp.path('cp.json')];
  const child = spawn(process.execPath, [ctx.cli, ...args, ...files, ctx.temp.path('in.csv')], {
    env: { PATH: process.env.PATH ?? '', ...emulatorEnv(ctx.emulator) },
    stdio: ['ignore', full, 'pipe'],
    timeout: 30_000,
  });
  closeSync(full);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = (await once(child, 'close')) as [number | null];
  expect(code).toBe(3);
  const notes = stderr.split('\n').filter((line) => line.startsWith('push-api: stdout could not be written'));
  expect(notes).toEqual([
    'push-api: stdout could not be written (ENOSPC): what the run printed there is lost (with --json, its report); the exit code and the files written say how it ended',
  ]);
  expectFilesOfAFinishedRun();
});

it('says nothing of a lost report when the reader of stdout went away by itself', async () => {
  const run = slowRun(['--json']);
  run.child.stdout?.destroy();
  const result = await run.done;
  expect(result.code).toBe(3);
  expect(result.stderr).not.toContain('stdout could not be written');
  expectFilesOfAFinishedRun();
});
