import { DEFAULTS } from '../defaults.js';
import { ConnectionError, PushError, ResponseTooLargeError, TokenError } from '../errors.js';
import type { RetryPolicy } from './types.js';

/**
 * What to do with a failed attempt:
 * - `retry`: the server surely did not act on it, or acting twice is harmless;
 * - `ambiguous`: the server may have processed a non-idempotent request; re-sending may duplicate;
 * - `fatal`: re-sending cannot help (4xx, refused credentials, caller abort).
 */
export type FailureClass = 'retry' | 'ambiguous' | 'fatal';

/** OAuth errors (RFC 6749 §5.2) that no retry can fix. */
const FATAL_OAUTH_ERRORS = new Set(['invalid_client', 'invalid_scope', 'unauthorized_client', 'invalid_grant']);

/** The HTTP status an error carries, when it came from a response. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** The server's Retry-After (already parsed and capped) that an error carries, when it sent one. */
export function retryAfterOf(error: PushError): number | undefined {
  const value = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof value === 'number' ? value : undefined;
}

/**
 * Classifies a failure, in this order (ARCHITECTURE.md's retry table):
 * 1. OAuth errors that no retry can fix, and errors that are not about the transport → fatal;
 * 2. no response: a connection that failed before the request was written → retry; any other
 *    network failure or a timeout → retry if idempotent, else ambiguous;
 * 3. an answer the service gave after receiving the whole request, which the client cannot use
 *    (a 3xx that is not followed, a body past its cap) → ambiguous if non-idempotent, else fatal;
 * 4. a status: 429 → retry; 408 and 5xx → retry if idempotent; for the non-idempotent policy
 *    503 → retry and any other 5xx → ambiguous; anything else → fatal.
 */
export function classifyFailure(error: unknown, policy: RetryPolicy): FailureClass {
  if (!(error instanceof PushError)) return 'fatal';
  if (error instanceof TokenError && FATAL_OAUTH_ERRORS.has(error.error)) return 'fatal';
  if (error instanceof ConnectionError) {
    if (!error.requestMaybeSent) return 'retry';
    return policy === 'idempotent' ? 'retry' : 'ambiguous';
  }
  if (error instanceof ResponseTooLargeError) return policy === 'non-idempotent' ? 'ambiguous' : 'fatal';
  const status = statusOf(error);
  if (status === undefined) return 'fatal';
  if (status >= 300 && status < 400) return policy === 'non-idempotent' ? 'ambiguous' : 'fatal';
  if (status === 429) return 'retry';
  if (policy === 'idempotent') return status === 408 || status >= 500 ? 'retry' : 'fatal';
  if (status === 503) return 'retry';
  return status >= 500 ? 'ambiguous' : 'fatal';
}

/** Whether a failure is re-sent under the policy; ambiguous ones only when the caller accepts duplicates. */
export function shouldRetry(error: unknown, policy: RetryPolicy, retryAmbiguous: boolean): boolean {
  if (policy === 'never') return false;
  const kind = classifyFailure(error, policy);
  return kind === 'retry' || (kind === 'ambiguous' && retryAmbiguous);
}

export interface BackoffOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  jitter: number;
  /** Source of randomness in [0, 1); injectable for tests. */
  random: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  initialDelayMs: DEFAULTS.retryInitialDelayMs,
  maxDelayMs: DEFAULTS.retryMaxDelayMs,
  jitter: DEFAULTS.retryJitter,
  random: Math.random,
};

/** Exponential backoff with jitter: initial × 2^(retry-1), capped, then scaled into [1 - jitter, 1]. */
export function backoffDelayMs(retry: number, options: BackoffOptions = DEFAULT_BACKOFF): number {
  const exponential = Math.min(options.initialDelayMs * 2 ** Math.max(0, retry - 1), options.maxDelayMs);
  return Math.round(exponential * (1 - options.jitter * options.random()));
}

/**
 * The wait before the next attempt: the server's `Retry-After` when it sent a valid one (already
 * parsed and capped by `parseRetryAfterHeader`), otherwise the backoff.
 */
export function retryDelayMs(
  retryAfterMs: number | undefined,
  retry: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) return retryAfterMs;
  return backoffDelayMs(retry, options);
}

/** How long re-sends wait: the backoff without a `Retry-After`, and the cap on one. */
export interface RetryTiming {
  initialDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_TIMING: RetryTiming = {
  initialDelayMs: DEFAULTS.retryInitialDelayMs,
  maxDelayMs: DEFAULTS.retryMaxDelayMs,
  maxRetryAfterMs: DEFAULTS.maxRetryAfterMs,
};

/** The timing options as callers write them (`RequestOptions`, `PushClientOptions`); each part optional. */
export interface RetryTimingOverrides {
  backoff?: { initialDelayMs?: number | undefined; maxDelayMs?: number | undefined } | undefined;
  maxRetryAfterMs?: number | undefined;
}

/** `timing` with the parts `overrides` sets replaced. */
export function retryTimingWith(timing: RetryTiming, overrides: RetryTimingOverrides | undefined): RetryTiming {
  return {
    initialDelayMs: overrides?.backoff?.initialDelayMs ?? timing.initialDelayMs,
    maxDelayMs: overrides?.backoff?.maxDelayMs ?? timing.maxDelayMs,
    maxRetryAfterMs: overrides?.maxRetryAfterMs ?? timing.maxRetryAfterMs,
  };
}

/** The server's `Retry-After` that an error carries, cut to `maxRetryAfterMs`. */
export function cappedRetryAfterOf(error: PushError, timing: RetryTiming): number | undefined {
  const retryAfterMs = retryAfterOf(error);
  return retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, timing.maxRetryAfterMs);
}

/** The wait before re-send number `retry` after `error`, under `timing`. */
export function retryDelayUnder(
  error: PushError,
  retry: number,
  timing: RetryTiming,
  backoff: BackoffOptions = DEFAULT_BACKOFF,
): number {
  return retryDelayMs(cappedRetryAfterOf(error, timing), retry, backoffUnder(timing, backoff));
}

/** The backoff of `timing`, with the jitter and randomness of `backoff`. */
export function backoffUnder(timing: RetryTiming, backoff: BackoffOptions = DEFAULT_BACKOFF): BackoffOptions {
  return { ...backoff, initialDelayMs: timing.initialDelayMs, maxDelayMs: timing.maxDelayMs };
}
