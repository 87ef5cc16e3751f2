/**
 * Recipe: one rate budget in Redis for a fleet of worker processes publishing to one app.
 *
 * Each process adapting to 429s alone keeps knocking while the others have already been told to
 * wait, and each learns the limit only from its own share. This `RateBudget` shares both lessons:
 * - a 429's `Retry-After` pauses the whole fleet (one key holds the time the pause ends);
 * - the first 429 of an event teaches the budget: the requests the fleet had accepted in the last
 *   window. From then on a fleet-wide fixed window (rate-limiter-flexible's `RateLimiterRedis`)
 *   lets no more than that budget, less `headroom`, start per window, whichever process sends
 *   them, spread evenly over the window.
 * A window starts at the first request after the previous one ended, as the service's does. The
 * service's window starts when a request arrives, a little after ours, so the two drift apart;
 * what keeps the fleet under the service's limit is the spacing: requests start at least one
 * window ÷ (budget − headroom) apart, so any window of the service holds at most budget − headroom
 * + 1 of them. The processes' clocks are assumed to agree (NTP), as they do on one host.
 *
 *   eval "$(scripts/start-services.sh start)"      # a local Redis (or set REDIS_URL)
 *   npx tsx examples/redis-rate-budget.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import type { RateBudget } from 'push-api-client';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RedisRateBudgetOptions {
  /** Names the budget: one per app and credential, shared by every process that publishes there. */
  key: string;
  /** Prefix of every key this budget writes. @default 'push-api-client:rate:' */
  prefix?: string;
  /** Length of the service's rate window, in whole seconds. @default 1 */
  windowSeconds?: number;
  /** Requests per window before a 429 taught one. @default undefined (no limit until the first 429) */
  initialBudget?: number;
  /** How long a learned budget is kept; then the fleet probes for a higher one. @default 300000 */
  budgetTtlMs?: number;
  /** Extra wait past a window's end for senders it held back, for a service that counts late. @default 0 */
  guardMs?: number;
  /** Requests per window left unused below the learned budget, for arrival jitter. @default 1 */
  headroom?: number;
  /** Called when a Redis write fails; the run goes on (pacing is best effort). @default ignore */
  onError?: (error: unknown) => void;
}

/**
 * A 429: moves the fleet's pause end forward, never back. Returns 1 for the first 429 of an event
 * when the window before it was seen whole: the pause key outlives its pause by one window, so
 * while it exists the last window was cut short by a pause and its count says nothing.
 * KEYS: pause, event. ARGV: now, window ms, wait ms.
 */
const ON_RATE_LIMITED = `local now, window, wait = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local learn = 0
if redis.call('set', KEYS[2], '1', 'PX', math.max(wait, 1), 'NX') and redis.call('exists', KEYS[1]) == 0 then learn = 1 end
local current = tonumber(redis.call('get', KEYS[1]) or '0')
if now + wait > current then redis.call('set', KEYS[1], now + wait, 'PX', wait + window) end
return learn`;

/**
 * Learns the budget: the requests the fleet had accepted in the window before the 429 at ARGV[1].
 * Answers that arrived up to ARGV[4] ms after the 429 count too: across processes, the answer to
 * the window's last accepted request may come after another process's 429, and a budget learned
 * one short is never raised before it expires. A budget already known is only lowered: a 429 at a
 * window boundary says nothing of a higher limit.
 * KEYS: accepted, budget. ARGV: 429 time, window ms, budget ttl ms, stragglers ms.
 */
const LEARN_BUDGET = `local at, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('zremrangebyscore', KEYS[1], '-inf', at - 2 * window)
local accepted = redis.call('zcount', KEYS[1], at - window, at + tonumber(ARGV[4]))
local known = tonumber(redis.call('get', KEYS[2]) or '0')
if accepted > 0 and (known == 0 or accepted < known) then redis.call('set', KEYS[2], accepted, 'PX', ARGV[3]) end
return accepted`;

/** Successes are recorded by each process as its answers arrive; the count waits for stragglers. */
const LEARN_DELAY_MS = 100;

export class RedisRateBudget implements RateBudget {
  readonly #redis: Redis;
  readonly #keys: { pause: string; event: string; accepted: string; budget: string; window: string };
  readonly #windowSeconds: number;
  readonly #initialBudget: number | undefined;
  readonly #budgetTtlMs: number;
  readonly #guardMs: number;
  readonly #headroom: number;
  readonly #onError: (error: unknown) => void;
  /**
   * One limiter per budget value (rate-limiter-flexible fixes its points at construction), all on
   * one counter: processes that see a new budget a moment apart still share the same window.
   */
  readonly #limiters = new Map<number, RateLimiterRedis>();
  /** This process's view of the pause, so that its own senders stop before Redis answers. */
  #pausedUntil = 0;
  #sequence = 0;

