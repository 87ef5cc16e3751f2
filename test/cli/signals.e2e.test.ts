import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, type RunResult, runCli, startCli } from '../support/cli/run.js';

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
 * test/support/signal-probe.mjs, preloaded into each CLI process: it writes a marker file when the
 * CLI adds its listener for a signal. Checked just before the signal is sent, the marker tells a
 * run that Node's own start-up could still end by the signal from one the CLI must handle,
 * whatever the machine's load.
 */
const SIGNAL_PROBE = resolve(import.meta.dirname, '../support/signal-probe.mjs');

/**
 * Every run whose signal found the CLI's handler installed ended with 130, never by the signal;
 * and the sweep reached that point at least once, so the handled path was tried.
 */
function expectHandledOnceInstalled(outcomes: Outcome[]): void {
  const killedAnyway = outcomes.flatMap((outcome, i) => (outcome.handlerInstalled && outcome.beforeStart ? [i] : []));
  expect(killedAnyway, 'runs killed by the signal although their handler was installed').toEqual([]);
  expect(outcomes.some((outcome) => outcome.handlerInstalled)).toBe(true);
}

interface Outcome {
  result: RunResult;
  /** Ended by the signal before any of the CLI's code ran (Node's own start-up). */
  beforeStart: boolean;
  /** The CLI's handler for the signal was installed when it was sent. */
  handlerInstalled?: boolean;
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
  const marker = ctx.temp.path(`probe-${Math.random().toString(36).slice(2)}`);
  const env = { ...emulatorEnv(ctx.emulator), SIGNAL_PROBE_FILE: marker, NODE_OPTIONS: `--import "${SIGNAL_PROBE}"` };
  const run = startCli(ctx.cli, args, { env, timeoutMs: 20_000 });
  if (typeof moment === 'number') await sleep(moment);
  else await moment();
  const handlerInstalled = existsSync(`${marker}.${signal}`);
  run.child.kill(signal);
  if (options.second) {
    await sleep(20);
    run.child.kill(options.second);
  }
  return { ...judge(await run.done, options.json, requestsBefore), handlerInstalled };
}

/**
 * A moment for `signalAfter`: resolves once the emulator has received a request of `operation`
 * made after this call (a batch or a file on its way), or after 10 s, whichever comes first.
 */
