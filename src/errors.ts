/**
 * The whole error family, in one file so that it can be read in one sitting.
 *
 * ```
 * PushError
 * ├── ConfigurationError            bad or missing option, caught before any request
 * ├── PushApiError                  the data API answered with an error status
 * │   ├── BadRequestError           400
 * │   ├── AuthenticationError       401
 * │   ├── PermissionDeniedError     403
 * │   ├── NotFoundError             404
 * │   ├── UnprocessableEntityError  422
 * │   ├── RateLimitError            429
 * │   ├── ServerError               5xx
 * │   ├── RedirectError             a 3xx that is not followed (a POST, another origin, too many hops)
 * │   └── UnexpectedResponseError   a finance 2xx that is not {"success": true}
 * ├── TokenError                    the token endpoint refused or answered nonsense
 * ├── UploadError                   a PUT to a signed address failed
 * ├── ResponseTooLargeError         a response body longer than its cap; the connection was dropped
 * ├── ConnectionError               no HTTP answer at all
 * │   └── TimeoutError              no answer within timeoutMs
 * ├── AbortError                    the caller's AbortSignal fired
 * ├── PublishStoppedError           a publish run stopped early; carries the report, the stop as `cause`
 * ├── UploadStoppedError            an upload run stopped early; carries the report, the stop as `cause`
 * └── RecordValidationError         records failed the finance schema (no HTTP involved)
 * ```
 *
 * None of these ever holds a client secret, an access token or an Authorization header:
 * error bodies come from the server and are scrubbed (raw text and every parsed field), and
 * request headers are never stored.
 *
 * The data that decides a retry lives on the error itself, never beside it: `status`,
 * `retryAfterMs` (PushApiError, TokenError, UploadError) and `requestMaybeSent` (ConnectionError).
 * An error wrapped as another's `cause` therefore keeps all of it.
 */

import type { PublishReport } from './finance/types.js';
import { scrubSecrets, truncateText } from './internal/text.js';
import type { UploadReport } from './uploads/types.js';

/** Response headers as a plain object with lower-case names, so that errors serialize and compare simply. */
export type HeadersRecord = Record<string, string>;

/**
 * The class an error of this package was made by, on each class of the family. A process may load
 * the package twice: its ESM build through `import` and its CJS build through `require` (a
 * dependency written in CommonJS, a CLI tool, a test runner), or the web build beside the Node one.
 * Each build has its own classes, so an error thrown by one would not be an `instanceof` the
 * other's, and a `catch` that tests for `NotFoundError` would rethrow a 404. A registered symbol is
 * the same in every build, so `instanceof` looks for it along the error's prototype chain.
 */
const ERROR_CLASS = Symbol.for('push-api-client.error-class');

/**
 * The registered class name of `prototype`'s own constructor, when it is one of this family's
 * classes. Read from property descriptors, never through a getter: `instanceof` in a `catch` must
 * run no code of the object tested, and must not throw where the plain rule would not.
 */
function errorClassOf(prototype: object): unknown {
  const made: unknown = Object.getOwnPropertyDescriptor(prototype, 'constructor')?.value;
  return typeof made === 'function' ? Object.getOwnPropertyDescriptor(made, ERROR_CLASS)?.value : undefined;
}

/** `value instanceof errorClass`, by the prototype chain or, for this family's classes, by their registered names. */
function isInstanceOf(errorClass: object, value: unknown): boolean {
  if (Function.prototype[Symbol.hasInstance].call(errorClass, value)) return true;
  if (!Object.hasOwn(errorClass, ERROR_CLASS) || typeof value !== 'object' || value === null) return false;
  const wanted = (errorClass as Record<symbol, unknown>)[ERROR_CLASS];
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (errorClassOf(proto) === wanted) return true;
  }
  return false;
}

/** Base class of every error this package throws. */
export class PushError extends Error {
  override name = 'PushError';