  constructor(redis: Redis, options: RedisRateBudgetOptions) {
    this.#redis = redis;
    const base = `${options.prefix ?? 'push-api-client:rate:'}${options.key}:`;
    this.#keys = {
      pause: `${base}pause`,
      event: `${base}event`,
      accepted: `${base}accepted`,
      budget: `${base}budget`,
      window: `${base}window`,
    };
    this.#windowSeconds = options.windowSeconds ?? 1;
    this.#initialBudget = options.initialBudget;
    this.#budgetTtlMs = options.budgetTtlMs ?? 300_000;
    this.#guardMs = options.guardMs ?? 0;
    this.#headroom = options.headroom ?? 1;
    this.#onError = options.onError ?? (() => {});
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const [pause, budget] = await this.#redis.mget(this.#keys.pause, this.#keys.budget);
      const waitMs = Math.max(this.#pausedUntil, Number(pause ?? 0)) - Date.now();
      if (waitMs > 0) {
        await sleep(waitMs, undefined, { signal });
        continue;
      }
      const learned = budget === null ? this.#initialBudget : Number(budget);
      if (learned === undefined) return;
      // `headroom` below the budget: a window's first request may reach the service a little
      // before the service's previous window ends, and must find room there.
      const points = Math.max(1, learned - this.#headroom);
      try {
        const { consumedPoints, msBeforeNext } = await this.#limiter(points).consume(this.#keys.window);
        // The k-th request of a window starts k-1 spacings after the window began, so that a
        // window is spread evenly instead of sent as one burst at its start.
        const windowMs = this.#windowSeconds * 1000;
        const slotAt = Date.now() + msBeforeNext - windowMs + ((consumedPoints - 1) * windowMs) / points;
        if (slotAt > Date.now()) await sleep(slotAt - Date.now(), undefined, { signal });
        return;
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        await sleep(rejection.msBeforeNext + this.#guardMs, undefined, { signal });
      }
    }
  }

  release(): void {
    // The window counts requests started, not requests in flight: nothing to give back.
  }

  onSuccess(): void {
    const now = Date.now();
    this.#redis.zadd(this.#keys.accepted, now, `${now}:${process.pid}:${this.#sequence++}`).catch(this.#onError);
  }

  onRateLimited(retryAfterMs: number | undefined): void {
    const now = Date.now();
    const waitMs = Math.max(0, retryAfterMs ?? 0);
    this.#pausedUntil = Math.max(this.#pausedUntil, now + waitMs);
    const { pause, event, accepted, budget } = this.#keys;
    const windowMs = this.#windowSeconds * 1000;
    this.#redis
      .eval(ON_RATE_LIMITED, 2, pause, event, now, windowMs, waitMs)
      .then(async (learn) => {
        if (learn !== 1) return;
        await sleep(LEARN_DELAY_MS);
        await this.#redis.eval(LEARN_BUDGET, 2, accepted, budget, now, windowMs, this.#budgetTtlMs, LEARN_DELAY_MS);
      })
      .catch(this.#onError);
  }

  #limiter(points: number): RateLimiterRedis {
    let limiter = this.#limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.#redis,
        keyPrefix: this.#keys.window,
        points,
        duration: this.#windowSeconds,
      });
      this.#limiters.set(points, limiter);
    }
    return limiter;
  }
}

/**
 * Four clients, as four worker processes would be, publish to one app under a limit of 20
 * requests a second through one shared budget, and none of their records fails.
 */
export async function main(log: (line: string) => void = console.log): Promise<void> {
  const { randomUUID } = await import('node:crypto');
  const { Redis } = await import('ioredis');
  const { PushClient } = await import('push-api-client');
  const { startEmulator } = await import('push-api-client/testing');
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:56379');
  const emulator = await startEmulator({ rateLimit: { requests: 20, windowMs: 1000 } });
  const key = `demo-${randomUUID()}`;
  try {
    const { mock } = emulator;
    const workers = Array.from({ length: 4 }, async (_, worker) => {
      const client = new PushClient({
        clientId: mock.clientId,
        clientSecret: mock.clientSecret,
        authUrl: emulator.authUrl,
        baseUrl: emulator.baseUrl,
        scopeBase: mock.scopeBase,
      });
      const records = Array.from({ length: 100 }, (_, i) => ({
        created: Date.UTC(2025, 0, 1),
        amount: i + 1,
        currency: 'USD',
        identifier: `worker-${worker}@example.com`,
        type: 'expense' as const,
        vendor: 'Acme',
      }));
      return client.finance.publish(mock.appId, records, {
        batchSize: 10,
        rateBudget: new RedisRateBudget(redis, { key }),
      });
    });
    const reports = await Promise.all(workers);
    const finance = mock.state.requests.filter((request) => request.operation === 'finance');
    const rateLimited = finance.filter((request) => request.status === 429).length;
    const sent = reports.reduce((sum, report) => sum + report.recordsSent, 0);
    const failed = reports.reduce((sum, report) => sum + report.recordsFailed, 0);
    log(`${sent} records sent, ${failed} failed; ${rateLimited} of ${finance.length} requests answered 429`);
  } finally {
    const keys = await redis.keys(`push-api-client:rate:${key}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await emulator.close();
  }
}

// Run as a script only under its own name: bundled into another program (the fleet benchmark's
// worker), `import.meta.url` is that program's.
const script = process.argv[1];
if (script && import.meta.url === pathToFileURL(script).href && /redis-rate-budget\.[cm]?[jt]s$/.test(script)) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
