/** An access token as the SDK hands it out. */
export interface AccessToken {
  /** The bearer token itself: a secret, keep it out of logs. */
  accessToken: string;
  /** As the server sent it; validated to be `Bearer` (any case). */
  tokenType: string;
  /** When the server stops accepting it at the latest: `expires_in` after its request's last attempt left. */
  expiresAt: Date;
  /**
   * The scopes the server granted (its `scope` field), less any holding the token or the client
   * secret; the requested ones when it sent none.
   */
  scopes: string[];
}

/**
 * Where tokens are kept between requests. Implement it over Redis, a file or a database so that
 * several processes share one token instead of each fetching its own. Keys are hashes that
 * contain no secret; values contain the access token, so keep the store private.
 *
 * A store that throws never fails a request: the error is logged as a warning and the client
 * fetches (or keeps using) a token of its own. Nor does one that hangs: a `get` or `set` that has
 * not settled within the call's `timeoutMs` counts as failed, so a store that stopped answering
 * delays a refresh, never stops it. The default is a {@link MemoryTokenStore}.
 *
 * @example
 * A store in Redis (with ioredis). `examples/redis-token-store.ts` adds a lock, so that workers
 * starting together fetch one token between them instead of one each.
 * ```ts
 * import { Redis } from 'ioredis';
 * import { type AccessToken, PushClient, type TokenStore } from 'push-api-client';
 *
 * class RedisTokenStore implements TokenStore {
 *   constructor(private readonly redis: Redis) {}
 *
 *   async get(key: string): Promise<AccessToken | undefined> {
 *     const json = await this.redis.get(key);
 *     // expiresAt comes back as a string; the client turns it into a Date again.
 *     return json === null ? undefined : JSON.parse(json);
 *   }
 *
 *   async set(key: string, token: AccessToken, expiresAt: Date): Promise<void> {
 *     await this.redis.set(key, JSON.stringify(token), 'PXAT', expiresAt.getTime());
 *   }
 *
 *   async delete(key: string): Promise<void> {
 *     await this.redis.del(key);
 *   }
 * }
 *
 * const client = new PushClient({ tokenStore: new RedisTokenStore(new Redis()) });
 * ```
 */
export interface TokenStore {
  /**
   * The token stored under `key`, or undefined when there is none. Returning an expired or
   * rejected token is safe: the client checks `expiresAt` and fetches a new one when it is due.
   */
  get(key: string): AccessToken | undefined | Promise<AccessToken | undefined>;
  /** `expiresAt` is given separately so that stores with a TTL can use it directly. */
  set(key: string, token: AccessToken, expiresAt: Date): void | Promise<void>;
  /** Called when the server rejected the stored token (a 401). Optional. */
  delete?(key: string): void | Promise<void>;
}

/** Options of {@link MemoryTokenStore}. */
export interface MemoryTokenStoreOptions {
  /** Clock in milliseconds, for dropping expired entries; the token manager passes its own. @default Date.now */
  now?: (() => number) | undefined;
}

/**
 * The most tokens a {@link MemoryTokenStore} holds: one per scope set, and `client.request` takes
 * the scopes per call, so a caller that passes scopes from its own users could otherwise fill the
 * process with tokens that are only dropped when read again.
 */
export const MAX_MEMORY_TOKENS = 1024;

/**
 * The default store: a Map in this process. Expired entries are dropped when read; past
 * 1,024 tokens, expired entries go first, then the longest held.
 */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, AccessToken>();
  readonly #now: () => number;

  constructor(options: MemoryTokenStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** The token under `key`, or undefined when there is none or it has expired (it is then dropped). */
  get(key: string): AccessToken | undefined {
    const token = this.#tokens.get(key);
    if (token && token.expiresAt.getTime() <= this.#now()) {
      this.#tokens.delete(key);
      return undefined;
    }
    return token;
  }

  set(key: string, token: AccessToken): void {
    this.#tokens.delete(key);
    if (this.#tokens.size >= MAX_MEMORY_TOKENS) this.#makeRoom();
    this.#tokens.set(key, token);
  }

  #makeRoom(): void {
    const now = this.#now();
    for (const [key, held] of this.#tokens) if (held.expiresAt.getTime() <= now) this.#tokens.delete(key);
    // A Map iterates in insertion order, and `set` re-inserts: the first key is the longest held.
    for (const key of this.#tokens.keys()) {
      if (this.#tokens.size < MAX_MEMORY_TOKENS) break;
      this.#tokens.delete(key);
    }
  }

  delete(key: string): void {
    this.#tokens.delete(key);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemoryTokenStore { size: ${this.#tokens.size} }`;
  }

  /** Only the number of tokens held, so that logging or serializing the store never reveals a token. */
  toJSON(): Record<string, unknown> {
    return { size: this.#tokens.size };
  }
}