  /**
   * `error instanceof NotFoundError` holds for an error made by any build of this package (ESM,
   * CJS, web) that a process loaded, not only by the build this class comes from. Subclasses of a
   * user's own keep the plain rule.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class on the right of `instanceof`, a subclass as much as PushError.
    return isInstanceOf(this, value);
  }

  /**
   * Set on the error a stopped `finance.publish()` or `uploads.upload()` run rejects with
   * (`PublishStoppedError`, `UploadStoppedError`, whose `report` is typed for that operation):
   * what the run did before it stopped. Not enumerable, so logs and `JSON.stringify` stay small.
   */
  declare readonly report?: PublishReport | UploadReport | undefined;
  /**
   * The server's request id (`x-request-id`) of the answer the error is about, when the service
   * answered with one: on every error built from an answer, including a 2xx the client could not
   * use (a body that is not JSON, too large, or short of what was asked). Quote it to support.
   */
  declare readonly requestId?: string | undefined;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }

  /** A plain object for logs and `JSON.stringify`, without the stack. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key !== 'cause' && key !== 'report' && value !== undefined) out[key] = value;
    }
    return out;
  }
}

/**
 * Gives an error built from an answer the request id of that answer, unless it has one already;
 * for the errors of checks that run on a 2xx body, which never see the headers. Returns `error`.
 */
export function answeredBy<E extends PushError>(error: E, requestId: string | undefined): E {
  if (requestId !== undefined && error.requestId === undefined) {
    Object.defineProperty(error, 'requestId', {
      value: boundedRequestId(requestId),
      enumerable: true,
      writable: false,
      configurable: true,
    });
  }
  return error;
}

/** An option is missing or invalid. Raised at construction, before any request is made. */
export class ConfigurationError extends PushError {
  override name = 'ConfigurationError';
}

/** Parsed body of an error response from the data API (`{code, message, success: false}` per the spec). */
export interface ApiErrorBody {
  code?: string | undefined;
  message?: string | undefined;
  success?: boolean | undefined;
  [key: string]: unknown;
}

/** The data API answered with a non-2xx status. Subclasses exist for each status the spec lists. */
export class PushApiError extends PushError {
  override name = 'PushApiError';
  /** HTTP status code. */
  readonly status: number;
  /** The `code` field of the error body, or the status as a string when the body has none. */
  readonly code: string;
  /** The parsed JSON error body, or the raw text when it was not JSON. */
  readonly body: ApiErrorBody | string | undefined;
  /** Response headers (lower-case names). */
  readonly headers: HeadersRecord;
  /** The server's request id (`x-request-id`), when it sent one. */
  override readonly requestId: string | undefined;
  /** The server's `Retry-After`, in milliseconds (capped at {@link MAX_RETRY_AFTER_MS}), when it sent a valid one. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, body: ApiErrorBody | string | undefined, headers: HeadersRecord, message?: string) {
    const bodyMessage = typeof body === 'object' && typeof body?.message === 'string' ? body.message : undefined;
    // The server's text is cut to a bounded length: a hostile service may send megabytes of it.
    super(message ?? `${status} ${truncateText(bodyMessage ?? 'HTTP error')}`);
    this.status = status;
    this.code = typeof body === 'object' && typeof body?.code === 'string' ? truncateText(body.code) : String(status);
    this.body = body;
    this.headers = headers;
    this.requestId = boundedRequestId(headers['x-request-id']);
    this.retryAfterMs = parseRetryAfterHeader(headers['retry-after']);
  }

  /** Builds the subclass that matches the status. */
  static fromResponse(status: number, body: ApiErrorBody | string | undefined, headers: HeadersRecord): PushApiError {
    switch (status) {
      case 400:
        return new BadRequestError(status, body, headers);
      case 401:
        return new AuthenticationError(status, body, headers);
      case 403:
        return new PermissionDeniedError(status, body, headers);
      case 404:
        return new NotFoundError(status, body, headers);
      case 422:
        return new UnprocessableEntityError(status, body, headers);
      case 429:
        return new RateLimitError(status, body, headers);
      default:
        return status >= 500 ? new ServerError(status, body, headers) : new PushApiError(status, body, headers);
    }
  }
}

/** 400: an invalid or unexpected query parameter or value. */
export class BadRequestError extends PushApiError {
  override name = 'BadRequestError';
}

/** 401: the access token is invalid or expired (after one automatic refresh). */
export class AuthenticationError extends PushApiError {
  override name = 'AuthenticationError';
}

/** 403: the access token lacks the required scope. */
export class PermissionDeniedError extends PushApiError {
  override name = 'PermissionDeniedError';
}

