/**
 * One run per checkpoint: real CLI processes racing for, crashing with, and inheriting the lock of
 * a checkpoint file, against the emulator.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv, runCli, startCli } from '../support/cli/run.js';

const ctx = useCliFixture();
const TOTAL = 200;

/** A publish of in.csv in batches of 20, with the given options. */
function publishArgs(...options: string[]): string[] {
  return ['finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '20', ...options, ctx.temp.path('in.csv')];
}

function args(checkpoint: string, ...extra: string[]): string[] {
  return publishArgs('--checkpoint', checkpoint, ...extra);
}

function prepare(): { checkpoint: string; lock: string } {
  writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(TOTAL)}\n`);
  const checkpoint = ctx.temp.path('cp.json');
  return { checkpoint, lock: `${checkpoint}.lock` };
}

/** The pid of a process that has ended: nothing runs under it (until the system reuses it). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid as number;
}

function storedIds(): number[] {
  return ctx.emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created));
}

function startProcess(command: string, argv: string[]): Promise<number | null> {
  const child = spawn(command, argv, {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return new Promise((resolve) => child.on('close', resolve));
}

async function waitFor(condition: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms for ${condition}`);
    await sleep(20);
  }
}

describe('one run per checkpoint', () => {
  it('refuses a second run on the same checkpoint (through a link) with exit 2 naming the holder', async () => {
    const { checkpoint, lock } = prepare();
    // One slow batch at a time: the first run is still sending (and holding the lock) for about 10 s,
    // however long the second process takes to start on a loaded machine.
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 1000, times: Infinity });
    const env = emulatorEnv(ctx.emulator);
    const first = startCli(ctx.cli, args(checkpoint, '--json', '--concurrency', '1'), { env });
    await waitFor(() => ctx.emulator.mock.state.recordCount(DEMO_APP_ID) > 0);
    expect(existsSync(lock)).toBe(true);
    symlinkSync(checkpoint, ctx.temp.path('cp-link.json'));
    const tokensBefore = ctx.emulator.mock.state.tokenRequestCount;
    const second = await runCli(ctx.cli, args(ctx.temp.path('cp-link.json'), '--json'), { env });
    expect(second.code).toBe(2);
    const since = JSON.parse(readFileSync(lock, 'utf8')).since as string;
    expect(second.stderr).toContain(
      `is in use by another push-api run (pid ${first.child.pid} on ${hostname()}, since ${since}); wait for it to end`,
    );
    expect(JSON.parse(second.stdout)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError' } });
    // The second run asked for no token.
    expect(ctx.emulator.mock.state.tokenRequestCount).toBe(tokensBefore);

    ctx.emulator.mock.faults.clear();
    const done = await first.done;
    expect(done.code).toBe(0);
    const ids = storedIds();
    expect(ids).toHaveLength(TOTAL);
    expect(new Set(ids).size).toBe(TOTAL);
    expect(existsSync(lock)).toBe(false);
  }, 30_000);

  it("refuses a second run writing the same rejects file, so the first run's rejects are kept", async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(TOTAL)}\nbad-row\n`);
    const rejects = ctx.temp.path('rejects.jsonl');
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 1000, times: Infinity });
    const env = emulatorEnv(ctx.emulator);
    const publish = (...extra: string[]) => publishArgs('--rejects', rejects, ...extra);
    // No checkpoint on either run: the rejects file alone must keep them apart.
    const first = startCli(ctx.cli, publish('--concurrency', '1'), { env });
    await waitFor(() => ctx.emulator.mock.state.recordCount(DEMO_APP_ID) > 0);
    expect(existsSync(`${rejects}.lock`)).toBe(true);
    const second = await runCli(ctx.cli, publish('--json'), { env });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `--rejects ${rejects} is in use by another push-api run (pid ${first.child.pid} on`,
    );

    ctx.emulator.mock.faults.clear();
    const done = await first.done;
    expect(done.code).toBe(3);
    const entries = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'invalid', line: TOTAL + 2 });
    expect(existsSync(`${rejects}.lock`)).toBe(false);
  }, 30_000);

  it('takes over the lock a SIGKILLed run left and sends every record exactly once', async () => {
    const { checkpoint, lock } = prepare();
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 100, times: Infinity });
    const env = emulatorEnv(ctx.emulator);
    const first = startCli(ctx.cli, args(checkpoint, '--concurrency', '1'), { env });
    await waitFor(() => ctx.emulator.mock.state.recordCount(DEMO_APP_ID) >= 40);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: first.child.pid, host: hostname() });

    ctx.emulator.mock.faults.clear();
    const second = await runCli(ctx.cli, args(checkpoint, '--json', '--resend-unknown'), { env });
    expect(second.stderr).not.toContain('in use');
    expect(second.code).toBe(0);
    const ids = storedIds();
    // Records in flight at the kill may be stored twice only through --resend-unknown, which says so;
    // with one batch in flight, that is at most one batch.
    expect(new Set(ids).size).toBe(TOTAL);
    expect(ids.length - TOTAL).toBeLessThanOrEqual(20);
    expect(existsSync(lock)).toBe(false);
  }, 30_000);

  it('lets exactly one of several runs take over a stale lock at once', async () => {
    const { checkpoint, lock } = prepare();
    const stale = { pid: deadPid(), host: hostname(), since: '2026-01-01T00:00:00.000Z', token: 'dead' };
    writeFileSync(lock, JSON.stringify(stale));
    // The winner sends one slow batch at a time (about 10 s in all), so that every loser, however
    // late it starts on a busy machine, finds the lock held.
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 1000, times: Infinity });
    const env = emulatorEnv(ctx.emulator);
    const runs = Array.from({ length: 4 }, () =>
      startCli(ctx.cli, args(checkpoint, '--json', '--concurrency', '1'), { env }),
    );
    const results = await Promise.all(runs.map((run) => run.done));
    const codes = results.map((result) => result.code).sort();
    expect(codes).toEqual([0, 2, 2, 2]);
    for (const loser of results.filter((result) => result.code === 2)) {
      expect(loser.stderr).toMatch(/is in use by another push-api run \(pid \d+ on /);
    }
    const ids = storedIds();
    expect(ids).toHaveLength(TOTAL);
    expect(new Set(ids).size).toBe(TOTAL);
    expect(existsSync(lock)).toBe(false);
  }, 60_000);

  it('never lets two contenders hold the lock at once while they keep taking over stale locks', async () => {
    const { checkpoint, lock } = prepare();
    const log = ctx.temp.path('race.log');
    writeFileSync(log, '');
    writeFileSync(lock, JSON.stringify({ pid: deadPid(), host: hostname(), since: 'then', token: 'first' }));
    const racer = join(import.meta.dirname, '..', 'support', 'cli', 'lock-racer.ts');
    const dead = String(deadPid());
    const contenders = Array.from({ length: 5 }, () =>
      startProcess(process.execPath, ['--import', 'tsx', racer, checkpoint, log, '10', dead]),
    );
    const codes = await Promise.all(contenders);
    expect(codes).toEqual([0, 0, 0, 0, 0]);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    let holder: string | undefined;
    let entries = 0;
    for (const line of lines) {
      const [event, pid] = line.split(' ');
      if (event === 'enter') {
        expect(holder, `${pid} entered while ${holder} held the lock`).toBeUndefined();
        holder = pid;
        entries++;
      } else if (event === 'exit') {
        expect(pid).toBe(holder);
        holder = undefined;
      }
    }
    expect(entries).toBe(50);
  }, 40_000);

  it('does not take over a lock from another host, and says how to remove it', async () => {
    const { checkpoint, lock } = prepare();
    const foreign = { pid: process.pid, host: 'build-7.example', since: '2026-01-01T00:00:00.000Z', token: 'x' };
    writeFileSync(lock, JSON.stringify(foreign));
    const result = await runCli(ctx.cli, args(checkpoint), { env: emulatorEnv(ctx.emulator) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `(pid ${process.pid} on build-7.example, since 2026-01-01T00:00:00.000Z); wait for it to end; if it is no longer running on build-7.example, delete ${lock}`,
    );
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(foreign);
    expect(ctx.emulator.mock.state.requests).toHaveLength(0);
  });

  it('does not take over a lock whose process still runs on this host', async () => {
    const { checkpoint, lock } = prepare();
    const live = { pid: process.pid, host: hostname(), since: '2026-01-01T00:00:00.000Z', token: 'x' };
    writeFileSync(lock, JSON.stringify(live));
    const result = await runCli(ctx.cli, args(checkpoint), { env: emulatorEnv(ctx.emulator) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`(pid ${process.pid} on ${hostname()}, since 2026-01-01T00:00:00.000Z)`);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(live);
  });

  it('releases the lock when the run is stopped by an error, and when it is interrupted', async () => {
    const { checkpoint, lock } = prepare();
    const env = emulatorEnv(ctx.emulator);
    const stopped = await runCli(
      ctx.cli,
      ['finance', 'publish', '--app', 'no-such-app', '--checkpoint', checkpoint, ctx.temp.path('in.csv')],
      { env },
    );
    expect(stopped.code).toBe(1);
    expect(existsSync(lock)).toBe(false);

    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, delayMs: 200, times: Infinity });
    const run = startCli(ctx.cli, args(checkpoint, '--concurrency', '1'), { env });
    await waitFor(() => ctx.emulator.mock.state.recordCount(DEMO_APP_ID) >= 20);
    expect(existsSync(lock)).toBe(true);
    run.child.kill('SIGTERM');
    const interrupted = await run.done;
    expect(interrupted.code).toBe(130);
    expect(existsSync(lock)).toBe(false);
  }, 30_000);
});
