import {
  AbortError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  PushError,
  RateLimitError,
  ServerError,
  TokenError,
  UnexpectedResponseError,
} from '../errors.js';
import { parseJsonBounded } from '../http/json.js';
import { MAX_ERROR_BODY_BYTES } from '../http/read-body.js';
import { classifyFailure } from '../http/retry.js';
import type { BatchStatus } from './types.js';

/**
 * What one failed attempt says about the records it carried: the transport's own classifier
 * (`classifyFailure`, the same one that decides retries) under the non-idempotent policy, so that
 * "re-sent because surely not processed" and "reported failed, safe to send again" never disagree.
 * - `ambiguous`: the server may have stored them (a 5xx other than 503, so 501 and 505 too, a
 *   connection lost after the request may have been written, a timeout), or a 2xx whose body does
 *   not say `success`;
 * - otherwise the server surely did not store them (a 4xx, a 429 or 503, a connection refused
 *   before anything was written, `success: false`).
 */
export function isAmbiguousFailure(error: PushError): boolean {
  if (error instanceof UnexpectedResponseError) return !error.refused;
  return classifyFailure(error, 'non-idempotent') === 'ambiguous';
}

/**
 * What a batch's final error says about the records in it: `unknown` when the server may have
 * stored them (re-sending may duplicate), `failed` when it surely did not (safe to send again).
 * `requestStarted`: the last attempt handed the batch to the transport. One that did not (it was
 * aborted first, or its token could not be had) never sent the batch: `failed`, whatever the
 * error says of its own request (a token request cut off after it was written is ambiguous for
 * the token, not for the batch). `earlierAmbiguous`: an earlier attempt of the same batch was
 * ambiguous and re-sent (`retryAmbiguous: true`); the server may hold the batch from that
 * attempt, so however the last attempt ended, the batch can no longer be `failed`.
 */
export function classifyBatchError(
  error: PushError,
  requestStarted: boolean,
  earlierAmbiguous = false,
): Exclude<BatchStatus, 'sent'> {
  if (earlierAmbiguous) return 'unknown';
  if (!requestStarted) return 'failed';
  if (error instanceof AbortError) return 'unknown';
  return isAmbiguousFailure(error) ? 'unknown' : 'failed';
}

/**
 * Errors that every following request would meet too, so the run stops instead of hammering: a
 * connection that could not be made at all (DNS, TLS, nothing listening, after the transport's own
 * retries), a refused token, a 401, 403 or 404 on the app, a configuration error. A connection lost
 * after the request was written is not one of them: it concerns that request only.
 */
export function stopsTheRun(error: PushError): boolean {
  return (
    (error instanceof ConnectionError && !error.requestMaybeSent) ||
    error instanceof AuthenticationError ||
    error instanceof PermissionDeniedError ||
    error instanceof NotFoundError ||
    error instanceof TokenError ||
    error instanceof ConfigurationError
  );
}

/** The service asked us to slow down: a 429, or a 503 (an overloaded service). */
export function isBackPressure(error: PushError): boolean {
  return error instanceof RateLimitError || (error instanceof ServerError && error.status === 503);
}

/** Anything thrown is reported as a PushError; foreign errors are kept as the cause. */
export function asPushError(error: unknown): PushError {
  if (error instanceof PushError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new PushError(`finance request failed: ${message}`, { cause: error });
}

/**
 * Reads a 2xx answer and checks the spec's success body, `{"success": true}`.
 * `success: false` means the service refused the batch; a body that says neither (a proxy's page,
 * an empty body) leaves the outcome unknown.
 */
export async function expectSuccess(response: Response): Promise<void> {
  const text = await response.text();
  // Depth-bounded: the body may end up in an error that is logged or serialized.
  const parsed = parseJsonBounded(text);
  const body = parsed.ok ? parsed.value : undefined;
  const success = typeof body === 'object' && body !== null ? (body as { success?: unknown }).success : undefined;
  if (success === true) return;
  const headers = Object.fromEntries(response.headers);
  // The transport scrubbed the token from this body already; a text body is cut like any error body.
  const kept =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : text.slice(0, MAX_ERROR_BODY_BYTES);
  const message =
    success === false
      ? `${response.status} the service answered success: false`
      : `${response.status} the service answered without "success": true; the batch may or may not have been stored`;
  throw new UnexpectedResponseError(response.status, kept, headers, message, success === false);
}
