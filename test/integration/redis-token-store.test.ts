import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTokenStore } from '../../examples/redis-token-store.js';
import { REDIS_URL } from './env.js';

const WORKER = fileURLToPath(new URL('./redis-worker.ts', import.meta.url));
const prefix = `push-api-client-it:${randomUUID()}:`;
const redis = new Redis(REDIS_URL);
let emulator: RunningEmulator;

interface Worker {
  child: ChildProcessWithoutNullStreams;
  lines: AsyncIterator<string>;
  /** Listened for from the start: a worker may exit before the test gets round to waiting for it. */
  exited: Promise<unknown[]>;
}

function startWorker(): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: {
      ...process.env,
      PUSH_CLIENT_ID: emulator.mock.clientId,
      PUSH_CLIENT_SECRET: emulator.mock.clientSecret,
      PUSH_AUTH_URL: emulator.authUrl,
      PUSH_BASE_URL: emulator.baseUrl,
      PUSH_SCOPE_BASE: emulator.mock.scopeBase,
      PUSH_APP_ID: emulator.mock.appId,
      REDIS_URL,
      TOKEN_PREFIX: prefix,
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.on('exit', (code) => {
    if (code !== 0) console.error(`worker exited with ${code}: ${stderr}`);
  });
  const exited = once(child, 'exit');
  return { child, lines: createInterface({ input: child.stdout })[Symbol.asyncIterator](), exited };
}

async function nextLine(worker: Worker): Promise<string> {
  const { value, done } = await worker.lines.next();
  if (done) throw new Error('worker closed its output early');
  return value;
}

beforeAll(async () => {
  emulator = await startEmulator();
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await emulator?.close();
});

describe('redis-token-store recipe (real Redis)', () => {
  it('4 worker processes share one token: exactly 1 token request', async () => {
    // A slow token endpoint: every worker asks while the first request is still in flight.
    emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: 300, times: Infinity });
    const workers = Array.from({ length: 4 }, startWorker);
    try {
      for (const worker of workers) expect(await nextLine(worker)).toBe('ready');
      for (const worker of workers) worker.child.stdin.write('go\n');
      const results = await Promise.all(
        workers.map(
          async (worker) => JSON.parse(await nextLine(worker)) as { accessToken: string; recordsSent: number },
        ),
      );
      const exits = await Promise.all(workers.map((worker) => worker.exited));

      expect(exits.map(([code]) => code)).toEqual([0, 0, 0, 0]);
      expect(emulator.mock.state.tokenRequestCount).toBe(1);
      expect(new Set(results.map((result) => result.accessToken)).size).toBe(1);
      expect(results.map((result) => result.recordsSent)).toEqual([1, 1, 1, 1]);
      expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(4);
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill();
    }
  }, 60_000);

  it('lets another worker fetch once the lock of a worker that died has expired', async () => {
    const key = `dead-holder-${randomUUID()}`;
    const holder = new RedisTokenStore(redis, { prefix, lockTtlMs: 200 });
    const waiter = new RedisTokenStore(redis, { prefix, lockTtlMs: 200, pollMs: 20 });
    // The holder reports a miss (it takes the lock) and then never stores a token.
    expect(await holder.get(key)).toBeUndefined();
    const started = Date.now();
    expect(await waiter.get(key)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('hands a waiting worker the token the lock holder stored', async () => {
    const key = `handover-${randomUUID()}`;
    const holder = new RedisTokenStore(redis, { prefix });
    const waiter = new RedisTokenStore(redis, { prefix, pollMs: 20 });
    expect(await holder.get(key)).toBeUndefined();
    const waiting = waiter.get(key);
    const token = {
      accessToken: 'shared',
      tokenType: 'Bearer',
      expiresAt: new Date(Date.now() + 3_600_000),
      scopes: ['s'],
    };
    await holder.set(key, token, token.expiresAt);
    expect(await waiting).toEqual(token);
  });
});
