import {
  AbortError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  PushApiError,
  PushError,
  RateLimitError,
  ServerError,
  TokenError,
} from '../errors.js';
import type { BatchStatus } from './types.js';

/**
 * What a batch's final error says about the records in it:
 * - `unknown`: the server may have stored them, so re-sending may duplicate. A 5xx other than
 *   501, 503 and 505 (the service failed while or after handling the request; 500, 502 and 504 in
 *   the spec's terms), a connection lost after the request may have been written, a timeout, or an
 *   abort while the request was in flight.
 * - `failed`: the server surely did not store them (a 4xx, a 429 or 503 that outlasted the
 *   retries, a connection refused before anything was written); safe to send again.
 */
export function classifyBatchError(error: PushError, requestStarted: boolean): Exclude<BatchStatus, 'sent'> {
  if (error instanceof AbortError) return requestStarted ? 'unknown' : 'failed';
  if (error instanceof UnexpectedResponseError) return error.refused ? 'failed' : 'unknown';
  if (error instanceof ConnectionError) return error.requestMaybeSent ? 'unknown' : 'failed';
  if (error instanceof ServerError) return NOT_PROCESSED_5XX.has(error.status) ? 'failed' : 'unknown';
  return 'failed';
}

/** 501 Not Implemented, 503 Service Unavailable, 505 HTTP Version Not Supported: refused before processing. */
const NOT_PROCESSED_5XX = new Set([501, 503, 505]);

/** Errors that every following batch would meet too: publishing stops instead of hammering. */
export function stopsTheRun(error: PushError): boolean {
  return (
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

/** The Retry-After of a back-pressure error, when the server gave one. */
export function retryAfterOf(error: PushError): number | undefined {
  if (error instanceof RateLimitError) return error.retryAfterMs;
  return undefined;
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
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const success = typeof body === 'object' && body !== null ? (body as { success?: unknown }).success : undefined;
  if (success === true) return;
  const headers = Object.fromEntries(response.headers);
  const parsed = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : text;
  const message =
    success === false
      ? `${response.status} the service answered success: false`
      : `${response.status} the service answered without "success": true; the batch may or may not have been stored`;
  throw new UnexpectedResponseError(response.status, parsed, headers, message, success === false);
}

/** A 2xx answer that is not the spec's `{"success": true}`. */
export class UnexpectedResponseError extends PushApiError {
  override name = 'UnexpectedResponseError';
  /** True when the body said `success: false` (the batch was refused); false when it said nothing usable. */
  readonly refused: boolean;

  constructor(
    status: number,
    body: Record<string, unknown> | string,
    headers: Record<string, string>,
    message: string,
    refused: boolean,
  ) {
    super(status, body, headers, message);
    this.refused = refused;
  }
}
