/**
 * The bearer token. In this order:
 * - the store key's hash (`sha256Hex`): a key that names the credential and never contains the
 *   secret, hashed at once where the runtime has `node:crypto`;
 * - the manager (`TokenManager`): client credentials exchanged at the token endpoint (spec,
 *   operation 1), the token cached until shortly before `expires_in`, one refresh in flight at a
 *   time for every caller;
 * - the token endpoint's answer, checked before it is believed (`parseTokenResponse`), and its
 *   OAuth errors;
 * - where tokens are kept between calls and processes (`TokenStore`, `MemoryTokenStore`).
 */
import { DEFAULTS } from '../defaults.js';
import {
  answeredBy,
  ConfigurationError,
  PushError,
  parseRetryAfterHeader,
  requestIdFrom,
  TokenError,
} from '../errors.js';
import { type Credentials, TOKEN_ANSWER_SECRETS } from '../http/attempt.js';
import { answerText, MAX_TOKEN_RESPONSE_BYTES, noHooks, type SafeHooks } from '../http/fetch.js';
import {
  type BearerTokenSource,
  type CallSettings,
  callSettings,
  ResponsePromise,
  responseMetadataOf,
  unsignalled,
} from '../http/http-client.js';
import type {
  Logger,
  RequestOptions,
  ResponseMetadata,
  TokenRefreshHookEvent,
  WithResponse,
} from '../http/public-types.js';
import { classifyFailure } from '../http/retry.js';
import type { HttpClient, RecoveryStep, RequestSpec } from '../http/types.js';
import { silentLogger } from '../internal/logger.js';
import {
  base64Forms,
  parseJsonObject,
  REDACTED,
  scrubJsonValue,
  scrubSecrets,
  trimHttpWhitespace,
  trimTrailingSlashes,
  truncateText,
} from '../internal/text.js';
import { abortErrorFrom, nextTurn, raceSignal } from '../internal/waits.js';
import { REFRESH_ENDS_WITH_ITS_STARTER } from './refresh-owner.js';

// ── The store key's hash ─────────────────────────────────────────────────────────────────────────
// A token store's key, hashed without waiting for an event-loop turn where the runtime allows.

/** A store key names the credential by a hash of its token URL, client id and scopes, never the secret. */
const STORE_KEY_PREFIX = 'push-api-client:token:';

/**
 * What a `node:crypto` found at run time must hash, and the hex WebCrypto gives for its UTF-8 (an
 * unpaired surrogate as U+FFFD): ASCII, 2-byte and 4-byte characters, so that a stand-in reading
 * strings as Latin-1 or UTF-16 is caught too, as keys with a non-ASCII client id would differ.
 */
const HASH_PROBE = [
  'abc\u00e9\u{1F642}\uD800',
  '84c85827b5eac11e56c0c870ca678e74ac06e14b780233a41cc1d8236e854ac7',
] as const;

/**
 * Node's `node:crypto`, where the runtime has it (Node, Bun, Deno, workerd with nodejs_compat),
 * found through `process.getBuiltinModule` so that no build imports a `node:` module. A runtime
 * whose lookup throws, or a bundler's stand-in `process`, leaves WebCrypto to hash. So does a
 * stand-in `node:crypto` (polyfills whose createHash throws "not implemented"): the one found must
 * hash {@link HASH_PROBE} to its hex here, else every store key would fail or differ from the keys
 * older versions wrote.
 */
export function findNodeCrypto(runtime?: unknown): typeof import('node:crypto') | undefined {
  try {
    // Read inside the try: a sandbox's `process` getter may throw.
    const host = runtime === undefined ? (globalThis as { process?: unknown }).process : runtime;
    const lookup = (host as { getBuiltinModule?: unknown } | undefined)?.getBuiltinModule;
    if (typeof lookup !== 'function') return undefined;
    const found = lookup.call(host, 'node:crypto') as typeof import('node:crypto') | undefined;
    if (typeof found?.createHash !== 'function') return undefined;
    return found.createHash('sha256').update(HASH_PROBE[0], 'utf8').digest('hex') === HASH_PROBE[1] ? found : undefined;
  } catch {
    return undefined;
  }
}

const nodeCrypto = findNodeCrypto();

/**
 * The SHA-256 of a store key's material, as hex. With `node:crypto` the hash is known at once, so
 * a cold process's first token request leaves without waiting for a turn of the event loop;
 * elsewhere WebCrypto gives the same hex a moment later.
 */
function sha256Hex(material: string): string | Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash('sha256').update(material, 'utf8').digest('hex');
  return crypto.subtle
    .digest('SHA-256', new TextEncoder().encode(material))
    .then((digest) => Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join(''));
}

// ── The manager ──────────────────────────────────────────────────────────────────────────────────
// Options, the cache per scope set, and the one refresh every caller of a scope set shares.

/**
 * How the client id and secret are sent to the token endpoint: `client_secret_post` in the form
 * body (what the spec shows), `client_secret_basic` in an HTTP Basic Authorization header.
 */
export type TokenAuthMethod = 'client_secret_post' | 'client_secret_basic';

/**
 * The client secret, or a function that fetches it from a vault or secret manager. The function
 * is called each time a token is requested from the token endpoint (never for a cached or stored
 * token), and once more after an `invalid_client` answer, so that a rotated secret is picked up
 * without a restart. What it returns is treated like a string secret: never logged, scrubbed from
 * error bodies.
 */
export type ClientSecretSource = string | (() => string | Promise<string>);