/** 404: the customer or application does not exist. */
export class NotFoundError extends PushApiError {
  override name = 'NotFoundError';
}

/** 422: the request payload is invalid. */
export class UnprocessableEntityError extends PushApiError {
  override name = 'UnprocessableEntityError';
}

/** 429: the rate limit was exceeded. */
export class RateLimitError extends PushApiError {
  override name = 'RateLimitError';
}

/** 5xx: the server failed. A 500, 502 or 504 on the finance POST leaves the outcome unknown. */
export class ServerError extends PushApiError {
  override name = 'ServerError';
}

/**
 * A 3xx answer that the client did not follow: any redirect of a POST (the body was already
 * sent, so on the finance POST the batch's outcome is unknown), a redirect that would carry a body
 * to another origin, or too many hops. `targetOrigin` names where it pointed, without path, query
 * or credentials (the `location` header is left out of `headers` for the same reason).
 *
 * `status` is 0 (`code` `redirect`), and `targetOrigin` undefined, when the runtime refused the
 * redirect before it could be read: a POST to an address whose earlier answers came without a
 * redirect is sent without a copy of its body to replay, and fetch then reports a redirect without
 * its status (as fetch's opaque redirects show status 0). Later POSTs to that address keep the
 * copy, and report a redirect in full.
 */
export class RedirectError extends PushApiError {
  override name = 'RedirectError';
  /** The status as a string, or `redirect` when the status was not read (status 0). */
  override readonly code: string;
  /** The origin of the `Location` target (`https://host:port`), or undefined when there was none or it was invalid. */
  readonly targetOrigin: string | undefined;

  constructor(status: number, headers: HeadersRecord, message: string, targetOrigin: string | undefined) {
    super(status, undefined, headers, message);
    this.code = status === 0 ? 'redirect' : String(status);
    this.targetOrigin = targetOrigin;
  }
}

/** A finance 2xx answer that is not the spec's `{"success": true}`. */
export class UnexpectedResponseError extends PushApiError {
  override name = 'UnexpectedResponseError';
  /** True when the body said `success: false` (the batch was refused); false when it said nothing usable. */
  readonly refused: boolean;

  constructor(status: number, body: ApiErrorBody | string, headers: HeadersRecord, message: string, refused: boolean) {
    super(status, body, headers, message);
    this.refused = refused;
  }
}

/** The token endpoint refused the credentials, or answered with something that is not a usable token. */
export class TokenError extends PushError {
  override name = 'TokenError';
  /** The OAuth 2.0 `error` code (RFC 6749 §5.2), such as `invalid_client`, or `invalid_token_response`. */
  readonly error: string;
  /** The OAuth `error_description`, when the server sent one. */
  readonly errorDescription: string | undefined;
  /** HTTP status of the token response, when there was one. */
  readonly status: number | undefined;
  /** The token endpoint's `Retry-After`, in milliseconds, when it sent a valid one. */
  readonly retryAfterMs: number | undefined;
  /** The token endpoint's request id (`x-request-id`), when it answered with one. */
  override readonly requestId: string | undefined;

  constructor(
    error: string,
    message: string,
    options: {
      status?: number | undefined;
      errorDescription?: string | undefined;
      retryAfterMs?: number | undefined;
      requestId?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.error = error;
    this.errorDescription = options.errorDescription;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.requestId = boundedRequestId(options.requestId);
  }
}

/** A PUT to a signed upload address failed. */
export class UploadError extends PushError {
  override name = 'UploadError';
  /** The file name the upload was for. */
  readonly fileName: string;
  /** HTTP status, when the storage host answered. */
  readonly status: number | undefined;
  /** `<Code>` from the storage host's XML error body, such as `SignatureDoesNotMatch`. */
  readonly storageCode: string | undefined;
  /** `<Message>` from the storage host's XML error body. */
  readonly storageMessage: string | undefined;
  /** The storage host's `Retry-After`, in milliseconds, when it sent a valid one. */
  readonly retryAfterMs: number | undefined;
  /** The storage host's request id (`x-request-id`), when it answered with one. */
  override readonly requestId: string | undefined;

