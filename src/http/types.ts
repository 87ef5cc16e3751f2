import type { PushError } from '../errors.js';
import type { RetryBackoff, TokenCallOptions } from './call-options.js';

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

/**
 * How failures of one request are retried.
 * - `idempotent`: token requests, GET upload-urls and PUTs; 408, 429, 5xx and network errors are retried.
 * - `non-idempotent`: the finance POST; only failures that surely were not processed (429, 503, a
 *   connection that failed before the request was written) are retried, and ambiguous ones only
 *   when `retryAmbiguous` is on.
 * - `never`: one attempt (the 401 refresh still applies).
 */
export type RetryPolicy = 'idempotent' | 'non-idempotent' | 'never';

/** Information given to `onRetry` before each re-send. */
export interface RetryInfo {
  /** The attempt that failed, starting at 1. */
  attempt: number;
  error: PushError;
  /** How long the client waits before the next attempt. */
  delayMs: number;
}

/**
 * What a request body may be. Built from Node's own globals rather than the DOM's `BodyInit`, so
 * that the published declarations type-check in projects without the DOM library.
 */
export type RequestBody = string | Uint8Array<ArrayBuffer> | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/** Handed to a body factory. A streaming body calls `touch()` as bytes move. */
export interface BodyControl {
  /** Restarts the attempt's timeout: a long upload that keeps moving never times out, a stalled one does. */
  touch(): void;
}

/** One logical request; `HttpClient.send` turns it into one or more attempts. */
export interface RequestSpec {
  /** Short name for logs and errors: 'token' | 'upload-urls' | 'upload' | 'finance'. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT';
  url: URL;
  /**
   * The service this request belongs to. No hop of it, the first included, goes closer to this
   * machine than this address: a remote service cannot send it to loopback, link-local or private
   * addresses. Set when `url` came from an answer (a signed upload address).
   * @default `url`
   */
  service?: URL;
  headers?: Record<string, string>;
  /** Called once per attempt, so that a stream body can be opened afresh for each re-send. */
  body?: (control: BodyControl) => RequestBody | undefined;
  /** `bearer` adds the access token and, on a 401, refreshes it and re-sends once without using a retry. */
  auth: 'bearer' | 'none';
  /**
   * The per-call options of the operation this request belongs to, for the token request a bearer
   * request may have to make first: the call's timeout, retries and headers apply there too (a
   * refresh shared with other callers runs with the options of the call that started it).
   * @default the client's settings
   */
  tokenOptions?: TokenCallOptions;
  retryPolicy: RetryPolicy;
  /** Overrides `timeoutMs` for this request. */
  timeoutMs?: number;
  /** Overrides `maxRetries` for this request. */
  maxRetries?: number;
  /** Overrides parts of the client's `backoff` for this request. */
  backoff?: RetryBackoff;
  /** Overrides `maxRetryAfterMs` for this request. */
  maxRetryAfterMs?: number;
  /**
   * `false`: a 429 is thrown at once instead of being retried here, for callers that pace their
   * own re-sends (the publisher waits for its rate budget and re-sends without using a retry).
   * @default true
   */
  retryRateLimited?: boolean;
  /**
   * Which redirects are followed (by hand, up to `maxRedirects`):
   * - `follow`: redirects of a GET or PUT; Authorization never goes to another origin, and a body
   *   never does either: a 307/308 (or a 301/302 after a PUT) to another origin for a request with
   *   a body fails. A POST, a `non-idempotent` request and a streamed body never follow: their 3xx
   *   is a `RedirectError`.
   * - `none`: no redirect; a 3xx goes to `mapError` like any other non-2xx answer (a
   *   `RedirectError` without one). For requests whose body holds credentials (the token
   *   request): a redirecting endpoint is misconfigured.
   * @default 'follow'
   */
  redirects?: 'follow' | 'none';
  /**
   * The largest 2xx body read, in bytes; past it the attempt fails with a `ResponseTooLargeError`
   * and the connection is dropped. Error bodies are always cut at 64 KiB instead.
   * @default 8 MiB (`MAX_API_RESPONSE_BYTES`)
   */
  maxResponseBytes?: number;
  /**
   * Values to remove from the error body before it reaches `mapError` (the client secret, in each
   * encoding it was sent in). The bearer token this request sent is always removed.
   * @default []
   */
  secrets?: readonly string[];
  /**
   * Turns a non-2xx response into an error; defaults to `PushApiError.fromResponse`. `bodyText` is
   * the body's first 64 KiB, already scrubbed of secrets (in every encoding); fields parsed from
   * it must be scrubbed again (`scrubJsonValue`), since decoding may reveal more.
   */
  mapError?: (response: AnswerHead, bodyText: string) => PushError;
  /** Told before each re-send, so that callers can adapt (the publisher shrinks its window on 429). */
  onRetry?: (info: RetryInfo) => void;
  signal?: AbortSignal;
  /** The call id hooks report; one the caller took from `nextCallId()` when several sends form one request. @default a new one */
  callId?: number;
}

/** What `mapError` sees of an answer: its status, and its headers scrubbed of the request's secrets. */
export type AnswerHead = Pick<Response, 'status' | 'headers'>;

/** Sends requests with the client's transport, timeout, retry and auth rules. */
export interface HttpClient {
  /** Resolves with a 2xx response, or rejects with a `PushError`. */
  send(spec: RequestSpec): Promise<Response>;
  /** A new call id for hooks, for a caller whose logical request spans several sends (`RequestSpec.callId`). */
  nextCallId(): number;
}