export interface TokenManagerOptions {
  http: HttpClient;
  /** `{auth_url}`; the token operation is `{auth_url}/oauth2/token`. */
  authUrl: URL;
  clientId: string;
  /** The secret, or a function that fetches it when a token is needed (see {@link ClientSecretSource}). */
  clientSecret: ClientSecretSource;
  /** Scopes requested when `getToken` is called without `scopes`. */
  scopes: readonly string[];
  /** How the credentials travel to the token endpoint. @default 'client_secret_post' */
  tokenAuthMethod?: TokenAuthMethod;
  /** Where tokens are kept between requests. @default a new MemoryTokenStore on the `now` clock */
  tokenStore?: TokenStore;
  /** Receives a debug line per token acquired and warnings when the store fails. @default no logging */
  logger?: Logger;
  /** Clock in milliseconds; all expiry decisions use it. Injectable for tests. @default Date.now */
  now?: () => number;
  /** Told of each token requested from the endpoint. @default no hooks */
  hooks?: SafeHooks;
  /** Headers for every token request (the client's `defaultHeaders`, checked). @default none */
  defaultHeaders?: Readonly<Record<string, string>>;
  /**
   * The client's `timeoutMs`: also the longest a `tokenStore` call may take when the call sets none.
   * @default 30000
   */
  timeoutMs?: number;
  /**
   * How long before expiry a token is refreshed, so that no request sets out with a token about to
   * expire on the way. Capped at half the token's lifetime, so a token is always used for a while.
   * @default min(60000, 10% of the token's lifetime)
   */
  refreshMarginMs?: number;
  /**
   * Whether a refresh is handed over when the call that started it leaves before it ends (gives it
   * up, or aborts): the callers still waiting then start a new one. For runtimes whose requests own
   * their I/O (workers); see refresh-owner.web.ts. There, a caller also waits for a refresh another
   * call started for at most its own `timeoutMs` before it starts one of its own: a starter that
   * stopped waiting without a signal leaves one that never settles.
   * @default false in Node, Bun and Deno; true in the build for workers and edge runtimes
   */
  refreshEndsWithItsStarter?: boolean;
}

/**
 * Options of `getToken`. `timeoutMs`, `maxRetries` and `headers` apply to a token request this call
 * starts; a call that joins a refresh already in flight waits for that one as it was sent.
 */
export interface GetTokenOptions extends RequestOptions {
  /**
   * Fetch a new token from the token endpoint, bypassing the cache and the store. Joins a forced
   * refresh already in flight, never a plain one (which may answer with the stored token).
   * @default false
   */
  forceRefresh?: boolean | undefined;
  /**
   * Stops waiting; a refresh shared with other callers keeps running for them, and one that nobody
   * else waits for is aborted, so that it does not keep the process alive. In the build for workers
   * and edge runtimes, a refresh this call started is handed over instead: the callers still
   * waiting start a new one, since on Workers the first one's request ends with this call's (a
   * call that stops waiting without its signal is not seen leaving: the others wait `timeoutMs`).
   * @default undefined (wait until the token arrives)
   */
  signal?: AbortSignal | undefined;
  /** Another scope set than the client's; cached separately. @default the manager's `scopes` */
  scopes?: readonly string[] | undefined;
}

interface CacheEntry {
  token: AccessToken;
  /** Early refresh point: min(60 s, 10% of the lifetime) before expiry. */
  refreshAt: number;
}

/** A token, and the token endpoint's answer that brought it (`null` when it came from the store). */
type Refreshed = WithResponse<AccessToken, ResponseMetadata | null>;

/** The token endpoint's answer, parsed. */
interface TokenAnswer extends ParsedTokenResponse {
  response: ResponseMetadata;
}

interface PendingRefresh {
  promise: Promise<Refreshed>;
  /** A forced refresh always asks the token endpoint; a plain one may answer from the store. */
  forced: boolean;
  /** It replaces a token the service rejected (`invalidate`). */
  rejected: boolean;
  /** Callers waiting for it now. */
  waiting: number;
  /** It has settled. */
  done: boolean;
  /** Aborts its token request: only when the last caller waiting gives it up (`#prefetch`). */
  controller: AbortController;
  /** Rejects with HANDED_OVER when its starter left it to the callers still waiting (`#handOver`). */
  handedOver: Promise<never>;
  handOver: () => void;
}

/** Why a wait for a refresh ended without a token: its starter left, and the caller asks again. */
const HANDED_OVER: unique symbol = Symbol('handed over');

/** One caller's wait for a pending refresh; `leave` ends it once, whoever calls it first. */
interface Joined {
  entry: PendingRefresh;
  key: string;
  /** This caller started the refresh. */
  starter: boolean;
  leave(): void;
  hasLeft(): boolean;
}

/** A token asked for by a caller that may give it up (`release`). */
interface PrefetchedToken {
  ready: Promise<unknown>;
  release(): void;
}

let prefetchFrom: (manager: TokenManager, options: GetTokenOptions) => PrefetchedToken;
let freshTokenFrom: (manager: TokenManager, options: GetTokenOptions) => string | undefined;
let stillCurrentFrom: (manager: TokenManager, options: GetTokenOptions, accessToken: string) => boolean;

/**
 * The token manager as the transport sees it: its tokens, their invalidation, the secret's forms,
 * and a token asked for by a caller that may give it up, which is not part of its public API.
 */
export function bearerSourceOf(manager: TokenManager): BearerTokenSource {
  return {
    getToken: (options) => manager.getToken(options),
    invalidate: (accessToken) => manager.invalidate(accessToken),
    clientSecretForms: () => manager.clientSecretForms(),
    prefetch: (options) => prefetchFrom(manager, options),
    freshToken: (options) => freshTokenFrom(manager, options),
    stillCurrent: (options, accessToken) => stillCurrentFrom(manager, options, accessToken),
  };
}

function defaultRefreshMargin(lifetimeMs: number): number {
  return Math.min(DEFAULTS.earlyRefreshMaxMs, lifetimeMs * DEFAULTS.earlyRefreshFraction);
}

function isInvalidClient(error: unknown): boolean {
  return error instanceof TokenError && error.error === 'invalid_client';
}

function copy(token: AccessToken): AccessToken {
  return { ...token, expiresAt: new Date(token.expiresAt.getTime()), scopes: [...token.scopes] };
}

/** The secret as sent in a form, in a URL and as is. */
function secretForms(secret: string): string[] {
  return [secret, formEncode(secret), encodeURIComponent(secret)];
}

