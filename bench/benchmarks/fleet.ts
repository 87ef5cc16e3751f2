/**
 * 7. Fleet goodput: 4 worker processes publish to one app against the emulator (real HTTP, another
 * process) limited to 20 requests/s, each process adapting alone (the SDK's default, which the
 * targets judge) against the same fleet with one rate budget shared through Redis
 * (examples/redis-rate-budget.ts). 429s are counted by the emulator, over the whole run and after
 * the first two rate windows. Needs Redis (REDIS_URL, as `scripts/start-services.sh` prints);
 * without one it skips itself and says why.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { alternate } from '../lib/alternate.js';
import { connectionEnv } from '../lib/client.js';
import { childScript } from '../lib/paths.js';
import { makeRow, type Row } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median } from '../lib/stats.js';
import type { Benchmark } from './types.js';

const LIMIT = { requests: 20, windowMs: 1000 };
const WORKERS = 4;
const BATCH_SIZE = 50;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';

interface Sample {
  /** Accepted batches per second, as a percentage of the limit. */
  goodputPct: number;
  share429: number;
  /** The 429 share after the first two windows: once the first contact is over. */
  settled429: number;
  recordsFailed: number;
  recordsUnknown: number;
}

interface WorkerReport {
  recordsSent: number;
  recordsFailed: number;
  recordsUnknown: number;
  batchesSent: number;
  startedAt: number;
  endedAt: number;
}

/** Why the fleet cannot run here, or undefined when Redis answers. */
async function redisMissing(): Promise<string | undefined> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `no Redis at ${REDIS_URL} (${error instanceof Error ? error.message : String(error)}); start one with scripts/start-services.sh`;
  } finally {
    redis.disconnect();
  }
}

/** What the shared budget learned from the 429s (the recipe's key), for the log. */
async function learnedBudget(key: string): Promise<string> {
  const redis = new Redis(REDIS_URL);
  try {
    return (await redis.get(`push-api-client:rate:${key}:budget`)) ?? 'nothing';
  } finally {
    redis.disconnect();
  }
}

