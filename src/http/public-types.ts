/**
 * The transport's public types, in one module: what a caller passes per call (`RequestOptions`),
 * the logger and the log level it accepts, the hooks and their events. The package entry
 * (index.ts) exports them from here.
 */

/** The fetch signature the transport needs; `globalThis.fetch`, undici's and most polyfills fit. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The waits between attempts when the server gives no `Retry-After`: `initialDelayMs` before the
 * first re-send, doubling for each further one up to `maxDelayMs`, each scaled down by up to 25 %
 * of random jitter. Set both to 0 in tests, so that retries cost no time.
 */
export interface RetryBackoff {
  /** Wait before the first re-send, in milliseconds. @default 500 */
  initialDelayMs?: number | undefined;
  /** Longest wait between two attempts, in milliseconds. @default 8000 */
  maxDelayMs?: number | undefined;
}

/** Options every operation takes; each overrides the client's setting for that call only. */
export interface RequestOptions {
  /** Time allowed for one attempt, response body included, in milliseconds (at most 2^31 - 1). @default the client's `timeoutMs` */
  timeoutMs?: number | undefined;
  /** Re-sends after the first attempt of each request of this call. @default the client's `maxRetries` */
  maxRetries?: number | undefined;
  /** Waits between attempts without a `Retry-After`; each part given replaces the client's. @default the client's `backoff` */
  backoff?: RetryBackoff | undefined;
  /**
   * Longest wait, in milliseconds, that a server's `Retry-After` (on a 429 or 503) can ask for
   * before a re-send; from 0 to 60000. 0 re-sends at once, as tests want.
   * @default the client's `maxRetryAfterMs`
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * Headers added to this call's requests to the service (the token endpoint and the data API;
   * never to the storage host of signed upload addresses), over the client's `defaultHeaders`.
   * `Authorization`, `Content-Length`, `Host` and the other headers the transport owns are
   * refused with a `ConfigurationError`; `Content-Type` is always the one the spec asks for.
   * @default none
   */
  headers?: Readonly<Record<string, string>> | undefined;
  /** Aborts the call. @default undefined (no abort) */
  signal?: AbortSignal | undefined;
}

/**
 * A logger compatible with `console` and pino: any object with these four methods. pino's
 * fields-first order (`info(fields, message)`) is recognised, a missing method is skipped, and a
 * logger that throws never fails a request. Secrets and tokens are never passed to it.
 *
 * @example
 * ```ts
 * import { pino } from 'pino';
 * import { PushClient } from 'push-api-client';
 *
 * const client = new PushClient({ logger: pino({ level: 'debug' }) });
 * ```
 */