/** RFC 6749 §2.3.1: id and secret are form-urlencoded before they are joined for Basic auth. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * Client-credentials tokens: cached per scope set, refreshed early, and fetched by one request at a
 * time per scope set however many callers wait (the shared promise is cleared when it settles, so a
 * failed refresh is tried again by the next call).
 *
 * Requests made through the client take their token here on their own, and a 401 invalidates it
 * and re-sends once; reach for `client.tokens` only to warm up, to call another API with the same
 * credential, or to force a new token.
 *
 * @example
 * ```ts
 * import { PushClient } from 'push-api-client';
 *
 * const client = new PushClient();
 * const token = await client.tokens.getToken();
 * console.log(token.tokenType, token.expiresAt.toISOString(), token.scopes);
 * ```
 */
export class TokenManager {
  readonly #http: HttpClient;
  readonly #tokenUrl: URL;
  readonly #clientId: string;
  readonly #clientSecret: ClientSecretSource;
  readonly #refreshMarginMs: number | undefined;
  readonly #scopes: readonly string[];
  readonly #method: TokenAuthMethod;
  readonly #store: TokenStore;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #pending = new Map<string, PendingRefresh>();
  readonly #storeKeys = new Map<string, string | Promise<string>>();
  /** Tokens the server refused; a shared store may still hand them out until it is updated. */
  readonly #rejected = new Set<string>();
  /** Scope sets whose token was invalidated: their next refresh is reported as `rejected`. */
  readonly #invalidated = new Set<string>();
  readonly #hooks: SafeHooks;
  readonly #defaultHeaders: Readonly<Record<string, string>>;
  readonly #timeoutMs: number;
  readonly #refreshEndsWithItsStarter: boolean;
  /** The client secret in the forms it was last sent in: data answers are scrubbed of it too. */
  #sentSecretForms: readonly string[] = [];

  constructor(options: TokenManagerOptions) {
    this.#http = options.http;
    const base = trimTrailingSlashes(options.authUrl.href);
    this.#tokenUrl = new URL(base + DEFAULTS.tokenPath);
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    if (typeof options.clientSecret === 'string') this.#sentSecretForms = secretForms(options.clientSecret);
    this.#refreshMarginMs = options.refreshMarginMs;
    this.#scopes = normalizeScopes(options.scopes);
    this.#method = options.tokenAuthMethod ?? DEFAULTS.tokenAuthMethod;
    this.#now = options.now ?? Date.now;
    this.#hooks = options.hooks ?? noHooks;
    this.#defaultHeaders = options.defaultHeaders ?? {};
    this.#timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.#refreshEndsWithItsStarter = options.refreshEndsWithItsStarter ?? REFRESH_ENDS_WITH_ITS_STARTER;
    this.#store = options.tokenStore ?? new MemoryTokenStore({ now: this.#now });
    this.#logger = options.logger ?? silentLogger;
  }

  /**
   * The client secret as known so far (a provider's last value), in every form it is sent in. A
   * service that received it may echo it in any later answer, a redirect's target included.
   */
  clientSecretForms(): readonly string[] {
    return this.#sentSecretForms;
  }

