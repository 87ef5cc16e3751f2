import type { PushError } from '../errors.js';
import type { Credentials } from './attempt.js';
import type { CallSettings, ReadyBearer } from './http-client.js';

/**
 * How failures of one request are retried.
 * - `idempotent`: token requests, GET upload-urls and PUTs; 408, 429, 5xx and network errors are retried.
 * - `non-idempotent`: the finance POST; only failures that surely were not processed (429, 503, a
 *   connection that failed before the request was written) are retried, and ambiguous ones only
 *   when `retryAmbiguous` is on.
 * - `never`: one attempt (the 401 refresh still applies).
 */
export type RetryPolicy = 'idempotent' | 'non-idempotent' | 'never';

/**
 * What a request body may be. Built from Node's own globals rather than the DOM's `BodyInit`, so
 * that the published declarations type-check in projects without the DOM library.
 */
export type RequestBody = string | Uint8Array<ArrayBuffer> | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

/** Handed to a body factory. A streaming body calls `touch()` as bytes move. */
export interface BodyControl {
  /**
   * Restarts the attempt's timeout: a long upload that keeps moving never times out, a stalled one
   * does. `graceMs` adds to the next wait only: once the whole body is handed over, the system's
   * buffers may still hold a slow link's worth of it, which moves without telling anyone.
   */
  touch(graceMs?: number): void;
}

/** One logical request; `HttpClient.send` turns it into one or more attempts. */
export interface RequestSpec {
  /** Short name for logs and errors: 'token' | 'upload-urls' | 'upload' | 'finance' | 'request'. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
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
   * Credentials the transport adds after middleware has run, on the request's own origin only:
   * headers (Basic) and form fields (`client_id`, `client_secret`) appended to the form body.
   * @default none
   */
  credentials?: Credentials;
  /** The scopes of a bearer request's token. @default the token manager's scopes */
  scopes?: readonly string[];
  /**
   * The token the first attempt sends with, from `bearerReady` (default scopes only). A refusal of
   * it is handled as any 401: the current token, or a refresh, and one re-send. Later attempts ask
   * the token manager afresh.
   * @default asked of the token manager at each attempt
   */
  bearer?: ReadyBearer;
  retryPolicy: RetryPolicy;
  /**
   * The per-call settings of the operation this request belongs to, applied here once: the
   * timeout and retries override the client's, the headers go under `headers`, the signal aborts
   * the request, and a bearer request's token request (when it has to make one first) gets the
   * same timeout, retries and headers.
   * @default the client's settings, no signal
   */
  call?: CallSettings;
  /**
   * The rate budget this request shares with others (a publish run). With it, a 429 is a wait of
   * its own class, not counted as a retry: the request gives its turn back, waits, takes a turn
   * again and re-sends, while `withinDeadline` allows.
   * @default none: a 429 is retried like a 503, within `maxRetries`
   */
  pacing?: RequestPacing;
  /**
   * Told of every attempt the service pushed back on (a 429, or a 503, with its `Retry-After`,
   * capped, when it sent one) and of every attempt that got no answer within its timeout: the
   * run's concurrency limiter narrows its window on them.
   * @default none
   */
  onBackPressure?: (pushBack: PushBack) => void;
  /** Steps that may mend a refusal, at most once each per request (a fresh upload address, a rotated secret). @default none */
  recover?: readonly RecoveryStep[];
  /**
   * Fires when the run this request belongs to has stopped (a publish or upload run, by the service
   * or by the caller's code): a request waiting to be sent again (a backoff, a `Retry-After`, a
   * refreshed token after a 401) or to be mended (`recover`) then gives up at once with its last
   * attempt's failure, and one waiting for its first token is not started (`notStarted`), so that
   * nothing is sent after the stop. An attempt in flight is not cut: it finishes.
   * @default none: every wait runs its course
   */
  runStopped?: AbortSignal;
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
   * Fields of a 2xx JSON answer that hold credentials the answer hands out (the token endpoint's
   * `access_token`): middleware sees markers in their place, and the transport gets the real values.
   * @default none
   */
  answerSecrets?: readonly string[];
  /**
   * Headers the tracing propagator added (`traceparent`, `tracestate`, `baggage`): trace context
   * for the service, never sent on a redirect hop to another origin.
   * @default none
   */
  traceHeaders?: readonly string[];
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
}

/** What `mapError` sees of an answer: its status, and its headers scrubbed of the request's secrets. */
export type AnswerHead = Pick<Response, 'status' | 'headers'>;

