/** An access token as the SDK hands it out. */
export interface AccessToken {
  accessToken: string;
  /** As the server sent it; validated to be `Bearer` (any case). */
  tokenType: string;
  expiresAt: Date;
  /** The scopes the server granted (its `scope` field), or the requested ones when it sent none. */
  scopes: string[];
}

/**
 * Where tokens are kept between requests. Implement it over Redis, a file or a database so that
 * several processes share one token instead of each fetching its own. Keys are hashes that
 * contain no secret; values contain the access token, so keep the store private.
 */
export interface TokenStore {
  get(key: string): AccessToken | undefined | Promise<AccessToken | undefined>;
  /** `expiresAt` is given separately so that stores with a TTL can use it directly. */
  set(key: string, token: AccessToken, expiresAt: Date): void | Promise<void>;
  /** Called when the server rejected the stored token (a 401). Optional. */
  delete?(key: string): void | Promise<void>;
}

export interface MemoryTokenStoreOptions {
  /** Clock in milliseconds, for dropping expired entries; the token manager passes its own. @default Date.now */
  now?: () => number;
}

/** The default store: a Map in this process. Expired entries are dropped when read. */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, AccessToken>();
  readonly #now: () => number;

  constructor(options: MemoryTokenStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  get(key: string): AccessToken | undefined {
    const token = this.#tokens.get(key);
    if (token && token.expiresAt.getTime() <= this.#now()) {
      this.#tokens.delete(key);
      return undefined;
    }
    return token;
  }

  set(key: string, token: AccessToken): void {
    this.#tokens.set(key, token);
  }

  delete(key: string): void {
    this.#tokens.delete(key);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `MemoryTokenStore { size: ${this.#tokens.size} }`;
  }

  toJSON(): Record<string, unknown> {
    return { size: this.#tokens.size };
  }
}