  /** Scopes requested by default. */
  get scopes(): string[] {
    return [...this.#scopes];
  }

  /**
   * A valid access token for the scope set, from the cache, the store, or the token endpoint.
   * Tokens are refreshed `refreshMarginMs` (by default min(60 s, 10% of their lifetime)) before
   * they expire, so that a request
   * does not set out with a token about to expire on the way. When that early refresh fails, the
   * current token is answered until it expires (a `warn` line says so), unless `forceRefresh`.
   * @throws {TokenError} the token endpoint answered an error status (after retries, for those that
   *   are retryable) or an unusable token; its `error` holds the OAuth code, such as `invalid_client`.
   * @throws {AbortError} `signal` fired before the token arrived (a refresh shared with other
   *   callers goes on for them).
   * @throws {ConnectionError} no answer from the token endpoint after the retries (`TimeoutError`
   *   when it was too slow).
   *
   * @example
   * ```ts
   * // Bounded wait, and another scope set than the client's (cached separately).
   * const token = await client.tokens.getToken({
   *   scopes: ['https://api.push.test/report.read'],
   *   signal: AbortSignal.timeout(5_000),
   * });
   * await fetch('https://api.push.test/reports', { headers: { authorization: `Bearer ${token.accessToken}` } });
   * ```
   */
  getToken(options: GetTokenOptions = {}): ResponsePromise<AccessToken, ResponseMetadata | null> {
    return new ResponsePromise(this.#getToken(options));
  }

  /**
   * Starts getting a token as `getToken` does, for a caller that may end up not needing it (a
   * publish asking before it has checked its input). `release()` says it is not needed: if its
   * refresh is still on its way and nobody else is waiting for it, it is aborted, so that no
   * connection or timer of it keeps the process alive. The transport reaches it through
   * `bearerSourceOf`, so that it stays off the public API.
   */
  #prefetch(options: GetTokenOptions): PrefetchedToken {
    let joined: Joined | undefined;
    const ready = this.#getToken(options, (join) => {
      joined = join;
    });
    return {
      ready,
      release: () => {
        const join = joined;
        joined = undefined;
        if (join === undefined) return;
        join.leave();
        this.#leftEarly(join.entry, join.key, join.starter);
      },
    };
  }

  /** A caller left a refresh before it ended: hand it over (its starter, where I/O ends with it) or abandon it if unwanted. */
  #leftEarly(entry: PendingRefresh, key: string, starter: boolean): void {
    if (starter && this.#refreshEndsWithItsStarter) this.#handOver(entry, key);
    else this.#abandonIfUnwanted(entry, key);
  }

  /**
   * A refresh whose starter left before it ended, where its I/O ends with its starter: it is
   * aborted, and the callers still waiting ask again, so that one of them starts a refresh of its
   * own (refresh-owner.web.ts). With nobody waiting, it is simply abandoned.
   */
  #handOver(entry: PendingRefresh, key: string): void {
    if (entry.done) return;
    if (entry.waiting === 0) {
      this.#abandonIfUnwanted(entry, key);
      return;
    }
    this.#forsake(entry, key);
    entry.handOver();
    entry.controller.abort();
  }

  /**
   * Aborts a refresh still on its way that nobody waits for any more (its last caller gave it up,
   * or aborted), so that no connection or timer of it keeps the process alive after the call that
   * caused it has ended. The next call asks again.
   */
  #abandonIfUnwanted(entry: PendingRefresh, key: string): void {
    if (entry.waiting > 0 || entry.done) return;
    // A plain refresh whose place a forced one took is no longer shared (nobody can join it), but it
    // is still on its way: it is aborted all the same, and only the refresh in its place is kept.
    this.#forsake(entry, key);
    entry.controller.abort();
  }

  #cached(options: GetTokenOptions): CacheEntry | undefined {
    const scopes = options.scopes ? normalizeScopes(options.scopes) : this.#scopes;
    return this.#cache.get(scopes.join(' '));
  }

  /** The access token `getToken(options)` would answer with from the cache, asking nobody. */
  #freshToken(options: GetTokenOptions): string | undefined {
    const cached = this.#cached(options);
    return cached !== undefined && this.#now() < cached.refreshAt ? cached.token.accessToken : undefined;
  }

  /**
   * Whether a token handed out earlier is still the cached one: a caller that took it before a
   * refresh began may still send with it, even once its lifetime has run out meanwhile (the
   * service then says so with a 401, which brings the refresh). One that was refused
   * (`invalidate` drops it from the cache) or replaced is not: its caller asks again.
   */
  #stillCurrent(options: GetTokenOptions, accessToken: string): boolean {
    return this.#cached(options)?.token.accessToken === accessToken;
  }

  static {
    prefetchFrom = (manager, options) => manager.#prefetch(options);
    freshTokenFrom = (manager, options) => manager.#freshToken(options);
    stillCurrentFrom = (manager, options, accessToken) => manager.#stillCurrent(options, accessToken);
  }

  async #getToken(options: GetTokenOptions, onJoin?: (join: Joined) => void): Promise<Refreshed> {
    const scopes = options.scopes ? normalizeScopes(options.scopes) : this.#scopes;
    const call = callSettings(options, this.#defaultHeaders);
    const key = scopes.join(' ');
    const force = options.forceRefresh === true;
    for (;;) {
      // Looked at again after a hand-over: the refresh given up may have brought its token already
      // (it was being stored).
      if (!force) {
        const cached = this.#cache.get(key);
        if (cached && this.#now() < cached.refreshAt) return { data: copy(cached.token), response: null };
      }
      // Before any refresh is started or joined: one nobody awaits could fail unhandled.
      if (options.signal?.aborted) throw abortErrorFrom(options.signal);
      const joined = this.#join(key, scopes, force, call);
      onJoin?.(joined);
      const { entry, starter, leave } = joined;
      // Where a refresh's I/O ends with its starter's request, a starter that moved on without a
      // signal (it raced getToken against a timer of its own, or did not await it) left a refresh
      // that never settles, and nothing tells this caller so: one started by another call is waited
      // for as long as one attempt of this call's may take, on a timer of this call's own, then
      // handed over as if its starter had left.
      const waits = [entry.promise, entry.handedOver];
      let timer: ReturnType<typeof setTimeout> | undefined;
      if (!starter && this.#refreshEndsWithItsStarter) {
        waits.push(
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(HANDED_OVER), call.timeoutMs ?? this.#timeoutMs);
          }),
        );
      }
      try {
        // The same wait raced against a hand-over, which only a starter's leaving causes.
        const refreshed = await raceSignal(Promise.race(waits), options.signal);
        return { data: copy(refreshed.data), response: refreshed.response };
      } catch (error) {
        if (error === HANDED_OVER) {
          // Its starter left it: this caller asks again, and starts or joins the refresh in its
          // place, unless it has given the token up itself (a prefetch released).
          if (joined.hasLeft()) throw abortErrorFrom(entry.controller.signal);
          // Not aborted when its wait ran out: it may be alive, only slow, for a caller of its own request.
          this.#forsake(entry, key);
          continue;
        }
        throw error;
      } finally {
        clearTimeout(timer);
        leave();
        // The last caller waiting aborted (an upload, a publishBatch, a getToken given up): as a
        // publish does when it no longer needs its early token, the refresh is not left running.
        if (options.signal?.aborted) this.#leftEarly(entry, key, starter);
      }
    }
  }

  /**
   * A refresh no longer to be joined: the next caller starts one in its place. Given up, it leaves
   * things as it found them: the next refresh is still told the token was rejected.
   */
  #forsake(entry: PendingRefresh, key: string): void {
    if (this.#pending.get(key) !== entry) return;
    this.#pending.delete(key);
    if (entry.rejected) this.#invalidated.add(key);
  }

  /** Joins the refresh in flight for `key`, or starts one. */
  #join(key: string, scopes: readonly string[], force: boolean, call: CallSettings): Joined {
    let pending = this.#pending.get(key);
    let starter = false;
    // A plain refresh in flight may answer with the stored token, which a forced call refuses; the
    // plain one keeps running for its own callers, and later callers join the forced one.
    if (!pending || (force && !pending.forced)) {
      const controller = new AbortController();
      const rejected = !force && this.#invalidated.delete(key);
      let handOver = () => {};
      const handedOver = new Promise<never>((_, reject) => {
        handOver = () => reject(HANDED_OVER);
      });
      // Raced by every waiter; one that is never handed over never rejects.
      handedOver.catch(() => {});
      const entry: PendingRefresh = {
        promise: this.#refresh(scopes, key, force, rejected, call, controller.signal).finally(() => {
          entry.done = true;
          if (this.#pending.get(key) === entry) this.#pending.delete(key);
        }),
        forced: force,
        rejected,
        waiting: 0,
        done: false,
        controller,
        handedOver,
        handOver,
      };
      this.#pending.set(key, entry);
      pending = entry;
      starter = true;
    }
    const entry = pending;
    entry.waiting++;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      entry.waiting--;
    };
    return { entry, key, starter, leave, hasLeft: () => left };
  }

  /**
   * Forgets cached tokens, so that the next `getToken` fetches a new one. With `accessToken`, only
   * that token is forgotten, and only if it is still current: many requests rejected with the same
   * token then cause one refresh, not one each. The token is also deleted from the store, when
   * the store implements `delete`.
   *
   * @example
   * ```ts
   * // Another API answered 401 to a token from getToken(): forget that one token and try once more.
   * const { accessToken } = await client.tokens.getToken();
   * const headers = { authorization: `Bearer ${accessToken}` };
   * const response = await fetch('https://api.push.test/reports', { headers });
   * if (response.status === 401) client.tokens.invalidate(accessToken); // the next getToken() fetches anew
   * ```
   */
  invalidate(accessToken?: string): void {
    for (const [key, entry] of this.#cache) {
      if (accessToken !== undefined && entry.token.accessToken !== accessToken) continue;
      this.#cache.delete(key);
      this.#invalidated.add(key);
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

  /**
   * Caches a token for its scope set. Scopes can come from each call (`client.request`), so the
   * cache is bounded like the memory store: past the bound, expired tokens go first, then the oldest.
   */
  #remember(key: string, entry: CacheEntry): void {
    this.#cache.delete(key);
    this.#cache.set(key, entry);
    if (this.#cache.size <= MAX_MEMORY_TOKENS) return;
    const now = this.#now();
    for (const [old, cached] of this.#cache) {
      if (this.#cache.size <= MAX_MEMORY_TOKENS) return;
      if (cached.token.expiresAt.getTime() <= now) this.#cache.delete(old);
    }
    for (const old of this.#cache.keys()) {
      if (this.#cache.size <= MAX_MEMORY_TOKENS) return;
      this.#cache.delete(old);
    }
  }

  async #refresh(
    scopes: readonly string[],
    key: string,
    force: boolean,
    rejected: boolean,
    call: CallSettings,
    abandoned: AbortSignal,
  ): Promise<Refreshed> {
    const reason: TokenRefreshHookEvent['reason'] = force
      ? 'forced'
      : rejected
        ? 'rejected'
        : this.#cache.has(key)
          ? 'expiring'
          : 'initial';
    const storeKey = await this.#storeKey(key);
    // The longest one attempt of the token request, or one call of the store, may take.
    const attemptMs = call.timeoutMs ?? this.#timeoutMs;
    // A token still good at the service, in its refresh margin: the cached one, or one another
    // process stored (a new process finds only that one).
    let current: AccessToken | undefined;
    if (!force) {
      const stored = await this.#readStore(storeKey, attemptMs, abandoned);
      if (stored) {
        const refreshAt = this.#storedRefreshAt(key, stored);
        if (this.#now() < refreshAt) {
          this.#remember(key, { token: stored, refreshAt });
          return { data: stored, response: null };
        }
      }
      current =
        this.#validUntilExpiry(key) ?? (stored && this.#now() < stored.expiresAt.getTime() ? stored : undefined);
    }
    if (abandoned.aborted) throw abortErrorFrom(abandoned);
    let answer: TokenAnswer;
    try {
      // With a token at hand, an early refresh is tried once: its retries, waiting out a Retry-After
      // of the token endpoint's choosing, would hold every request of the margin while that token
      // could be used. The next call tries again.
      answer = await this.#reportedRequest(scopes, reason, current ? { ...call, maxRetries: 0 } : call, abandoned);
    } catch (error) {
      if (current === undefined || abandoned.aborted) throw error;
      if (this.#stillGood(current)) {
        // An early refresh is a precaution: the token it replaces is still good at the service. A
        // token endpoint down for a moment then fails no request; the next call tries again.
        this.#logger.warn('push-api-client token refresh failed; using the current token until it expires', {
          expiresAt: new Date(current.expiresAt.getTime()),
          error: error instanceof Error ? error.name : 'Error',
        });
        if (!this.#cache.has(key))
          this.#remember(key, { token: current, refreshAt: this.#storedRefreshAt(key, current) });
        return { data: copy(current), response: null };
      }
      // Checked again, and gone: the service refused it (`invalidate`), or it expired, while the one
      // attempt was on its way (a token of seconds, an attempt that timed out). The refresh is needed
      // now, with the retries it was spared, when a retry can help.
      if (classifyFailure(error, 'idempotent') !== 'retry') throw error;
      answer = await this.#reportedRequest(scopes, reason, call, abandoned);
    }
    const { token, lifetimeMs, scopesLeftOut, response } = answer;
    // Node's fetch puts the token request's connection back in its pool a turn after the answer
    // ended: the data request that waited for this token then reuses it instead of paying a new
    // connection's handshake (with TLS, two or three round trips).
    await nextTurn();
    this.#remember(key, { token, refreshAt: token.expiresAt.getTime() - this.#refreshMargin(lifetimeMs) });
    // A token the endpoint hands out again after a refusal (many issue the same one while it is
    // valid) is current again: the store may give it back to this manager.
    this.#rejected.delete(token.accessToken);
    // Never the scopes themselves: they held the token or the client secret.
    if (scopesLeftOut > 0)
      this.#logger.warn('push-api-client granted scopes holding a secret left out', { scopesLeftOut });
    this.#logger.debug('push-api-client token acquired', { scopes: token.scopes, expiresAt: token.expiresAt });
    const stored = await askStore(
      () => this.#store.set(storeKey, copy(token), new Date(token.expiresAt.getTime())),
      attemptMs,
      abandoned,
    );
    if (!stored.answered && !abandoned.aborted) {
      this.#logger.warn('push-api-client tokenStore.set failed; using the token anyway', {
        error: String(stored.error),
      });
    }
    return { data: token, response };
  }

  /** The cached token of a scope set while the service still takes it: not expired, not refused. */
  #validUntilExpiry(key: string): AccessToken | undefined {
    const cached = this.#cache.get(key);
    return cached !== undefined && this.#stillGood(cached.token) ? cached.token : undefined;
  }

  /** Whether the service still takes `token`, as far as this manager knows: not expired, not refused. */
  #stillGood(token: AccessToken): boolean {
    return !this.#rejected.has(token.accessToken) && this.#now() < token.expiresAt.getTime();
  }

  /**
   * When a token read from the store is due for refresh. A token this manager fetched keeps the
   * point computed from its full lifetime: a margin recomputed from the time left would shrink at
   * each read, and the token would be used until just before it expires. A token stored by another
   * process has an unknown lifetime, so it gets the largest margin (60 s, or `refreshMarginMs`);
   * shorter-lived tokens are then not shared, which costs a token request, never a request sent
   * with a dying token.
   */
  #storedRefreshAt(key: string, stored: AccessToken): number {
    const cached = this.#cache.get(key);
    if (cached?.token.accessToken === stored.accessToken) return cached.refreshAt;
    return stored.expiresAt.getTime() - (this.#refreshMarginMs ?? DEFAULTS.earlyRefreshMaxMs);
  }

  #refreshMargin(lifetimeMs: number): number {
    if (this.#refreshMarginMs === undefined) return defaultRefreshMargin(lifetimeMs);
    return Math.min(this.#refreshMarginMs, lifetimeMs / 2);
  }

  /** `#request`, told to the `tokenRefresh` hook. */
  async #reportedRequest(
    scopes: readonly string[],
    reason: TokenRefreshHookEvent['reason'],
    call: CallSettings,
    abandoned: AbortSignal,
  ): Promise<TokenAnswer> {
    const started = performance.now();
    const report = (expiresAt: Date | undefined, error: string | undefined) =>
      this.#hooks.tokenRefresh({
        operation: 'token',
        reason,
        scopes: [...scopes],
        durationMs: Math.round(performance.now() - started),
        expiresAt,
        error,
      });
    try {
      const result = await this.#request(scopes, call, abandoned);
      report(new Date(result.token.expiresAt.getTime()), undefined);
      return result;
    } catch (error) {
      // Given up by its last caller: not a failure to tell anyone about.
      if (!abandoned.aborted) report(undefined, error instanceof Error ? error.name : 'Error');
      throw error;
    }
  }

  /**
   * A token from the endpoint. With a secret provider, an `invalid_client` answer may mean the
   * secret was rotated since it was read: a recovery step of the request asks the provider once
   * more and, if its answer differs, the transport sends the request once more with it.
   */
  async #request(scopes: readonly string[], call: CallSettings, abandoned: AbortSignal): Promise<TokenAnswer> {
    const secret = await this.#secret();
    if (abandoned.aborted) throw abortErrorFrom(abandoned);
    // The service counts a token's lifetime from when it issued it, during the attempt that got
    // the answer. Counted from the answer's arrival instead, a token whose answer was slow on the
    // way would be used past its end at the service: every request then meets a 401.
    let sentAt = this.#now();
    const attemptStarted = () => {
      sentAt = this.#now();
    };
    const rotate: RecoveryStep = {
      name: "asking the secret provider for the client secret's new value",
      when: isInvalidClient,
      next: async () => {
        if (abandoned.aborted) return undefined;
        const rotated = await this.#secret();
        return rotated === secret ? undefined : this.#credentialParts(scopes, rotated, attemptStarted);
      },
    };
    const response = await this.#http.send({
      operation: 'token',
      method: 'POST',
      url: this.#tokenUrl,
      ...this.#credentialParts(scopes, secret, attemptStarted),
      auth: 'none',
      retryPolicy: 'idempotent',
      // The body holds the client secret: a redirect is a misconfigured authUrl, never followed.
      redirects: 'none',
      // A refresh may be shared by several callers: none of their signals may abort it, only its
      // being given up by the last one waiting (`prefetch`).
      call: { ...unsignalled(call), signal: abandoned },
      // A token answer is a few KB; a service sending more is broken or hostile.
      maxResponseBytes: MAX_TOKEN_RESPONSE_BYTES,
      // A middleware that logs answers never writes down the token this one hands out.
      answerSecrets: TOKEN_ANSWER_SECRETS,
      ...(typeof this.#clientSecret === 'function' && { recover: [rotate] }),
    });
    try {
      const text = await answerText(response);
      // The client secret, like the token, is never kept among the granted scopes.
      const parsed = parseTokenResponse(response.status, text, scopes, sentAt, this.clientSecretForms());
      // The endpoint's headers go to the caller without the secret, should a hostile service echo it.
      return { ...parsed, response: responseMetadataOf(response, this.clientSecretForms()) };
    } catch (error) {
      throw error instanceof PushError ? answeredBy(error, requestIdFrom(response.headers)) : error;
    }
  }

  /** The secret as given, or what the provider returns now. */
  async #secret(): Promise<string> {
    const source = this.#clientSecret;
    if (typeof source === 'string') return source;
    let value: unknown;
    try {
      value = await source();
    } catch (error) {
      throw new ConfigurationError('PushClient: the clientSecret provider failed', { cause: error });
    }
    if (typeof value !== 'string' || value === '') {
      throw new ConfigurationError('PushClient: the clientSecret provider must resolve to a non-empty string');
    }
    return value;
  }

  /**
   * What a token request sends that depends on the secret: headers, form body, the secrets to
   * scrub, and the error mapping that scrubs them. `onAttempt` is told when an attempt opens its body.
   */
  #credentialParts(
    scopes: readonly string[],
    clientSecret: string,
    onAttempt: () => void,
  ): Pick<RequestSpec, 'headers' | 'body' | 'secrets' | 'mapError' | 'credentials'> {
    const form = new URLSearchParams({ grant_type: 'client_credentials', scope: scopes.join(' ') });
    // The call's headers go under these in the transport.
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    // The secret in every form it is sent in, so that an error body echoing the request is scrubbed.
    const forms = secretForms(clientSecret);
    this.#sentSecretForms = [...forms];
    // The token endpoint's own answers are searched for base64 forms too (one quoting the request
    // body it received, or the Basic header). Data answers, searched for the plain forms on every
    // request, never received the secret.
    const secrets = [...forms, ...new Set(forms.flatMap((form) => base64Forms(form)))];
    // Added by the transport after middleware has run, so that no middleware sees the secret.
    const credentials: Credentials = { headers: {}, form: {} };
    if (this.#method === 'client_secret_basic') {
      const pair = btoa(`${formEncode(this.#clientId)}:${formEncode(clientSecret)}`);
      credentials.headers.authorization = `Basic ${pair}`;
      secrets.push(pair);
    } else {
      // The spec's default: both credentials in the form body.
      credentials.form.client_id = this.#clientId;
      credentials.form.client_secret = clientSecret;
    }
    const body = form.toString();
    return {
      headers,
      credentials,
      body: () => {
        onAttempt();
        return body;
      },
      secrets,
      mapError: (res, text) =>
        tokenErrorFromResponse(res.status, text, secrets, {
          retryAfterMs: parseRetryAfterHeader(res.headers.get('retry-after')),
          requestId: requestIdFrom(res.headers),
          tokenUrl: this.#tokenUrl,
        }),
    };
  }

  async #readStore(storeKey: string, timeoutMs: number, abandoned: AbortSignal): Promise<AccessToken | undefined> {
    const answer = await askStore(() => this.#store.get(storeKey), timeoutMs, abandoned);
    if (!answer.answered) {
      if (!abandoned.aborted) {
        this.#logger.warn('push-api-client tokenStore.get failed; fetching a new token', {
          error: String(answer.error),
        });
      }
      return undefined;
    }
    try {
      const stored = answer.value;
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
  #storeKey(key: string): string | Promise<string> {
    let storeKey = this.#storeKeys.get(key);
    if (storeKey === undefined) {
      const hex = sha256Hex(`${this.#tokenUrl.href}\n${this.#clientId}\n${key}`);
      storeKey = typeof hex === 'string' ? STORE_KEY_PREFIX + hex : hex.then((digest) => STORE_KEY_PREFIX + digest);
      this.#storeKeys.set(key, storeKey);
      // Bounded as the cache is: scopes can come from each call, and a key dropped is only hashed again.
      if (this.#storeKeys.size > MAX_MEMORY_TOKENS)
        this.#storeKeys.delete(this.#storeKeys.keys().next().value as string);
    }
    return storeKey;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `TokenManager { clientId: '${this.#clientId}', tokenUrl: '${this.#tokenUrl.href}', scopes: [${this.#scopes.join(', ')}] }`;
  }

  /** Settings for diagnostics (client id, token URL, scopes, method): never the secret or a token. */
  toJSON(): Record<string, unknown> {
    return { clientId: this.#clientId, tokenUrl: this.#tokenUrl.href, scopes: [...this.#scopes], method: this.#method };
  }
}

/** What a store call came to: its value, or why there is none (it threw, took too long, or was given up). */
type StoreAnswer<T> = { answered: true; value: T } | { answered: false; error: unknown };

/**
 * Calls the token store, for at most `timeoutMs`. A store that never answers (Redis unreachable,
 * its client queueing commands until the server is back) would otherwise hold the refresh, and with
 * it every request of the client that joins it, for as long as the outage lasts: one that takes
 * longer than a request's attempt may counts as one that failed. Given up by the refresh's last
 * caller (`abandoned`), it stops waiting at once, so that no timer of it keeps the process alive.
 */
async function askStore<T>(
  work: () => T | Promise<T>,
  timeoutMs: number,
  abandoned: AbortSignal,
): Promise<StoreAnswer<T>> {
  let pending: T | Promise<T>;
  try {
    pending = work();
  } catch (error) {
    return { answered: false, error };
  }
  // A synchronous store (the default MemoryTokenStore) answers without a timer.
  if (!isThenable(pending)) return { answered: true, value: pending };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return { answered: true, value: await raceSignal(Promise.race([Promise.resolve(pending), late]), abandoned) };
  } catch (error) {
    return { answered: false, error };
  } finally {
    clearTimeout(timer);
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** Sorted and de-duplicated, so that the same set in any order shares one cache entry. */
function normalizeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.map((scope) => scope.trim()).filter((scope) => scope !== ''))].sort();
}