/**
 * A turn in a shared rate budget, for a request that waits out 429s instead of failing on them.
 * The request holds a turn while it is sent; the transport gives it back for a rate limit's wait.
 */
export interface RequestPacing {
  /** Takes a turn again after a wait. False: the run stopped meanwhile, give up with the 429. Rejects with an `AbortError` on abort. */
  acquire(signal: AbortSignal | undefined): Promise<boolean>;
  /** Gives the turn back (before a wait; again when the request settles, a no-op when not held). */
  release(): void;
  /** The service pushed back (429, or 503): its `Retry-After` (or the wait), and whether the transport re-sends now. */
  rateLimited(retryAfterMs: number | undefined, willRetry: boolean): void;
  /** Whether a rate limit's wait of `delayMs` still ends within the deadline of the patience. */
  withinDeadline(delayMs: number): boolean;
}

/** A step that may mend one kind of refusal once: what it returns replaces those parts of the request. */
export interface RecoveryStep {
  /** For the log line: what the step does, as `fetching a fresh upload address`. */
  name: string;
  /** Whether this refusal is one the step mends. */
  when(error: PushError): boolean;
  /** The parts of the request to send instead; undefined when there is nothing new to try (the refusal stands). */
  next(): Promise<
    Partial<Pick<RequestSpec, 'url' | 'headers' | 'body' | 'secrets' | 'mapError' | 'credentials'>> | undefined
  >;
}

/**
 * How one request ended, as the transport saw it. A failure records whether the last attempt's
 * body may have reached the service (`bodySent`: false when it never left, or when the service
 * answered that it did not take it, as a 401 before a refresh does), and the first ambiguous
 * attempt that was re-sent anyway (`retryAmbiguous`): after one, the service may hold the body
 * whatever the re-sends answered.
 */
export type Exchange =
  | { ok: true; response: Response; earlierAmbiguous: PushError | undefined }
  | {
      ok: false;
      error: PushError;
      bodySent: boolean;
      earlierAmbiguous: PushError | undefined;
      /** No attempt left: the request's run stopped while it waited for its first token (`runStopped`). */
      notStarted?: true;
      /**
       * The run stopped (`runStopped`) before the attempt this answer called for was made: a token
       * refresh after a 401, or a re-send waiting for its token, its backoff or `Retry-After`. The
       * answer stands as this request's outcome, but says nothing of what the next request would
       * meet. (A recovery step the stop gave up, such as a fresh upload address, is not marked: its
       * refusal, an expired signature, stops no run either way.)
       */
      nextAttemptCut?: true;
    };

/** Sends requests with the client's transport, timeout, retry and auth rules. */
export interface HttpClient {
  /** Resolves with a 2xx response, or rejects with a `PushError`. */
  send(spec: RequestSpec): Promise<Response>;
  /** Like `send`, but resolves with how the request ended, failures included, for callers that judge the outcome. */
  exchange(spec: RequestSpec): Promise<Exchange>;
  /**
   * Starts getting the bearer token that requests with these call settings will use (the token
   * manager shares one request among its callers and caches the token), and resolves once the
   * token is at hand or its request has had one turn of the event loop to leave. Never rejects.
   * Resolves with the call settings the operation's requests should use from then on: should the
   * token endpoint refuse that request, they meet its refusal rather than asking again; their
   * `earlyBearer.release()` drops the request once the operation is over.
   */
  prepareBearer(call?: CallSettings): Promise<CallSettings>;
  /**
   * Resolves once a bearer token for these call settings is at hand (from the cache, or once its
   * request, shared with every other caller, has been answered), so that a caller can tell "about
   * to be sent" from "waiting for a token". Rejects with what a request would meet instead: the
   * token's failure after its own retries, or an `AbortError` for the call's signal or once
   * `runStopped` fires (the caller's run stopped: a token request only it waited for is given up).
   * The token it resolves with goes into the request's `bearer`, so that the request leaves with
   * it even if a refresh began meanwhile; undefined when the client has no token source.
   */
  bearerReady(call?: CallSettings, runStopped?: AbortSignal): Promise<ReadyBearer | undefined>;
}

/**
 * An attempt that says the window is too wide: a 429 (`rate-limited`), a 503 (`unavailable`), or no
 * answer within the attempt's timeout (`timed-out`: on a link the window saturates, answers stop
 * coming back at all, and a window that only heard of answers would never learn it).
 */
export interface PushBack {
  reason: 'rate-limited' | 'unavailable' | 'timed-out';
  /** The service's `Retry-After` (capped), when it sent one. */
  retryAfterMs: number | undefined;
}
