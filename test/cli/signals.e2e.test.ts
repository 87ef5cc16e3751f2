import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, type RunResult, startCli } from '../support/cli/run.js';

/**
 * Real CLI processes receiving real SIGINT and SIGTERM at many moments: from the first
 * milliseconds (Node still starting, the program loading, settings and inputs being read, the
 * input being fingerprinted) to the middle of the run. Whatever the moment, the run ends with
 * exit 130 and, under `--json`, exactly one JSON object on stdout.
 *
 * One moment is out of any Node program's reach: Node's own start-up, before the first line of
 * the CLI runs. A signal then ends the process by the signal before it has read or printed
 * anything; such runs are counted and must have left no trace at all (no output, no request).
 */

const ctx = useCliFixture();

/** Delays after spawning at which a signal is sent: the first ones land while the CLI is starting. */
const SWEEP_MS = [0, 10, 25, 40, 55, 70, 85, 100, 120, 140, 170, 200, 250, 330, 450, 650, 900];

/**
 * How long Node takes, on this machine and under its present load, from being spawned to running
 * the first line of a script: the median of a few runs of a one-line script.
 */
async function nodeStartMs(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const child = spawn(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((resolve) => child.on('close', resolve));
    times.push(Number(out) - started);
  }
  return times.sort((a, b) => a - b)[1] as number;
}

/**
 * Every run whose signal came well after Node's start-up ended with 130: a generous margin (three
 * times the measured start-up, plus 50 ms, at most 850 ms) keeps a busy machine from failing the
 * test by chance.
 */
async function expectHandledAfterStartUp(delays: number[], outcomes: Outcome[]): Promise<void> {
  const margin = Math.min(3 * (await nodeStartMs()) + 50, 850);
  const killedLate = delays.filter((delay, i) => delay >= margin && outcomes[i]?.beforeStart);
  expect(killedLate, `killed by the signal although sent after ${margin} ms`).toEqual([]);
  expect(delays.some((delay) => delay >= margin)).toBe(true);
}

interface Outcome {
  result: RunResult;
  /** Ended by the signal before any of the CLI's code ran (Node's own start-up). */
  beforeStart: boolean;
}

function judge(result: RunResult, json: boolean, requestsBefore: number): Outcome {
  if (result.signal !== null) {
    // Only possible before the CLI's entry point installed its handlers: nothing may have happened.
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('');
    expect(ctx.emulator.mock.state.requests.length).toBe(requestsBefore);
    return { result, beforeStart: true };
  }
  expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 130 });
  if (json) {
    const lines = result.stdout.split('\n').filter((line) => line.length > 0);
    expect(lines, result.stdout).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ ok: false, exitCode: 130, interrupted: true });
  }
  return { result, beforeStart: false };
}

async function signalAfter(
  args: string[],
  moment: number | (() => Promise<void>),
  signal: NodeJS.Signals,
  options: { second?: NodeJS.Signals; json: boolean },
): Promise<Outcome> {
  const requestsBefore = ctx.emulator.mock.state.requests.length;
  const run = startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator), timeoutMs: 20_000 });
  if (typeof moment === 'number') await sleep(moment);
  else await moment();
  run.child.kill(signal);
  if (options.second) {
    await sleep(20);
    run.child.kill(options.second);
  }
  return judge(await run.done, options.json, requestsBefore);
}

function publishArgs(json: boolean, extra: string[] = []): string[] {
  return [
    'finance',
    'publish',
    '--app',
    DEMO_APP_ID,
    '--batch-size',
    '20',
    '--concurrency',
    '2',
    ...(json ? ['--json'] : []),
    '--checkpoint',
    ctx.temp.path(`cp-${Math.random().toString(36).slice(2)}.json`),
    ...extra,
    ctx.temp.path('in.csv'),
  ];
}