// ── The token endpoint's answer ──────────────────────────────────────────────────────────────────
// Reading the token endpoint's answers. Messages never quote the response body: a success body
// holds the token, and an error body may echo what was sent.

/**
 * Maps a non-2xx token response to a TokenError carrying the OAuth `error` code (RFC 6749 §5.2).
 * `bodyText` was scrubbed already; the parsed fields are scrubbed again, because JSON decoding
 * may turn an escaped secret back into the secret.
 */
function tokenErrorFromResponse(
  status: number,
  bodyText: string,
  secrets: readonly string[],
  answer: { retryAfterMs?: number; requestId?: string; tokenUrl?: URL } = {},
): TokenError {
  // What the answer's headers said (Retry-After, x-request-id), on every error built here.
  const retry = {
    ...(answer.retryAfterMs !== undefined && { retryAfterMs: answer.retryAfterMs }),
    ...(answer.requestId !== undefined && { requestId: answer.requestId }),
  };
  if (status >= 300 && status < 400) {
    // The request carries the client credentials, so it is never re-sent to wherever a redirect points.
    return new TokenError(
      'http_error',
      `Token endpoint answered HTTP ${status} (a redirect); token requests do not follow redirects. Check authUrl.`,
      { status, ...retry },
    );
  }
  const parsed = parseJsonObject(bodyText);
  const body = parsed === undefined ? undefined : (scrubJsonValue(parsed, secrets) as Record<string, unknown>);
  const code = typeof body?.error === 'string' && /^[\x20-\x7e]{1,100}$/.test(body.error) ? body.error : undefined;
  const rawDescription = typeof body?.error_description === 'string' ? body.error_description : undefined;
  const description = rawDescription === undefined ? undefined : truncateText(rawDescription);
  const hint = settingToCheck(code, status, answer.tokenUrl);
  if (code === undefined) {
    return new TokenError('http_error', `Token request failed with HTTP ${status}${hint}`, { status, ...retry });
  }
  const detail = description ? `: ${description}` : '';
  return new TokenError(code, `Token request failed with HTTP ${status} (${code})${detail}${hint}`, {
    status,
    errorDescription: description,
    ...retry,
  });
}

