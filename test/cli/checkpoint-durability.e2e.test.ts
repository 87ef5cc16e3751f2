/**
 * Durable checkpoints, seen from the kernel: a real CLI process runs under strace, and every
 * checkpoint (and rejects) write must be fsync'd before its rename, and its directory fsync'd after.
 * CI installs strace when the machine lacks it (.ci/run).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, emulatorEnv } from '../support/cli/run.js';

const ctx = useCliFixture();

interface Call {
  name: string;
  args: string;
  result: number;
}

/** Complete calls of the traced process, in order; a call split by another thread is joined. */
function parseTrace(text: string): Call[] {
  const calls: Call[] = [];
  const pending = new Map<string, string>();
  for (const line of text.split('\n')) {
    const unfinished = /^(\d+)\s+(.*) <unfinished \.\.\.>$/.exec(line);
    if (unfinished) {
      pending.set(unfinished[1] as string, unfinished[2] as string);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. \w+ resumed>(.*)$/.exec(line);
    const whole = resumed ? `${pending.get(resumed[1] as string) ?? ''}${resumed[2]}` : line.replace(/^\d+\s+/, '');
    const call = /^(\w+)\((.*)\)\s+=\s+(-?\d+)/.exec(whole);
    if (call) calls.push({ name: call[1] as string, args: call[2] as string, result: Number(call[3]) });
  }
  return calls;
}

async function tracedPublish(env: Record<string, string>): Promise<{ code: number | null; calls: Call[] }> {
  const trace = ctx.temp.path('trace.log');
  const input = ctx.temp.path('in.csv');
  const args = [
    ...['-f', '-qq', '-e', 'trace=openat,open,fsync,fdatasync,rename,renameat,renameat2', '-o', trace],
    ...[process.execPath, ctx.cli, 'finance', 'publish', '--app', DEMO_APP_ID, '--batch-size', '25'],
    ...['--checkpoint', ctx.temp.path('cp.json'), '--rejects', ctx.temp.path('r.jsonl'), input],
  ];
  const child = spawn('strace', args, {
    env: { PATH: process.env.PATH ?? '', ...emulatorEnv(ctx.emulator), ...env },
    stdio: 'ignore',
    timeout: 30_000,
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, calls: parseTrace(readFileSync(trace, 'utf8')) };
}

/** For each rename onto `target`: was its temp file fsync'd before, and the directory after? */
function renamesOnto(calls: Call[], target: string, dir: string) {
  const found: { dataSynced: boolean; dirSynced: boolean }[] = [];
  calls.forEach((call, index) => {
    if (!call.name.startsWith('rename') || !call.args.endsWith(`"${target}"`) || call.result !== 0) return;
    const temp = /"([^"]+\.tmp)"/.exec(call.args)?.[1] as string;
    const opened = calls.findLastIndex(
      (c, i) => i < index && c.name.startsWith('open') && c.args.includes(`"${temp}"`),
    );
    const fd = calls[opened]?.result;
    const dataSynced = calls
      .slice(opened + 1, index)
      .some((c) => (c.name === 'fsync' || c.name === 'fdatasync') && c.args === String(fd));
    // Background saves flush on libuv's threads, so other calls may come between the directory's
    // open and its fsync: any open of the directory after the rename whose descriptor is fsync'd.
    const dirSynced = calls.some(
      (opening, i) =>
        i > index &&
        opening.name.startsWith('open') &&
        opening.args.includes(`"${dir}"`) &&
        calls.slice(i + 1, i + 20).some((c) => c.name === 'fsync' && c.args === String(opening.result)),
    );
    found.push({ dataSynced, dirSynced });
  });
  return found;
}

describe('durable checkpoints', () => {
  it('fsyncs every checkpoint and rejects file before its rename, and the directory after', async () => {
    execFileSync('strace', ['-V']); // fails loudly when strace is missing
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(100)}\nbad,row\n`);
    const { code, calls } = await tracedPublish({});
    expect(code).toBe(3);
    const checkpoint = renamesOnto(calls, ctx.temp.path('cp.json'), ctx.temp.dir);
    // At least the first save, a reservation before the first batch, and the last; saves made while
    // another is under way share one write, so there may be fewer than one per batch.
    expect(checkpoint.length).toBeGreaterThanOrEqual(3);
    expect(checkpoint.every((write) => write.dataSynced && write.dirSynced)).toBe(true);
    const rejects = renamesOnto(calls, ctx.temp.path('r.jsonl'), ctx.temp.dir);
    expect(rejects).toEqual([{ dataSynced: true, dirSynced: true }]);
  }, 40_000);

  it('skips both flushes when the benchmark switch turns them off', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(100)}\n`);
    const { code, calls } = await tracedPublish({ PUSH_CHECKPOINT_FSYNC: '0' });
    expect(code).toBe(0);
    const checkpoint = renamesOnto(calls, ctx.temp.path('cp.json'), ctx.temp.dir);
    // Saves made while another is under way share one write: at least the first and the last.
    expect(checkpoint.length).toBeGreaterThanOrEqual(2);
    expect(checkpoint.some((write) => write.dataSynced || write.dirSynced)).toBe(false);
  }, 40_000);
});
