/**
 * One worker process of the redis-rate-budget test. Configured by PUSH_* variables (read by
 * PushClient itself), REDIS_URL and BUDGET_KEY (empty: the process adapts alone); prints `ready`,
 * waits for `go` on stdin so that every worker starts at once, then prints its report's counts.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { PushClient } from 'push-api-client';
import { RedisRateBudget } from '../../examples/redis-rate-budget.js';

const key = process.env.BUDGET_KEY ?? '';
const redis = key === '' ? undefined : new Redis(process.env.REDIS_URL ?? '');
const client = new PushClient();
await client.tokens.getToken();
const records = Array.from({ length: 100 }, (_, i) => ({
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
const report = await client.finance.publish(process.env.PUSH_APP_ID ?? '', records, {
  batchSize: 10,
  ...(redis && { rateBudget: new RedisRateBudget(redis, { key }) }),
});
const { recordsSent, recordsFailed, recordsUnknown } = report;
process.stdout.write(`${JSON.stringify({ recordsSent, recordsFailed, recordsUnknown })}\n`);
await redis?.quit();