  constructor(
    fileName: string,
    message: string,
    options: {
      status?: number | undefined;
      storageCode?: string | undefined;
      storageMessage?: string | undefined;
      retryAfterMs?: number | undefined;
      requestId?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.fileName = fileName;
    this.status = options.status;
    this.storageCode = options.storageCode;
    this.storageMessage = options.storageMessage;
    this.retryAfterMs = options.retryAfterMs;
    this.requestId = boundedRequestId(options.requestId);
  }
}

/**
 * A response body was longer than the cap for its kind (token answers, API answers); reading
 * stopped there and the connection was dropped, so that a hostile or broken service cannot fill
 * the memory. On the finance POST the batch's outcome is unknown: the service answered, so it
 * received the batch.
 */
export class ResponseTooLargeError extends PushError {
  override name = 'ResponseTooLargeError';
  /** HTTP status of the answer whose body was too large. */
  readonly status: number;
  /** The cap that was passed, in bytes. */
  readonly limitBytes: number;

  constructor(operation: string, status: number, limitBytes: number) {
    super(`${operation} response body is larger than ${limitBytes} bytes; the connection was dropped`);
    this.status = status;
    this.limitBytes = limitBytes;
  }
}

/** No HTTP response was received: DNS, refused or reset connection, TLS failure. */
export class ConnectionError extends PushError {
  override name = 'ConnectionError';
  /**
   * Whether the request may have reached the server. `false` only when the failure surely came
   * before the request was written (for example a refused connection), so a re-send cannot duplicate.
   */
  readonly requestMaybeSent: boolean;

  constructor(message: string, options: { requestMaybeSent: boolean; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.requestMaybeSent = options.requestMaybeSent;
  }
}

/** No response within `timeoutMs`. The request may have been processed. */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { requestMaybeSent: true, cause: options.cause });
  }
}

/** The caller's AbortSignal fired. */
export class AbortError extends PushError {
  override name = 'AbortError';
}

/** The counts of a publish report, for an error message. */
function publishCounts(report: PublishReport): string {
  return `${report.recordsSent} sent, ${report.recordsUnknown} unknown, ${report.recordsFailed} failed, ${report.recordsNotRead} not read`;
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/** The cause of a stopped run, for logs: a PushError's own fields (never a secret), else its name and message. */
function causeJson(cause: unknown): unknown {
  if (cause instanceof PushError) return cause.toJSON();
  if (cause instanceof Error) return { name: cause.name, message: cause.message };
  return String(cause);
}

/**
 * A `finance.publish()` run stopped before every record had a final status. `cause` is the error
 * that stopped it, with its own class, `status` and `requestId`: an error every further batch
 * would meet (a refused connection or token, a 401, 403 or 404), the caller's abort (an
 * `AbortError`), or what the input or `onBatchSettled` threw. Batches in flight settled first;
 * `report` says what was sent, and counts in `recordsNotRead` what the stop left unsent.
 */
export class PublishStoppedError extends PushError {
  override name = 'PublishStoppedError';
  /** What the run did before it stopped. Not enumerable, so logs and `JSON.stringify` stay small. */
  declare readonly report: PublishReport;

  constructor(report: PublishReport, cause: unknown) {
    super(`publish stopped: ${messageOf(cause)} (${publishCounts(report)})`, { cause });
    Object.defineProperty(this, 'report', { value: report, enumerable: false, configurable: true, writable: false });
  }

  /** Also the cause's fields (its status, code, request id), so that a log line says what stopped the run. */
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), cause: causeJson(this.cause) };
  }
}

/**
 * An `uploads.upload()` run stopped before every file had a final status. `cause` is the error
 * that stopped it, with its own class, `status` and `requestId`: a failed address request, an
 * error every further file would meet (a refused connection or token, a 401, 403 or 404), the
 * caller's abort (an `AbortError`), or what `onFileSettled` threw. Files in flight finished first;
 * `report` lists every file, those never started as `not-started`.
 */
export class UploadStoppedError extends PushError {
  override name = 'UploadStoppedError';
  /** Every file's outcome. Not enumerable, so logs and `JSON.stringify` stay small. */
  declare readonly report: UploadReport;

  constructor(report: UploadReport, cause: unknown) {
    super(
      `upload stopped: ${messageOf(cause)} (${report.filesUploaded} uploaded, ${report.filesFailed} failed, ${report.filesNotStarted} not started)`,
      { cause },
    );
    Object.defineProperty(this, 'report', { value: report, enumerable: false, configurable: true, writable: false });
  }