function whenRequested(operation: string): () => Promise<void> {
  const state = ctx.emulator.mock.state;
  const since = state.requests.length;
  return async () => {
    const deadline = Date.now() + 10_000;
    while (!state.requests.slice(since).some((r) => r.operation === operation) && Date.now() < deadline) {
      await sleep(1);
    }
  };
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

/** Resolves once the process has `path` open (it is being fingerprinted or read); throws after 30 s. */
async function whenOpen(pid: () => number | undefined, path: string): Promise<void> {
  const deadline = Date.now() + 30_000;
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
  throw new Error(`the CLI did not open ${path} within 30 s`);
}

describe('a signal at any moment of push-api finance publish', () => {
  it.each([
    ['SIGTERM', true],
    ['SIGINT', false],
  ] as const)(
    '%s after 0 to 900 ms and once a batch is sent, some followed by a second (--json: %s): exit 130, one JSON object, never killed once started',
    async (signal, json) => {
      writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(400)}\n`);
      ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 150, times: Infinity });
      const outcomes: Outcome[] = [];
      for (const [i, delay] of SWEEP_MS.entries()) {
        // Every other run gets a second signal 20 ms later, often while the first is being handled.
        const second = i % 2 === 1 ? signal : undefined;
        outcomes.push(await signalAfter(publishArgs(json), delay, signal, { json, second }));
      }
      // And once a batch is on its way, however long a loaded machine took to get there.
      outcomes.push(await signalAfter(publishArgs(json), whenRequested('finance'), signal, { json }));
      expectHandledOnceInstalled(outcomes);
      // The last moment stopped a run that was sending: the report says what was delivered.
      const last = outcomes.at(-1) as Outcome;
      expect(last.beforeStart).toBe(false);
      if (json) expect(JSON.parse(last.result.stdout)).toMatchObject({ interrupted: true, recordsFailed: 0 });
    },
    60_000,
  );

  it('SIGHUP (a closed terminal, a supervisor) stops a sending run in order like SIGTERM: exit 130, one object, files written, lock released', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(400)}\n`);
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const checkpoint = ctx.temp.path('hup.json');
    const rejects = ctx.temp.path('hup.rejects.jsonl');
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20', '--concurrency', '2'];
    const run = startCli(
      ctx.cli,
      [...args, '--checkpoint', checkpoint, '--rejects', rejects, ctx.temp.path('in.csv')],
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    await expect
      .poll(() => ctx.emulator.mock.state.recordCount(DEMO_APP_ID), { timeout: 20_000, interval: 5 })
      .toBeGreaterThan(0);
    run.child.kill('SIGHUP');
    const result = await run.done;
    expect(judge(result, true, 0).beforeStart).toBe(false);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ interrupted: true, recordsUnknown: 0 });
    expect(report.recordsSent).toBe(ctx.emulator.mock.state.recordCount(DEMO_APP_ID));
    expect(existsSync(rejects)).toBe(true);
    expect(JSON.parse(readFileSync(checkpoint, 'utf8'))).toMatchObject({ inFlight: [], complete: false });
    expect(existsSync(`${checkpoint}.lock`)).toBe(false);
  }, 30_000);

  it('SIGTERM while batches wait out a Retry-After ends within seconds (a Kubernetes grace period), and the re-run sends them once', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(200)}\n`);
    // The service answers 503 and asks for 20 s: waiting that out would outlast a 30 s grace period with two retries.
    const refusing = ctx.emulator.mock.faults.add({
      match: { operation: 'finance' },
      status: 503,
      retryAfter: 20,
      times: Infinity,
    });
    const checkpoint = ctx.temp.path('grace.json');
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20', '--concurrency', '2'];
    const argv = [...args, '--checkpoint', checkpoint, ctx.temp.path('in.csv')];
    const env = emulatorEnv(ctx.emulator);
    const run = startCli(ctx.cli, argv, { env });
    await expect.poll(() => refusing.hits, { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    const signalled = performance.now();
    run.child.kill('SIGTERM');
    const result = await run.done;
    expect(performance.now() - signalled).toBeLessThan(5_000);
    expect(judge(result, true, 0).beforeStart).toBe(false);
    // Refused, so not stored: failed, never unknown, and the checkpoint has nothing in flight.
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ interrupted: true, recordsSent: 0, recordsUnknown: 0 });
    expect(report.recordsFailed).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(checkpoint, 'utf8'))).toMatchObject({ inFlight: [], unknown: [] });

    ctx.emulator.mock.faults.clear();
    const again = await runCli(ctx.cli, argv, { env });
    expect(again.code).toBe(0);
    const ids = ctx.emulator.mock.state.records(DEMO_APP_ID).map((record) => record.created);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
  }, 60_000);

  it('SIGTERM while a file waits out a Retry-After ends the upload within seconds: that file failed, the rest not started', async () => {
    for (const name of ['a.csv', 'b.csv', 'c.csv'])
      writeFileSync(ctx.temp.path(name), `${CSV_HEADER}\n${csvRows(5)}\n`);
    const refusing = ctx.emulator.mock.faults.add({
      match: { operation: 'upload' },
      status: 503,
      retryAfter: 20,
      times: Infinity,
    });
    const files = ['a.csv', 'b.csv', 'c.csv'].map((name) => ctx.temp.path(name));
    const argv = ['upload', '--app', DEMO_APP_ID, '--type', 'users', '--json', '--concurrency', '1', ...files];
    const run = startCli(ctx.cli, argv, { env: emulatorEnv(ctx.emulator) });
    await expect.poll(() => refusing.hits, { timeout: 20_000, interval: 5 }).toBe(1);
    const signalled = performance.now();
    run.child.kill('SIGTERM');
    const result = await run.done;
    expect(performance.now() - signalled).toBeLessThan(5_000);
    expect(judge(result, true, 0).beforeStart).toBe(false);
    expect(JSON.parse(result.stdout)).toMatchObject({
      interrupted: true,
      stopped: false,
      filesUploaded: 0,
      filesFailed: 1,
      filesNotStarted: 2,
    });
    expect(refusing.hits).toBe(1);
  }, 60_000);

  it('--stop-timeout aborts the requests still in flight that long after SIGTERM: the run ends, reports and releases its lock before a SIGKILL', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(200)}\n`);
    // A service that takes 20 s to answer: a 10 s grace period (docker stop) would end in SIGKILL.
    const held = ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 20_000, times: Infinity });
    const checkpoint = ctx.temp.path('stop-timeout.json');
    const args = ['finance', 'publish', '--app', DEMO_APP_ID, '--json', '--batch-size', '20', '--concurrency', '2'];
    const argv = [...args, '--stop-timeout', '2', '--checkpoint', checkpoint, ctx.temp.path('in.csv')];
    const run = startCli(ctx.cli, argv, { env: emulatorEnv(ctx.emulator) });
    await expect.poll(() => held.hits, { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    const signalled = performance.now();
    run.child.kill('SIGTERM');
    const result = await run.done;
    const elapsed = performance.now() - signalled;
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(8_000);
    expect(judge(result, true, 0).beforeStart).toBe(false);
    expect(result.stderr).toContain('--stop-timeout: 2 s since the signal; aborting in-flight requests');
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ interrupted: true, recordsSent: 0 });
    expect(report.recordsUnknown).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(checkpoint, 'utf8'))).toMatchObject({ inFlight: [] });
    expect(existsSync(`${checkpoint}.lock`)).toBe(false);
  }, 60_000);

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
    const held = ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 2000, times: Infinity });
    const args = publishArgs(true);
    const run = startCli(ctx.cli, args, { env: emulatorEnv(ctx.emulator) });
    // The fault counts a request as it arrives; the request log takes its entry only when the
    // answer leaves, 2 s later. So: a batch has reached the service and none has been answered.
    await expect.poll(() => held.hits, { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    expect(ctx.emulator.mock.state.requests.some((r) => r.operation === 'finance')).toBe(false);
    run.child.kill('SIGTERM');
    await sleep(30);
    run.child.kill('SIGTERM');
    await sleep(30);
    run.child.kill('SIGINT');
    const result = await run.done;
    const outcome = judge(result, true, 0);
    expect(outcome.beforeStart).toBe(false);
    const report = JSON.parse(result.stdout) as { recordsUnknown: number; recordsSent: number };
    // The batches in flight at the second signal: aborted, so their outcome is unknown (had they
    // been left to finish, they would count as sent).
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
    '%s after 0 to 900 ms and once a file is sent (--json: %s): exit 130, one JSON object',
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
      // And once a file is on its way, however long a loaded machine took to get there: the
      // command's own report, not the early one of a run still starting.
      outcomes.push(await signalAfter([...args, `${ctx.temp.dir}/f*.csv`], whenRequested('upload'), signal, { json }));
      expectHandledOnceInstalled(outcomes);
      const last = outcomes.at(-1) as Outcome;
      expect(last.beforeStart).toBe(false);
      if (json) expect(JSON.parse(last.result.stdout)).toMatchObject({ command: 'upload', interrupted: true });
    },
    60_000,
  );
});