/** Resolves once the process has `path` open (it is being fingerprinted or read), or after 10 s. */
async function whenOpen(pid: () => number | undefined, path: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const id = pid();
    if (id !== undefined) {
      try {
        for (const fd of readdirSync(`/proc/${id}/fd`)) {
          if (readlinkSync(`/proc/${id}/fd/${fd}`) === path) return;
        }
      } catch {
        // The process is starting or gone; /proc says so by throwing.
      }
    }
    await sleep(1);
  }
}

describe('a signal at any moment of push-api finance publish', () => {
  it.each([
    ['SIGTERM', true],
    ['SIGINT', false],
  ] as const)(
    '%s after 0 to 900 ms, some followed by a second (--json: %s): exit 130, one JSON object, never killed once started',
    async (signal, json) => {
      writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(400)}\n`);
      ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 150, times: Infinity });
      const outcomes: Outcome[] = [];
      for (const [i, delay] of SWEEP_MS.entries()) {
        // Every other run gets a second signal 20 ms later, often while the first is being handled.
        const second = i % 2 === 1 ? signal : undefined;
        outcomes.push(await signalAfter(publishArgs(json), delay, signal, { json, second }));
      }
      await expectHandledAfterStartUp(SWEEP_MS, outcomes);
      // The late moments stopped a run that was sending: the report says what was delivered.
      const last = outcomes.at(-1) as Outcome;
      if (json) expect(JSON.parse(last.result.stdout)).toMatchObject({ interrupted: true, recordsFailed: 0 });
    },
    60_000,
  );

  it('a signal while the input is being fingerprinted ends the run with 130 and one object, no checkpoint written', async () => {
    // Large enough that hashing it takes a while, so the signal lands before the checkpoint opens.
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(400_000)}\n`);
    let earlyStops = 0;
    for (let attempt = 0; attempt < 3; attempt++) {
      const checkpoint = ctx.temp.path(`fp-${attempt}.json`);
      const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--checkpoint', checkpoint];
      const requestsBefore = ctx.emulator.mock.state.requests.length;
      const run = startCli(ctx.cli, [...args, ctx.temp.path('in.csv')], { env: emulatorEnv(ctx.emulator) });
      await whenOpen(() => run.child.pid, ctx.temp.path('in.csv'));
      run.child.kill('SIGTERM');
      const outcome = judge(await run.done, true, requestsBefore);
      expect(outcome.beforeStart).toBe(false);
      if (!existsSync(checkpoint)) {
        earlyStops++;
        expect(JSON.parse(outcome.result.stdout)).toMatchObject({ error: { name: 'InterruptedError' } });
        expect(ctx.emulator.mock.state.records(DEMO_APP_ID)).toHaveLength(0);
      }
    }
    expect(earlyStops).toBeGreaterThan(0);
  }, 60_000);

  it('a second and a third signal during shutdown: still exit 130 and one object, in-flight batches aborted', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(200)}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 2000, times: Infinity });
    const args = publishArgs(true);
    const run = startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
    // The request log takes an entry when its answer leaves, so a finance request held by the
    // fault shows only after 2 s: wait for the token instead, then for the batches to be on their way.
    const deadline = Date.now() + 10_000;
    while (!ctx.emulator.mock.state.requests.some((r) => r.operation === 'token') && Date.now() < deadline) {
      await sleep(5);
    }
    await sleep(400);
    expect(ctx.emulator.mock.state.requests.some((r) => r.operation === 'finance')).toBe(false);
    const started = Date.now();
    run.child.kill('SIGTERM');
    await sleep(30);
    run.child.kill('SIGTERM');
    await sleep(30);
    run.child.kill('SIGINT');
    const result = await run.done;
    const outcome = judge(result, true, 0);
    expect(outcome.beforeStart).toBe(false);
    // The second signal aborted the batches that would have taken 2 s more.
    expect(Date.now() - started).toBeLessThan(1800);
    const report = JSON.parse(result.stdout) as { recordsUnknown: number; recordsSent: number };
    // The batches in flight at the second signal: aborted, so their outcome is unknown.
    expect(report.recordsUnknown).toBeGreaterThan(0);
    expect(report.recordsUnknown).toBeLessThanOrEqual(2 * 20);
    expect(result.stderr).toMatch(/aborting in-flight requests/);
  }, 30_000);

  it('signals sent the moment the first batch reaches the service, and while records are stored, give 130', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(200)}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const state = ctx.emulator.mock.state;
    const triggers: [string, (requests: number, records: number) => boolean][] = [
      ['token requested', (requests) => state.requests.slice(requests).some((r) => r.operation === 'token')],
      ['first batch received', (requests) => state.requests.slice(requests).some((r) => r.operation === 'finance')],
      ['40 records stored', (_, records) => state.recordCount(DEMO_APP_ID) >= records + 40],
    ];
    for (const [name, reachedSince] of triggers) {
      const requests = state.requests.length;
      const records = state.recordCount(DEMO_APP_ID);
      const reached = () => reachedSince(requests, records);
      const outcome = await signalAfter(
        publishArgs(true),
        async () => {
          const deadline = Date.now() + 10_000;
          while (!reached() && Date.now() < deadline) await sleep(1);
          expect(reached(), name).toBe(true);
        },
        'SIGTERM',
        { json: true },
      );
      expect(outcome.beforeStart, name).toBe(false);
    }
  }, 60_000);
});

