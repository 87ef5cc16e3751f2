/**
 * One worker process of a fleet publishing to one app: the fleet benchmark runs it (compiled), and
 * the redis-rate-budget integration test runs it with tsx at a smaller size. Connection from the
 * PUSH_* variables (read by PushClient) and BENCH_APP_ID; BATCHES × BATCH_SIZE records; BUDGET_KEY
 * names the shared Redis budget (empty: this process adapts alone, the default). Gets its token,
 * loads the schema, prints `ready`, waits for `go` on stdin so that every worker starts at once,
 * publishes, then prints its report's counts and when it started and ended (epoch ms) as one JSON
 * line.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { PushClient } from 'push-api-client';
import { RedisRateBudget } from '../../examples/redis-rate-budget.js';

const batches = Number(process.env.BATCHES ?? 50);
const batchSize = Number(process.env.BATCH_SIZE ?? 50);
const budgetKey = process.env.BUDGET_KEY ?? '';
const redis = budgetKey === '' ? undefined : new Redis(process.env.REDIS_URL ?? '');
const client = new PushClient();
// Token, Redis and the record schema (zod) are ready before the start, so that only publishing is timed.
await client.tokens.getToken();
await redis?.ping();
await import('push-api-client/schema');
const records = Array.from({ length: batches * batchSize }, (_, i) => ({
  created: Date.UTC(2025, 0, 1),
  amount: i + 1,
  currency: 'USD',
  identifier: `worker-${process.pid}@example.com`,
  type: 'expense' as const,
  vendor: 'Acme',
  transactionNumber: `${process.pid}-${i}`,
}));
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
lines.close();
const startedAt = Date.now();
const report = await client.finance.publish(process.env.BENCH_APP_ID ?? '', records, {
  batchSize,
  ...(redis && { rateBudget: new RedisRateBudget(redis, { key: budgetKey }) }),
});
const endedAt = Date.now();
const { recordsSent, recordsFailed, recordsUnknown, batchesSent } = report;
const line = { recordsSent, recordsFailed, recordsUnknown, batchesSent, startedAt, endedAt };
process.stdout.write(`${JSON.stringify(line)}\n`);
await redis?.quit();