export interface Logger {
  /** One line per attempt (method, path, status, attempt, duration) and per token acquired. */
  debug(message: string, fields?: Record<string, unknown>): void;
  /** Events worth knowing that need no action, such as a rejected token being refreshed. */
  info(message: string, fields?: Record<string, unknown>): void;
  /** A retry, or a failure the client worked around (a token store or a callback that threw). */
  warn(message: string, fields?: Record<string, unknown>): void;
  /** Reserved for failures the client cannot work around; errors are thrown to the caller instead. */
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How much the client logs: each level includes the ones after it; `off` logs nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/** What every request event carries. */
export interface HookRequestInfo {
  /**
   * Identifies one logical request across its attempts: every `request`, `response` and `retry`
   * event of that request has the same `callId` (unique within the client).
   */
  callId: number;
  /** `token`, `upload-urls`, `upload`, `finance` or `request` (`client.request`). */
  operation: string;
  method: string;
  /** Origin and path; the query (which holds signed addresses' signatures) is left out. */
  url: string;
  /** Starts at 1; a re-send after a refused token stays in its attempt. */
  attempt: number;
}

/** An attempt is about to be sent. */
export type RequestHookEvent = HookRequestInfo;

/** An attempt ended: answered (any status), or failed without an answer. */
export interface ResponseHookEvent extends HookRequestInfo {
  /**
   * HTTP status of the answer; undefined when none came (connection failed, timeout, abort); 0 for a
   * redirect that fetch refused before its status was read (see `RedirectError`).
   */
  status: number | undefined;
  /** From the start of the attempt to the end of its response body, in milliseconds. */
  durationMs: number;
  /** The server's `x-request-id`, when it sent one. */
  requestId: string | undefined;
  /** Name of the error the attempt ended with (`RateLimitError`, `TimeoutError`...); undefined on success. */
  error: string | undefined;
}

/** A failed attempt is sent again after `delayMs`. */
export interface RetryHookEvent extends HookRequestInfo {
  /** The failed attempt's status; undefined when no answer came. */
  status: number | undefined;
  requestId: string | undefined;
  error: string;
  /** How long the client waits before the next attempt (backoff or `Retry-After`). */
  delayMs: number;
  /**
   * `true` when the wait is a publish's patience with a 429: the batch waits out the rate limit
   * without using up one of its `maxRetries` (up to `rateLimitDeadlineMs`); absent for any other
   * wait. The log line says the same.
   */
  rateLimited?: true;
}

/** A new access token was requested from the token endpoint (not one served from the cache or store). */
export interface TokenRefreshHookEvent {
  operation: 'token';
  /**
   * Why: `initial` (none cached yet), `expiring` (the cached one reached its refresh point),
   * `rejected` (the service refused it with a 401), or `forced` (`getToken({ forceRefresh: true })`).
   */
  reason: 'initial' | 'expiring' | 'rejected' | 'forced';
  scopes: string[];
  durationMs: number;
  /** When the new token expires; undefined when the refresh failed. */
  expiresAt: Date | undefined;
  /** Name of the error the refresh failed with; undefined on success. */
  error: string | undefined;
}

/**
 * The in-flight window of a `publish` or `upload` run started, or changed. The window grows while
 * round-trip times stay near their least value, shrinks when they inflate (the service is
 * queueing) and halves on a 429 or 503; `concurrency` bounds it.
 */
export interface ConcurrencyHookEvent {
  /** `finance` for `publish`, `upload` for `upload`. */
  operation: 'finance' | 'upload';
  /** The window now: how many batches or files may be in hand at once. */
  limit: number;
  /** The window before this change; equal to `limit` for `start`. */
  previous: number;
  /** Batches or files in hand when the window changed. */
  inFlight: number;
  /**
   * `start`: the run's first window; `grow`: round trips stayed near their least value;
   * `latency`: they inflated, the service is queueing; `rate-limited`: a 429; `unavailable`: a 503;
   * `timed-out`: a request got no answer within `timeoutMs` (a link the window saturates);
   * `size`: before the run's first answer, its first batch's body was too large for the whole
   * window to go out blind: the first round holds no more than a 2 Mbit/s uplink carries in a
   * quarter of `timeoutMs` (about 1.9 MB at 30 s), and at least one batch.
   */
  reason: 'start' | 'grow' | 'latency' | 'rate-limited' | 'unavailable' | 'timed-out' | 'size';
  /**
   * The round trip a `grow` or `latency` change was decided on, in milliseconds: of the round's
   * answers, the one at the lower quartile of inflation (its round trip against the least one
   * then seen for requests of its size), so that `rttMs / minRttMs` is the inflation the decision read.
   */
  rttMs?: number;
  /** The least round trip seen for requests of that answer's size when it came, in milliseconds. */
  minRttMs?: number;
  /**
   * On `start`: the run starts from what this client's previous publish, 10 minutes ago at most,
   * learnt: the window it ended with (when higher than the start of 8) and the knee it found (past
   * which growth is one request per round), rather than as against a service never seen.
   */
  resumed?: boolean;
}

/**
 * Callbacks for the client's request lifecycle. Each is called synchronously, in the async
 * context of the call that caused it, with an event object of its own (changing it changes no
 * other hook's event). One that throws, or returns a promise that rejects, is logged as a warning
 * and ignored; the client does not wait for a returned promise.
 *
 * @example
 * ```ts
 * const client = new PushClient({
 *   hooks: {
 *     response: (event) => console.log(event.operation, event.status, event.durationMs, event.requestId),
 *     retry: (event) => console.warn(`${event.operation} retried in ${event.delayMs} ms (${event.error})`),
 *   },
 * });
 * ```
 */
export interface PushClientHooks {
  /** Before each attempt is sent (token, upload addresses, upload PUT, finance batch). */
  request?: ((event: RequestHookEvent) => void) | undefined;
  /** When an attempt ends: with the status the service answered, or the error when none came. */
  response?: ((event: ResponseHookEvent) => void) | undefined;
  /** When a failed attempt will be sent again, with the delay before it. */
  retry?: ((event: RetryHookEvent) => void) | undefined;
  /** When the client asks for a new access token, and why. */
  tokenRefresh?: ((event: TokenRefreshHookEvent) => void) | undefined;
  /** When a `publish` or `upload` run starts, and whenever its in-flight window changes. */
  concurrency?: ((event: ConcurrencyHookEvent) => void) | undefined;
}

/** The answer behind a method's data, from `.withResponse()`. */
export interface ResponseMetadata {
  /** The HTTP status of the answer. */
  status: number;
  /** A copy of the answer's headers, `x-request-id` among them. */
  headers: Headers;
  /** The answer's `x-request-id`, bounded in length; undefined when the service sent none. */
  requestId: string | undefined;
}

/** What `.withResponse()` resolves to: the data, and the answer that carried it. */
export interface WithResponse<T, R extends ResponseMetadata | null = ResponseMetadata> {
  data: T;
  /** `null` when no request was sent (a `getToken()` answered from the cache or the token store). */
  response: R;
}