/**
 * The setting a person most likely got wrong, for the refusals met while setting up: a wrong
 * secret or id, a scope prefix the credential does not have, an `authUrl` with no token endpoint
 * under it (often the token endpoint's own address, to which the path is added a second time).
 * The token URL is shown without its query; it holds no credential (the client refuses a URL with
 * `user:password@`).
 */
function settingToCheck(code: string | undefined, status: number, tokenUrl: URL | undefined): string {
  if (code === 'invalid_client' || (code === undefined && status === 401)) {
    return '; check clientId and clientSecret (PUSH_CLIENT_ID, PUSH_CLIENT_SECRET)';
  }
  if (code === 'invalid_scope') return '; check scopeBase (PUSH_SCOPE_BASE) or scopes';
  if (code !== undefined || (status !== 404 && status !== 405) || tokenUrl === undefined) return '';
  const doubled = tokenUrl.pathname.replace(/\/+$/, '').endsWith(`${DEFAULTS.tokenPath}${DEFAULTS.tokenPath}`);
  const given = doubled ? ', which must not end in /oauth2/token' : '';
  return `: no token endpoint at ${tokenUrl.origin}${tokenUrl.pathname}; check authUrl (PUSH_AUTH_URL)${given}: tokens are requested from {authUrl}${DEFAULTS.tokenPath}`;
}

function isVisibleAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

function invalid(reason: string, status: number): TokenError {
  return new TokenError('invalid_token_response', `Token endpoint returned an unusable token: ${reason}`, { status });
}

/**
 * The longest token lifetime believed, in seconds (24 hours). A service may claim any `expires_in`
 * (1e300 once gave an Invalid Date, and the cache never hit); a longer claim is cut to this, so a
 * token is refreshed at least once a day.
 */
const MAX_TOKEN_LIFETIME_SECONDS = 86_400;

function readExpiresIn(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  // Some servers send the lifetime as a numeric string; accept it, reject anything else.
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

/**
 * The granted scopes fit to show, and how many were left out: a scope holding a secret (the access
 * token this answer issues, the client secret, or the marker the transport left where it found
 * one) never reaches the "token acquired" log line or the `push-api token` table. No real service
 * lists one; a hostile one would see it written down.
 */
function scopesFitToShow(granted: readonly string[], secrets: readonly string[]): { kept: string[]; leftOut: number } {
  const kept = granted.filter((scope) => !scope.includes(REDACTED) && scrubSecrets(scope, secrets) === scope);
  return { kept, leftOut: granted.length - kept.length };
}

/** A validated token answer: the token, its lifetime, and how many granted scopes were not kept. */
interface ParsedTokenResponse {
  token: AccessToken;
  lifetimeMs: number;
  /** Granted scopes left out because they held a secret (see `scopesFitToShow`). */
  scopesLeftOut: number;
}

/**
 * Validates a 2xx token response: a non-empty `access_token`, `token_type` Bearer in any case, a
 * positive `expires_in` (cut to {@link MAX_TOKEN_LIFETIME_SECONDS}); and when the server lists the
 * granted `scope`, every required scope must be in it, so that a missing scope fails here rather
 * than as a 403 on each data call. `secrets` are the client secret's forms, kept out of the scopes.
 * `issuedFrom` is the earliest the token can have been issued (its request's start): its lifetime runs from there.
 */
function parseTokenResponse(
  status: number,
  bodyText: string,
  requiredScopes: readonly string[],
  issuedFrom: number,
  secrets: readonly string[] = [],
): ParsedTokenResponse {
  const body = parseJsonObject(bodyText);
  if (!body) throw invalid('the body is not a JSON object', status);
  const issued = body.access_token;
  if (typeof issued !== 'string' || issued.trim() === '') throw invalid('access_token is missing', status);
  // Kept as a request carries it: fetch drops a header value's leading and trailing whitespace
  // (a token endpoint that ends its token with a newline), and the token is scrubbed as sent.
  const accessToken = trimHttpWhitespace(issued);
  // RFC 6750 tokens are visible ASCII. Anything else goes out as bytes no scrubbing can follow
  // (fetch sends U+0080–U+00FF as single Latin-1 bytes, which an echo then percent-encodes as no
  // UTF-8 decoder reads), or fails every request; refused here, once, with a clear reason.
  if (!isVisibleAscii(accessToken)) {
    throw invalid('access_token holds spaces or characters outside visible ASCII (RFC 6750)', status);
  }
  const tokenType = body.token_type;
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
    throw invalid('token_type is not Bearer', status);
  }
  const expiresIn = readExpiresIn(body.expires_in);
  if (expiresIn === undefined || Number.isNaN(expiresIn) || expiresIn <= 0) {
    throw invalid('expires_in is not a positive number of seconds', status);
  }
  let scopes = [...requiredScopes];
  let scopesLeftOut = 0;
  if (typeof body.scope === 'string' && body.scope.trim() !== '') {
    const granted = body.scope.trim().split(/\s+/);
    const missing = requiredScopes.filter((scope) => !granted.includes(scope));
    if (missing.length > 0) {
      throw new TokenError(
        'insufficient_scope',
        `The token was granted without the required scope(s): ${missing.join(', ')}`,
        {
          status,
        },
      );
    }
    ({ kept: scopes, leftOut: scopesLeftOut } = scopesFitToShow(granted, [issued, accessToken, ...secrets]));
  }
  const lifetimeMs = Math.min(expiresIn, MAX_TOKEN_LIFETIME_SECONDS) * 1000;
  return {
    token: { accessToken, tokenType, expiresAt: new Date(issuedFrom + lifetimeMs), scopes },
    lifetimeMs,
    scopesLeftOut,
  };
}

// ── Where tokens are kept ────────────────────────────────────────────────────────────────────────
// The token a caller gets, the store contract that keeps it between calls and processes, and the
// default store in memory.

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
const MAX_MEMORY_TOKENS = 1024;

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
