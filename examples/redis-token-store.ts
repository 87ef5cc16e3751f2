/**
 * Recipe: a `TokenStore` in Redis, so that every worker process shares one access token.
 *
 * Sharing the cache is not enough: when the token is missing, every worker would ask for one at
 * the same moment. `get` therefore takes a short lock (`SET lock NX PX`) before reporting a miss.
 * The worker holding it fetches the token (the SDK calls `set`, which stores the token and releases
 * the lock); the others wait for that token instead of fetching their own. A worker that dies while
 * fetching holds the lock only for `lockTtlMs`. Before expiry one worker refreshes while the others
 * keep using the still-valid token.
 *
 *   eval "$(scripts/start-services.sh start)"      # a local Redis (or set REDIS_URL)
 *   npx tsx examples/redis-token-store.ts
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { type AccessToken, PushClient, type TokenStore } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

export interface RedisTokenStoreOptions {
  /** Prefix of every key this store writes. @default 'push-api-client:' */
  prefix?: string;
  /** Longest a worker may take to fetch a token before another may try. @default 10000 */
  lockTtlMs?: number;
  /** Longest `get` waits for another worker's token before letting its caller fetch one. @default 15000 */
  waitTimeoutMs?: number;
  /** How often a waiting worker looks for the token. @default 50 */
  pollMs?: number;
  /** Tokens closer than this to expiry are refreshed by one worker, the lock holder. @default 60000 */
  refreshMarginMs?: number;
}

/** Deletes the lock only if this store still holds it: it may have expired and been taken since. */
const RELEASE_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

interface StoredToken {
  accessToken: string;
  tokenType: string;
  expiresAt: string;
  scopes: string[];
}

export class RedisTokenStore implements TokenStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #lockTtlMs: number;
  readonly #waitTimeoutMs: number;
  readonly #pollMs: number;
  readonly #refreshMarginMs: number;
  /** Identifies this store's locks, so that it never releases another worker's. */
  readonly #owner = randomUUID();

  constructor(redis: Redis, options: RedisTokenStoreOptions = {}) {
    this.#redis = redis;
    this.#prefix = options.prefix ?? 'push-api-client:';
    this.#lockTtlMs = options.lockTtlMs ?? 10_000;
    this.#waitTimeoutMs = options.waitTimeoutMs ?? 15_000;
    this.#pollMs = options.pollMs ?? 50;
    this.#refreshMarginMs = options.refreshMarginMs ?? 60_000;
  }

  /** A fresh token, or `undefined` when the caller should fetch one (it then holds the lock). */
  async get(key: string): Promise<AccessToken | undefined> {
    const token = await this.#read(key);
    if (token && this.#remaining(token) > this.#refreshMarginMs) return token;
    if (await this.#lock(key)) return this.#recheck(key);
    // Another worker is fetching. A token that is due for refresh but not expired is still good.
    if (token && this.#remaining(token) > 0) return token;
    return this.#waitForToken(key);
  }

  async set(key: string, token: AccessToken, expiresAt: Date): Promise<void> {
    const value: StoredToken = { ...token, expiresAt: expiresAt.toISOString() };
    // Stored first, released second: a waiting worker finds the token before it can take the lock.
    await this.#redis.set(this.#tokenKey(key), JSON.stringify(value), 'PXAT', expiresAt.getTime());
    await this.#unlock(key);
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#tokenKey(key));
  }

  async #waitForToken(key: string): Promise<AccessToken | undefined> {
    const deadline = Date.now() + this.#waitTimeoutMs;
    while (Date.now() < deadline) {
      await sleep(this.#pollMs);
      const token = await this.#read(key);
      if (token && this.#remaining(token) > 0) return token;
      // The lock is gone: its holder stored a token just now, or failed. Look again, or take over.
      if (await this.#lock(key)) return this.#recheck(key);
    }
    // Liveness over strictness: after the wait, the caller fetches a token of its own.
    return undefined;
  }

  /**
   * Called holding the lock: the previous holder may have stored a token between our read and our
   * lock. Then that token is used and the lock given back; otherwise the caller fetches.
   */
  async #recheck(key: string): Promise<AccessToken | undefined> {
    const token = await this.#read(key);
    if (!token || this.#remaining(token) <= this.#refreshMarginMs) return undefined;
    await this.#unlock(key);
    return token;
  }

  async #unlock(key: string): Promise<void> {
    await this.#redis.eval(RELEASE_SCRIPT, 1, this.#lockKey(key), this.#owner);
  }

  async #lock(key: string): Promise<boolean> {
    const result = await this.#redis.set(this.#lockKey(key), this.#owner, 'PX', this.#lockTtlMs, 'NX');
    return result === 'OK';
  }

  async #read(key: string): Promise<AccessToken | undefined> {
    const raw = await this.#redis.get(this.#tokenKey(key));
    if (raw === null) return undefined;
    const stored = JSON.parse(raw) as StoredToken;
    return { ...stored, expiresAt: new Date(stored.expiresAt) };
  }

  #remaining(token: AccessToken): number {
    return token.expiresAt.getTime() - Date.now();
  }

  #tokenKey(key: string): string {
    return `${this.#prefix}${key}`;
  }

  #lockKey(key: string): string {
    return `${this.#prefix}${key}:lock`;
  }
}

/** Three clients, as three workers would be, share one token through Redis. */
export async function main(log: (line: string) => void = console.log): Promise<void> {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:56379';
  const connections = [new Redis(redisUrl), new Redis(redisUrl), new Redis(redisUrl)];
  const emulator = await startEmulator();
  const prefix = `push-api-client-demo:${randomUUID()}:`;
  try {
    const clients = connections.map(
      (redis) =>
        new PushClient({
          clientId: emulator.mock.clientId,
          clientSecret: emulator.mock.clientSecret,
          authUrl: emulator.authUrl,
          baseUrl: emulator.baseUrl,
          scopeBase: emulator.mock.scopeBase,
          tokenStore: new RedisTokenStore(redis, { prefix }),
        }),
    );
    const tokens = await Promise.all(clients.map((client) => client.tokens.getToken()));
    const distinct = new Set(tokens.map((token) => token.accessToken)).size;
    log(
      `${clients.length} clients, ${distinct} distinct token, ${emulator.mock.state.tokenRequestCount} token request`,
    );
  } finally {
    const [first] = connections;
    const keys = first ? await first.keys(`${prefix}*`) : [];
    if (first && keys.length > 0) await first.del(...keys);
    await Promise.all(connections.map((redis) => redis.quit()));
    await emulator.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
