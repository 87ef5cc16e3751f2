import { DEFAULTS } from '../defaults.js';
import { raceSignal } from '../http/delay.js';
import type { HttpClient, Logger } from '../http/types.js';
import { parseTokenResponse, tokenErrorFromResponse } from './token-response.js';
import { type AccessToken, MemoryTokenStore, type TokenStore } from './token-store.js';

export type TokenAuthMethod = 'client_secret_post' | 'client_secret_basic';

export interface TokenManagerOptions {
  http: HttpClient;
  /** `{auth_url}`; the token operation is `{auth_url}/oauth2/token`. */
  authUrl: URL;
  clientId: string;
  clientSecret: string;
  /** Scopes requested when `getToken` is called without `scopes`. */
  scopes: readonly string[];
  tokenAuthMethod?: TokenAuthMethod;
  tokenStore?: TokenStore;
  logger?: Logger;
  /** Clock in milliseconds; injectable for tests. */
  now?: () => number;
}

export interface GetTokenOptions {
  /** Fetch a new token even when the cached one is still fresh. */
  forceRefresh?: boolean;
  /** Stops waiting; a refresh shared with other callers keeps running for them. */
  signal?: AbortSignal;
  /** Another scope set than the client's; cached separately. */
  scopes?: readonly string[];
}

