import { DEFAULTS } from '../defaults.js';
import {
  AbortError,
  ConnectionError,
  PushError,
  RateLimitError,
  RedirectError,
  ResponseTooLargeError,
  ServerError,
  TimeoutError,
  TokenError,
} from '../errors.js';
import type { PushBack, RecoveryStep, RequestPacing, RetryPolicy } from './types.js';

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
function retryAfterOf(error: PushError): number | undefined {
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
  // A redirect answered a request that was sent, whether its status was read or not (status 0).
  if (error instanceof RedirectError) return policy === 'non-idempotent' ? 'ambiguous' : 'fatal';
  const status = statusOf(error);
  if (status === undefined) return 'fatal';
  if (status >= 300 && status < 400) return policy === 'non-idempotent' ? 'ambiguous' : 'fatal';
  if (status === 429) return 'retry';
  if (policy === 'idempotent') return status === 408 || status >= 500 ? 'retry' : 'fatal';
  if (status === 503) return 'retry';
  return status >= 500 ? 'ambiguous' : 'fatal';
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
function backoffDelayMs(retry: number, options: BackoffOptions = DEFAULT_BACKOFF): number {
  const exponential = Math.min(options.initialDelayMs * 2 ** Math.max(0, retry - 1), options.maxDelayMs);
  return Math.round(exponential * (1 - options.jitter * options.random()));
}

/**
 * The wait before the `wait`-th re-send of one request (1-based, every class of wait counted): the
 * server's `Retry-After` when it sent a valid one (already parsed and capped by
 * `parseRetryAfterHeader`), otherwise the backoff. A `Retry-After` of 0 (or an HTTP date already
 * past) is honoured for the first wait only; after that the backoff grows as for any retry, so that
 * a service answering "now" every time is not hammered.
 */
export function waitMs(
  retryAfterMs: number | undefined,
  wait: number,
  options: BackoffOptions = DEFAULT_BACKOFF,
): number {
  const valid = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0;
  if (valid && (retryAfterMs > 0 || wait === 1)) return retryAfterMs;
  return backoffDelayMs(wait, options);
}

/** The service asked the client to slow down: a 429, or a 503 (an overloaded service). */
export function isBackPressure(error: unknown): boolean {
  return error instanceof RateLimitError || (error instanceof ServerError && error.status === 503);
}

/** A 429 or 503 by status rather than class: a storage host's is an `UploadError`, and pushes back all the same. */
export function isPushBack(error: unknown): error is PushError {
  if (!(error instanceof PushError)) return false;
  const status = statusOf(error);
  return status === 429 || status === 503;
}

/**
 * What a failed attempt tells a run's window: a 429 or 503, by status rather than class (a storage
 * host's is an `UploadError`, and pushes back all the same), or no answer within the timeout.
 */
export function pushBackOf(error: unknown, timing: RetryTiming): PushBack | undefined {
  if (error instanceof TimeoutError) return { reason: 'timed-out', retryAfterMs: undefined };
  if (!(error instanceof PushError)) return undefined;
  const status = statusOf(error);
  if (status !== 429 && status !== 503) return undefined;
  return { reason: status === 429 ? 'rate-limited' : 'unavailable', retryAfterMs: cappedRetryAfterOf(error, timing) };
}

/** Which kind of wait precedes a re-send: the classes of `classifyFailure`, and a rate limit's patience. */
export type WaitClass = 'retry' | 'ambiguous' | 'rate-limited';

/** What the transport does after a failed attempt. */
export type Step =
  | { kind: 'give-up' }
  | { kind: 'recover'; step: RecoveryStep }
  | { kind: 'wait'; waitClass: WaitClass; delayMs: number };

/** What `nextStep` knows of the request so far. */
export interface LifecycleState {
  policy: RetryPolicy;
  retryAmbiguous: boolean;
  /** Re-sends of the `retry` and `ambiguous` classes still allowed (`maxRetries` minus those done). */
  retriesLeft: number;
  /** Waits done so far, every class counted: the backoff grows with them. */
  waits: number;
  /** The attempt failed while getting its bearer token, after the token request's own retries. */
  tokenFailure: boolean;
  recover: readonly RecoveryStep[];
  recovered: ReadonlySet<RecoveryStep>;
  pacing: RequestPacing | undefined;
  backoff: BackoffOptions;
  /** The request's `maxRetries`: with waits of 0 (as in tests), it also bounds a rate limit's patience. */
  maxRetries: number;
  /** Cap on a server's `Retry-After` (`maxRetryAfterMs`). */
  maxRetryAfterMs: number;
}

const GIVE_UP: Step = { kind: 'give-up' };

/**
 * What to do after a failed attempt, in this order; the caller does the waiting:
 * 1. the caller's abort → give up;
 * 2. a refusal a step of the lifecycle can mend (a fresh upload address, a rotated client secret),
 *    each step at most once per request → recover, without a wait and without using a retry;
 * 3. a 429 (from the API, or from the token endpoint while getting the bearer token) of a paced
 *    request → wait for `Retry-After` (or the backoff) and the rate budget, without using a retry,
 *    while the pacing's deadline allows; past it → give up;
 * 4. no bearer token could be had (its request had its own retries) → give up;
 * 5. no retries left, or the `never` policy → give up;
 * 6. `classifyFailure`: `retry` → wait and re-send; `ambiguous` → the same when the caller accepts
 *    duplicates (`retryAmbiguous`); `fatal` → give up.
 * The 401 refresh is not here: it happens inside the attempt (`FetchHttpClient`), and a 401 that
 * survives it is fatal by rule 6.
 */
export function nextStep(error: unknown, state: LifecycleState): Step {
  if (error instanceof AbortError) return GIVE_UP;
  if (error instanceof PushError) {
    const step = state.recover.find((candidate) => !state.recovered.has(candidate) && candidate.when(error));
    if (step !== undefined) return { kind: 'recover', step };
  }
  const wait = state.waits + 1;
  const retryAfterMs = error instanceof PushError ? retryAfterOf(error) : undefined;
  const cappedRetryAfterMs = retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, state.maxRetryAfterMs);
  if (state.pacing !== undefined && statusOf(error) === 429) {
    const delayMs = waitMs(cappedRetryAfterMs, wait, state.backoff);
    // Waits of 0 (a backoff and a `Retry-After` cap of 0, as in tests) would re-send at once until
    // the deadline: then a request is as patient as its retries allow (at least one wait).
    if (delayMs === 0 && wait > Math.max(1, state.maxRetries)) return GIVE_UP;
    return state.pacing.withinDeadline(delayMs) ? { kind: 'wait', waitClass: 'rate-limited', delayMs } : GIVE_UP;
  }
  if (state.tokenFailure || state.policy === 'never' || state.retriesLeft <= 0) return GIVE_UP;
  const kind = classifyFailure(error, state.policy);
  if (kind === 'fatal' || (kind === 'ambiguous' && !state.retryAmbiguous)) return GIVE_UP;
  return { kind: 'wait', waitClass: kind, delayMs: waitMs(cappedRetryAfterMs, wait, state.backoff) };
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

/** The backoff of `timing`, with the jitter and randomness of `backoff`. */
export function backoffUnder(timing: RetryTiming, backoff: BackoffOptions = DEFAULT_BACKOFF): BackoffOptions {
  return { ...backoff, initialDelayMs: timing.initialDelayMs, maxDelayMs: timing.maxDelayMs };
}