async function fleetRun(
  server: ServerProcess,
  batches: number,
  shared: boolean,
  log: (message: string) => void,
): Promise<Sample> {
  await server.reset();
  const budgetKey = shared ? `bench-${randomUUID()}` : '';
  const workers: ChildProcessWithoutNullStreams[] = [];
  try {
    const outputs = Array.from({ length: WORKERS }, () => {
      const child = spawn(process.execPath, [childScript('fleet-worker')], {
        env: {
          ...process.env,
          ...connectionEnv(server),
          REDIS_URL,
          BUDGET_KEY: budgetKey,
          BATCHES: String(batches),
          BATCH_SIZE: String(BATCH_SIZE),
        },
      });
      child.stderr.resume();
      workers.push(child);
      return createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    });
    const next = async (lines: AsyncIterator<string>) => {
      const { value, done } = await lines.next();
      if (done) throw new Error('fleet worker closed its output early');
      return value;
    };
    for (const lines of outputs) if ((await next(lines)) !== 'ready') throw new Error('fleet worker not ready');
    for (const child of workers) child.stdin.write('go\n');
    const reports = await Promise.all(
      outputs.map(async (lines) => {
        const line = await next(lines);
        try {
          return JSON.parse(line) as WorkerReport;
        } catch {
          throw new Error(`fleet worker printed ${JSON.stringify(line.slice(0, 200))} instead of its report`);
        }
      }),
    );
    // From the first worker's start to the last one's end: the fleet's publishing time.
    const seconds =
      (Math.max(...reports.map((report) => report.endedAt)) - Math.min(...reports.map((report) => report.startedAt))) /
      1000;
    const stats = await server.stats();
    const first = Math.min(...reports.map((report) => report.startedAt));
    const spans = reports.map((report) => `${report.startedAt - first}–${report.endedAt - first}`);
    const learned = shared ? `, budget learned ${await learnedBudget(budgetKey)}/window` : '';
    log(
      `fleet ${shared ? 'shared' : 'alone'}: ${seconds.toFixed(1)} s, ${stats.financeRateLimited}/${stats.financeRequests} answered 429 (${stats.financeRateLimitedSettled}/${stats.financeRequestsSettled} after the first 2 s)${learned}; ms per worker ${spans.join(', ')}`,
    );
    const sum = (key: keyof WorkerReport) => reports.reduce((total, report) => total + report[key], 0);
    return {
      goodputPct: (100 * sum('batchesSent')) / seconds / (LIMIT.requests / (LIMIT.windowMs / 1000)),
      share429: stats.financeRequests === 0 ? Number.NaN : (100 * stats.financeRateLimited) / stats.financeRequests,
      settled429:
        stats.financeRequestsSettled === 0
          ? Number.NaN
          : (100 * stats.financeRateLimitedSettled) / stats.financeRequestsSettled,
      recordsFailed: sum('recordsFailed'),
      recordsUnknown: sum('recordsUnknown'),
    };
  } finally {
    for (const child of workers) if (child.exitCode === null) child.kill();
    await Promise.all(workers.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
  }
}

export const fleet: Benchmark = {
  name: 'fleet',
  title: '7 fleet rate budget',
  async run(ctx) {
    const missing = await redisMissing();
    if (missing) {
      ctx.log(`fleet: skipped: ${missing}`);
      return [];
    }
    const batches = ctx.quick ? 25 : 50;
    const rounds = ctx.quick ? 1 : 2;
    return withServer({ kind: 'emulator', rateLimit: LIMIT }, async (server) => {
      ctx.log(`fleet: ${rounds} rounds of ${WORKERS} processes × ${batches} batches, limit ${LIMIT.requests}/s`);
      const samples = await alternate(rounds, [
        { name: 'shared', run: () => fleetRun(server, batches, true, ctx.log) },
        { name: 'alone', run: () => fleetRun(server, batches, false, ctx.log) },
      ]);
      const shared = samples.get('shared') ?? [];
      const alone = samples.get('alone') ?? [];
      const pick = (list: Sample[], key: keyof Sample) => list.map((sample) => sample[key]);
      const total = (list: Sample[], key: keyof Sample) => pick(list, key).reduce((a, b) => a + b, 0);
      const note =
        `${WORKERS} × ${batches} batches of ${BATCH_SIZE}; records failed: shared ${total(shared, 'recordsFailed')}, ` +
        `alone ${total(alone, 'recordsFailed')}; unknown: shared ${total(shared, 'recordsUnknown')}, ` +
        `alone ${total(alone, 'recordsUnknown')} (all rounds)`;
      // The targets are for the fleet without coordination (the SDK's default): that is
      // "ours"; the shared Redis budget (the documented recipe for fleets) is the baseline.
      const row = (metric: string, unit: string, key: keyof Sample, target: Row['target'], extra: Partial<Row> = {}) =>
        makeRow({
          benchmark: this.title,
          metric,
          unit,
          ours: key === 'recordsFailed' ? total(alone, key) : median(pick(alone, key)),
          baselineName: 'shared Redis budget',
          baseline: key === 'recordsFailed' ? total(shared, key) : median(pick(shared, key)),
          target,
          samples: { ours: pick(alone, key), baseline: pick(shared, key) },
          ...extra,
        });
      return [
        row(
          `goodput, % of the limit (${LIMIT.requests}/s), each process alone`,
          '%',
          'goodputPct',
          {
            of: 'value',
            op: '>=',
            limit: 90,
          },
          { note },
        ),
        row('requests answered 429, each process alone', '%', 'share429', { of: 'value', op: '<=', limit: 10 }),
        row(
          'requests answered 429 after the first 2 s (settled), each process alone',
          '%',
          'settled429',
          {
            of: 'value',
            op: '<=',
            limit: 10,
          },
          { note: 'the first two rate windows, where each process first meets the limit, left out' },
        ),
        row('records failed (all rounds), each process alone', 'records', 'recordsFailed', {
          of: 'value',
          op: '==',
          limit: 0,
        }),
      ];
    });
  },
};