interface CacheEntry {
  token: AccessToken;
  /** Early refresh point: min(60 s, 10% of the lifetime) before expiry. */
  refreshAt: number;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function refreshMargin(lifetimeMs: number): number {
  return Math.min(DEFAULTS.earlyRefreshMaxMs, lifetimeMs * DEFAULTS.earlyRefreshFraction);
}

function copy(token: AccessToken): AccessToken {
  return { ...token, expiresAt: new Date(token.expiresAt.getTime()), scopes: [...token.scopes] };
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined for Basic auth. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * Client-credentials tokens: cached per scope set, refreshed early, and fetched by one request at a
 * time per scope set however many callers wait (the shared promise is cleared when it settles, so a
 * failed refresh is tried again by the next call).
 */
export class TokenManager {
  readonly #http: HttpClient;
  readonly #tokenUrl: URL;
  readonly #clientId: string;
  readonly #clientSecret: string;
  readonly #scopes: readonly string[];
  readonly #method: TokenAuthMethod;
  readonly #store: TokenStore;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #pending = new Map<string, Promise<AccessToken>>();
  readonly #storeKeys = new Map<string, Promise<string>>();
  /** Tokens the server refused; a shared store may still hand them out until it is updated. */
  readonly #rejected = new Set<string>();

  constructor(options: TokenManagerOptions) {
    this.#http = options.http;
    const base = options.authUrl.href.replace(/\/+$/, '');
    this.#tokenUrl = new URL(base + DEFAULTS.tokenPath);
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.#scopes = normalizeScopes(options.scopes);
    this.#method = options.tokenAuthMethod ?? DEFAULTS.tokenAuthMethod;
    this.#store = options.tokenStore ?? new MemoryTokenStore();
    this.#logger = options.logger ?? silent;
    this.#now = options.now ?? Date.now;
  }

  /** Scopes requested by default. */
  get scopes(): string[] {
    return [...this.#scopes];
  }

  /** A valid access token for the scope set, from the cache, the store, or the token endpoint. */
  async getToken(options: GetTokenOptions = {}): Promise<AccessToken> {
    const scopes = options.scopes ? normalizeScopes(options.scopes) : this.#scopes;
    const key = scopes.join(' ');
    if (!options.forceRefresh) {
      const cached = this.#cache.get(key);
      if (cached && this.#now() < cached.refreshAt) return copy(cached.token);
    }
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = this.#refresh(scopes, key, options.forceRefresh === true).finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    return copy(await raceSignal(pending, options.signal));
  }

  /**
   * Forgets cached tokens, so that the next `getToken` fetches a new one. With `accessToken`, only
   * that token is forgotten, and only if it is still current: many requests rejected with the same
   * token then cause one refresh, not one each.
   */
  invalidate(accessToken?: string): void {
    for (const [key, entry] of this.#cache) {
      if (accessToken !== undefined && entry.token.accessToken !== accessToken) continue;
      this.#cache.delete(key);
      this.#rejected.add(entry.token.accessToken);
      void this.#deleteStored(key);
    }
    if (accessToken !== undefined) this.#rejected.add(accessToken);
    // Bounded: only the most recent refusals matter.
    for (const old of this.#rejected) {
      if (this.#rejected.size <= 32) break;
      this.#rejected.delete(old);
    }
  }

  async #refresh(scopes: readonly string[], key: string, force: boolean): Promise<AccessToken> {
    const storeKey = await this.#storeKey(key);
    if (!force) {
      const stored = await this.#readStore(storeKey);
      if (stored) {
        const remaining = stored.expiresAt.getTime() - this.#now();
        const refreshAt = stored.expiresAt.getTime() - refreshMargin(remaining);
        if (this.#now() < refreshAt) {
          this.#cache.set(key, { token: stored, refreshAt });
          return stored;
        }
      }
    }
    const { token, lifetimeMs } = await this.#request(scopes);
    this.#cache.set(key, { token, refreshAt: token.expiresAt.getTime() - refreshMargin(lifetimeMs) });
    this.#logger.debug('push-api-client token acquired', { scopes: token.scopes, expiresAt: token.expiresAt });
    try {
      await this.#store.set(storeKey, copy(token), new Date(token.expiresAt.getTime()));
    } catch (error) {
      this.#logger.warn('push-api-client tokenStore.set failed; using the token anyway', { error: String(error) });
    }
    return token;
  }

  async #request(scopes: readonly string[]): Promise<{ token: AccessToken; lifetimeMs: number }> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', scope: scopes.join(' ') });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (this.#method === 'client_secret_basic') {
      const pair = `${formEncode(this.#clientId)}:${formEncode(this.#clientSecret)}`;
      headers.authorization = `Basic ${btoa(pair)}`;
    } else {
      // The spec's default: both credentials in the form body.
      form.set('client_id', this.#clientId);
      form.set('client_secret', this.#clientSecret);
    }
    const secrets = [this.#clientSecret];
    const response = await this.#http.send({
      operation: 'token',
      method: 'POST',
      url: this.#tokenUrl,
      headers,
      body: () => form.toString(),
      auth: 'none',
      retryPolicy: 'idempotent',
      mapError: (res, text) => tokenErrorFromResponse(res.status, text, secrets),
    });
    return parseTokenResponse(response.status, await response.text(), scopes, this.#now());
  }

  async #readStore(storeKey: string): Promise<AccessToken | undefined> {
    try {
      const stored = await this.#store.get(storeKey);
      if (!stored || typeof stored.accessToken !== 'string' || this.#rejected.has(stored.accessToken)) return undefined;
      // Stores that serialize (JSON in Redis) return the date as a string.
      const expiresAt = new Date(stored.expiresAt);
      if (Number.isNaN(expiresAt.getTime())) return undefined;
      return { ...stored, expiresAt, scopes: [...(stored.scopes ?? [])] };
    } catch (error) {
      this.#logger.warn('push-api-client tokenStore.get failed; fetching a new token', { error: String(error) });
      return undefined;
    }
  }

  async #deleteStored(key: string): Promise<void> {
    try {
      await this.#store.delete?.(await this.#storeKey(key));
    } catch (error) {
      this.#logger.warn('push-api-client tokenStore.delete failed', { error: String(error) });
    }
  }

  /** A store key that names the credential without containing the secret: a hash of URL, id and scopes. */
  #storeKey(key: string): Promise<string> {
    let storeKey = this.#storeKeys.get(key);
    if (!storeKey) {
      const material = new TextEncoder().encode(`${this.#tokenUrl.href}\n${this.#clientId}\n${key}`);
      storeKey = crypto.subtle.digest('SHA-256', material).then((digest) => {
        const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
        return `push-api-client:token:${hex}`;
      });
      this.#storeKeys.set(key, storeKey);
    }
    return storeKey;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenManager { clientId: '${this.#clientId}', tokenUrl: '${this.#tokenUrl.href}', scopes: [${this.#scopes.join(', ')}] }`;
  }

  toJSON(): Record<string, unknown> {
    return { clientId: this.#clientId, tokenUrl: this.#tokenUrl.href, scopes: [...this.#scopes], method: this.#method };
  }
}

/** Sorted and de-duplicated, so that the same set in any order shares one cache entry. */
export function normalizeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.map((scope) => scope.trim()).filter((scope) => scope !== ''))].sort();
}