describe('a signal at any moment of push-api upload', () => {
  it('signals sent when the upload addresses are asked for, and when the first file is stored, give 130', async () => {
    for (let i = 0; i < 6; i++) writeFileSync(ctx.temp.path(`g${i}.csv`), 'y'.repeat(32 * 1024));
    ctx.emulator.mock.faults.add({ match: { operation: 'upload' }, delayMs: 300, times: Infinity });
    const state = ctx.emulator.mock.state;
    const triggers: [string, (requests: number) => boolean][] = [
      [
        'upload addresses asked for',
        (requests) => state.requests.slice(requests).some((r) => r.operation === 'upload-urls'),
      ],
      ['first file stored', (requests) => state.requests.slice(requests).some((r) => r.operation === 'upload')],
    ];
    for (const [name, reachedSince] of triggers) {
      const requests = state.requests.length;
      const args = ['upload', '--app', DEMO_APP_ID, '--type', 'users', '--concurrency', '2', '--json'];
      const outcome = await signalAfter(
        [...args, `${ctx.temp.dir}/g*.csv`],
        async () => {
          const deadline = Date.now() + 10_000;
          while (!reachedSince(requests) && Date.now() < deadline) await sleep(1);
          expect(reachedSince(requests), name).toBe(true);
        },
        'SIGINT',
        { json: true },
      );
      expect(outcome.beforeStart, name).toBe(false);
      const report = JSON.parse(outcome.result.stdout) as { files: { status: string }[] };
      // Files in flight finish; no file is started after the signal.
      expect(
        report.files.some((file) => file.status === 'not-started'),
        name,
      ).toBe(true);
    }
  }, 60_000);

  it.each([
    ['SIGTERM', true],
    ['SIGINT', false],
  ] as const)(
    '%s after 0 to 900 ms (--json: %s): exit 130, one JSON object',
    async (signal, json) => {
      for (let i = 0; i < 8; i++) writeFileSync(ctx.temp.path(`f${i}.csv`), 'x'.repeat(64 * 1024));
      ctx.emulator.mock.faults.add({ match: { operation: 'upload' }, delayMs: 500, times: Infinity });
      const args = [
        'upload',
        '--app',
        DEMO_APP_ID,
        '--type',
        'users',
        '--concurrency',
        '2',
        ...(json ? ['--json'] : []),
      ];
      const outcomes: Outcome[] = [];
      for (const delay of SWEEP_MS) {
        outcomes.push(await signalAfter([...args, `${ctx.temp.dir}/f*.csv`], delay, signal, { json }));
      }
      await expectHandledAfterStartUp(SWEEP_MS, outcomes);
      const last = outcomes.at(-1) as Outcome;
      if (json) expect(JSON.parse(last.result.stdout)).toMatchObject({ command: 'upload', interrupted: true });
    },
    60_000,
  );
});