  /** Also the cause's fields (its status, code, request id), so that a log line says what stopped the run. */
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), cause: causeJson(this.cause) };
  }
}

/** One problem with one field of one record. */
export interface RecordIssue {
  /** Dotted path of the field, such as `amount`; empty for the record as a whole. */
  path: string;
  message: string;
}

/** One invalid input record: its index in the input and what is wrong with it. */
export interface InvalidRecord {
  /** Zero-based index of the record in the input. */
  index: number;
  issues: RecordIssue[];
}

/**
 * Records failed the finance schema. Lists every bad record's index, field path and message.
 * Kept outside the HTTP family: nothing was sent because of these records.
 * `TReport` defaults to `PublishReport`, the only report this package attaches, so that
 * `const e: RecordValidationError = ...` reads `e.report` typed.
 */
export class RecordValidationError<TReport extends PublishReport = PublishReport> extends PushError {
  override name = 'RecordValidationError';
  readonly invalid: InvalidRecord[];
  /**
   * `publish` with an async iterable (`onInvalid: 'throw'`): the report of what was already sent
   * before the bad record was met. Undefined when the error came before any request.
   */
  override readonly report: TReport | undefined;

  constructor(invalid: InvalidRecord[], report?: TReport) {
    super(RecordValidationError.#describe(invalid));
    this.invalid = invalid;
    this.report = report;
  }

  static #describe(invalid: InvalidRecord[]): string {
    const shown = invalid.slice(0, 5).map((record) => {
      const issues = record.issues.map((issue) => `${issue.path || '(record)'}: ${issue.message}`).join('; ');
      return `record ${record.index}: ${issues}`;
    });
    const more = invalid.length > shown.length ? ` (and ${invalid.length - shown.length} more)` : '';
    return `${invalid.length} invalid record(s): ${shown.join(' | ')}${more}`;
  }
}

// Named here rather than read from `name`: a user's subclass may rename itself without joining the family's checks.
for (const [name, errorClass] of Object.entries({
  PushError,
  ConfigurationError,
  PushApiError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  UnprocessableEntityError,
  RateLimitError,
  ServerError,
  RedirectError,
  UnexpectedResponseError,
  TokenError,
  UploadError,
  ResponseTooLargeError,
  ConnectionError,
  TimeoutError,
  AbortError,
  PublishStoppedError,
  UploadStoppedError,
  RecordValidationError,
})) {
  Object.defineProperty(errorClass, ERROR_CLASS, { value: name });
}

/** Caps any server-requested wait: a misconfigured server must not park a pipeline for hours. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Reads `Retry-After` as delta-seconds or as an HTTP date (RFC 9110 §10.2.3), capped at
 * {@link MAX_RETRY_AFTER_MS}. Returns undefined for a missing or malformed value so that the
 * caller falls back to its normal backoff.
 */
export function parseRetryAfterHeader(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date always names a weekday; this rejects bare numbers with signs or fractions that Date.parse accepts.
  if (!/^[A-Za-z]{3},/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - now, 0), MAX_RETRY_AFTER_MS);
}

/**
 * Longest request id kept. Ids are short tokens (a UUID is 36 characters); one that is longer is
 * cut, so that a hostile answer cannot repeat megabytes into every batch report, hook event,
 * rejects line and `--json` report that carries it.
 */
const MAX_REQUEST_ID_LENGTH = 200;

/** A request id as the server sent it, cut to {@link MAX_REQUEST_ID_LENGTH}; undefined when absent. */
function boundedRequestId(value: string | null | undefined): string | undefined {
  return value === null || value === undefined ? undefined : truncateText(value, MAX_REQUEST_ID_LENGTH);
}

/**
 * The `x-request-id` of an answer, bounded, and scrubbed of `secrets`: a hostile service may echo
 * the token or the client secret it was sent in any header, this one included.
 */
export function requestIdFrom(headers: Pick<Headers, 'get'>, secrets: readonly string[] = []): string | undefined {
  const value = headers.get('x-request-id');
  return boundedRequestId(value === null || secrets.length === 0 ? value : scrubSecrets(value, secrets));
}
