/**
 * One worker process of the redis-token-store test. Configured by PUSH_* variables (read by
 * PushClient itself), REDIS_URL and TOKEN_PREFIX; prints `ready`, waits for `go` on stdin so that
 * every worker asks at the same moment, then prints the token it got as JSON.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { PushClient } from 'push-api-client';
import { RedisTokenStore } from '../../examples/redis-token-store.js';

const redis = new Redis(process.env.REDIS_URL ?? '');
const client = new PushClient({ tokenStore: new RedisTokenStore(redis, { prefix: process.env.TOKEN_PREFIX ?? '' }) });
await redis.ping();
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await once(lines, 'line');
lines.close();
const token = await client.tokens.getToken();
// The shared token really works for this worker's own requests.
const report = await client.finance.publish(process.env.PUSH_APP_ID ?? '', [
  {
    created: Date.UTC(2025, 0, 1),
    amount: 1,
    currency: 'USD',
    identifier: `worker-${process.pid}@example.com`,
    type: 'expense',
    vendor: 'Acme',
  },
]);
process.stdout.write(`${JSON.stringify({ accessToken: token.accessToken, recordsSent: report.recordsSent })}\n`);
await redis.quit();
