import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../examples/redis-rate-budget.js';
import { REDIS_URL } from './env.js';

// The worker process the fleet benchmark measures, at a test's size: 10 batches of 10 records.
const WORKER = fileURLToPath(new URL('../../bench/children/fleet-worker.ts', import.meta.url));
const LIMIT = { requests: 20, windowMs: 1000 };
const redis = new Redis(REDIS_URL);
let emulator: RunningEmulator;

interface Counts {
  recordsSent: number;
  recordsFailed: number;
  recordsUnknown: number;
}

/** Runs 4 worker processes at once against the emulator; `key` names a shared budget, '' for none. */
async function fleet(key: string): Promise<Counts[]> {
  const workers = Array.from({ length: 4 }, () =>
    spawn(process.execPath, ['--import', 'tsx', WORKER], {
      env: {
        ...process.env,
        PUSH_CLIENT_ID: emulator.mock.clientId,
        PUSH_CLIENT_SECRET: emulator.mock.clientSecret,
        PUSH_AUTH_URL: emulator.authUrl,
        PUSH_BASE_URL: emulator.baseUrl,
        PUSH_SCOPE_BASE: emulator.mock.scopeBase,
        BENCH_APP_ID: emulator.mock.appId,
        REDIS_URL,
        BUDGET_KEY: key,
        BATCHES: '10',
        BATCH_SIZE: '10',
      },
      stdio: ['pipe', 'pipe', 'inherit'],
    }),
  );
  try {
    const outputs = workers.map((worker) => createInterface({ input: worker.stdout })[Symbol.asyncIterator]());
    const next = async (lines: AsyncIterator<string>) => {
      const { value, done } = await lines.next();
      if (done) throw new Error('worker closed its output early');
      return value;
    };
    for (const lines of outputs) expect(await next(lines)).toBe('ready');
    for (const worker of workers) worker.stdin.write('go\n');
    const counts = await Promise.all(outputs.map(async (lines) => JSON.parse(await next(lines)) as Counts));
    await Promise.all(workers.map((worker) => (worker.exitCode === null ? once(worker, 'exit') : undefined)));
    return counts;
  } finally {
    for (const worker of workers) if (worker.exitCode === null) worker.kill();
  }
}

const financeStatuses = () =>
  emulator.mock.state.requests.filter((request) => request.operation === 'finance').map((r) => r.status);

beforeAll(async () => {
  emulator = await startEmulator({ rateLimit: LIMIT });
});

afterAll(async () => {
  const keys = await redis.keys('push-api-client:rate:it-*');
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await emulator?.close();
});

describe('redis-rate-budget recipe (real Redis, 4 worker processes, a limit of 20 requests/s)', () => {
  it('a fleet sharing one budget sends every record, learns the limit, and stays under it after the first 429s', async () => {
    emulator.mock.reset();
    const key = `it-${randomUUID()}`;
    const counts = await fleet(key);

    expect(counts.map((c) => c.recordsSent)).toEqual([100, 100, 100, 100]);
    expect(counts.every((c) => c.recordsFailed === 0 && c.recordsUnknown === 0)).toBe(true);
    expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(400);
    // What the fleet learned from its first 429: the requests accepted in one window.
    const learned = Number(await redis.get(`push-api-client:rate:${key}:budget`));
    expect(learned).toBeGreaterThanOrEqual(10);
    expect(learned).toBeLessThanOrEqual(LIMIT.requests);
    // Once learned, windows of at most that budget: the last 20 requests met no 429.
    expect(
      financeStatuses()
        .slice(-20)
        .every((status) => status === 200),
    ).toBe(true);
  }, 60_000);

  it('independent processes end with no record failed either: a 429 waits instead of using up retries', async () => {
    emulator.mock.reset();
    const counts = await fleet('');
    expect(counts.map((c) => c.recordsSent)).toEqual([100, 100, 100, 100]);
    expect(counts.every((c) => c.recordsFailed === 0 && c.recordsUnknown === 0)).toBe(true);
    expect(financeStatuses().filter((status) => status === 429).length).toBeGreaterThan(0);
  }, 60_000);

  it('the runnable recipe prints its fleet outcome', async () => {
    const lines: string[] = [];
    await main((line) => lines.push(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^400 records sent, 0 failed; \d+ of \d+ requests answered 429$/);
  }, 60_000);
});
