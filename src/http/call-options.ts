/**
 * Per-call options: what one operation may set over the client's settings, checked before any
 * request, and the headers the client adds to every request to the service (`defaultHeaders`).
 */
import { ConfigurationError, MAX_RETRY_AFTER_MS } from '../errors.js';
import type { RequestOptions, RetryBackoff } from './public-types.js';

/**
 * Headers the transport or the credentials own. Setting one would either be ignored by fetch or
 * change what the request means (a second Authorization, a wrong length), so it is refused loudly.
 */
const RESERVED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  // undici refuses it on every attempt (it does not implement 100-continue).
  'expect',
]);

/** Whether the transport or the credentials own this header (any case). */
export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name.toLowerCase());
}

/** RFC 9110 token characters, for header names. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks caller headers and returns them with lower-case names. */
export function checkHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  option: string,
): Record<string, string> {
  if (headers === undefined) return {};
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new ConfigurationError(`${option} must be an object of header names and string values`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new ConfigurationError(`${option}: "${name}" is not a valid header name`);
    if (RESERVED_HEADERS.has(lower)) {
      throw new ConfigurationError(
        `${option}: ${name} cannot be set; the client sets it (credentials and body length are never overridden)`,
      );
    }
    // The value is not quoted: it may be a credential for a gateway.
    if (typeof value !== 'string' || /[\r\n\0]/.test(value) || /[^\x20-\x7e\t\x80-\xff]/.test(value)) {
      throw new ConfigurationError(`${option}: the value of ${name} must be a string without line breaks or NUL`);
    }
    out[lower] = value;
  }
  return out;
}

/**
 * The longest timeout timers take: 2^31 - 1 ms, about 24.8 days. Past it, `setTimeout` fires at
 * once (Node warns with TimeoutOverflowWarning), so every attempt would time out immediately.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Checks a numeric option: a finite number (an integer when asked) from `min` to `max`. */
export function checkNumber(
  value: number | undefined,
  option: string,
  integer: boolean,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): void {
  if (value === undefined) return;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ConfigurationError(`${option} must be ${integer ? 'an integer' : 'a number'} ${range}`);
  }
}

/** Checks `backoff` and `maxRetryAfterMs` (client-wide or per call); `prefix` starts each message. */
export function checkRetryTiming(options: Pick<RequestOptions, 'backoff' | 'maxRetryAfterMs'>, prefix: string): void {
  const { backoff } = options;
  if (backoff !== undefined && (backoff === null || typeof backoff !== 'object' || Array.isArray(backoff))) {
    throw new ConfigurationError(
      `${prefix}backoff must be an object such as { initialDelayMs: 500, maxDelayMs: 8000 }`,
    );
  }
  checkNumber(backoff?.initialDelayMs, `${prefix}backoff.initialDelayMs`, false, 0, MAX_TIMEOUT_MS);
  checkNumber(backoff?.maxDelayMs, `${prefix}backoff.maxDelayMs`, false, 0, MAX_TIMEOUT_MS);
  checkNumber(options.maxRetryAfterMs, `${prefix}maxRetryAfterMs`, false, 0, MAX_RETRY_AFTER_MS);
}

/** What a call's options add to each of its request specs. */
export interface CallSettings {
  timeoutMs?: number;
  maxRetries?: number;
  backoff?: RetryBackoff;
  maxRetryAfterMs?: number;
  /** The client's default headers under the call's, ready to go under the operation's own. */
  headers: Record<string, string>;
  signal?: AbortSignal;
  /**
   * The token asked for as the operation started (`HttpClient.prepareBearer`). Once the token
   * endpoint has refused that request, the operation's requests meet the same refusal instead of
   * asking it (and a secret provider) all over again, unless a token came by other means since.
   */
  earlyBearer?: EarlyBearer;
}

/** The token asked for as an operation started. */
export interface EarlyBearer {
  /** Its refusal, once refused (a 4xx other than 408 and 429). */
  failure?: unknown;
  /** The operation is over: a token request still on its way that nobody else waits for is aborted. */
  release(): void;
}

/** What a call's options say for the token request one of its requests may have to make first. */
export type TokenCallOptions = Pick<
  RequestOptions,
  'timeoutMs' | 'maxRetries' | 'headers' | 'backoff' | 'maxRetryAfterMs'
>;

/** The call's timeout, retries and headers, for the token request it causes (its signal goes with each request). */
export function tokenOptionsOf(call: CallSettings): TokenCallOptions {
  return {
    headers: call.headers,
    ...(call.timeoutMs !== undefined && { timeoutMs: call.timeoutMs }),
    ...(call.maxRetries !== undefined && { maxRetries: call.maxRetries }),
    ...retryTimingOf(call),
  };
}

/** The call's retry timing, for each request spec of the call (`RequestSpec.retryTiming`). */
function retryTimingOf(call: CallSettings): Pick<CallSettings, 'backoff' | 'maxRetryAfterMs'> {
  return {
    ...(call.backoff !== undefined && { backoff: call.backoff }),
    ...(call.maxRetryAfterMs !== undefined && { maxRetryAfterMs: call.maxRetryAfterMs }),
  };
}

/**
 * The call's timeout and retries alone: for a request that is not the service's (the PUT to a
 * signed address, where the caller's headers must not go) and keeps the call's signal.
 */
export function limitsOnly(call: CallSettings): CallSettings {
  return {
    headers: {},
    ...(call.timeoutMs !== undefined && { timeoutMs: call.timeoutMs }),
    ...(call.maxRetries !== undefined && { maxRetries: call.maxRetries }),
    ...retryTimingOf(call),
    ...(call.signal !== undefined && { signal: call.signal }),
  };
}

/** The call without its signal: for a request shared by several callers (a token refresh), which no single one may abort. */
export function unsignalled(call: CallSettings): CallSettings {
  const { signal: _signal, ...rest } = call;
  return rest;
}

/** Checks one call's options; throws ConfigurationError before any request. */
export function callSettings(options: RequestOptions, defaultHeaders: Readonly<Record<string, string>>): CallSettings {
  checkNumber(options.timeoutMs, 'timeoutMs', false, 1, MAX_TIMEOUT_MS);
  checkNumber(options.maxRetries, 'maxRetries', true, 0);
  checkRetryTiming(options, '');
  return {
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
    ...(options.backoff !== undefined && { backoff: { ...options.backoff } }),
    ...(options.maxRetryAfterMs !== undefined && { maxRetryAfterMs: options.maxRetryAfterMs }),
    headers: { ...defaultHeaders, ...checkHeaders(options.headers, 'headers') },
    ...(options.signal !== undefined && { signal: options.signal }),
  };
}
