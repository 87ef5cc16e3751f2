/**
 * One attempt, from the request a caller built to the answer's body read:
 * - the user's middleware chain, run before credentials are added, so that it never sees the
 *   client secret or a token;
 * - the attempt's timeout, its hook events and its log line (hooks never fail a request, and
 *   their events carry no header value and no body);
 * - the answer's body: a 2xx read under its cap, an error body cut, scrubbed (internal/text.ts)
 *   and mapped to its class (errors.ts).
 */
import {
  type ApiErrorBody,
  answeredBy,
  ConnectionError,
  type HeadersRecord,
  PushApiError,
  PushError,
  ResponseTooLargeError,
  requestIdFrom,
} from '../errors.js';
import { drops, ignoreRejection } from '../internal/logger.js';
import {
  base64Forms,
  cutAfterSecrets,
  parseJsonObject,
  scrubAnswerUrlText,
  scrubJsonValue,
  scrubSecrets,
  secretInName,
  trimHttpWhitespace,
} from '../internal/text.js';
import { onAbort } from '../internal/waits.js';
import { isReservedHeader } from './http-client.js';
import type { Logger, PushClientHooks } from './public-types.js';
import { type FetchLike, scrubFailureTexts, sendFollowingRedirects, toTransportError } from './redirects.js';
import { statusOf } from './retry.js';
import type { AnswerHead, BodyControl, RequestBody, RequestSpec } from './types.js';

export interface AttemptOptions {
  fetch: FetchLike;
  timeoutMs: number;
  userAgent: string;
  allowInsecureHttp: boolean;
  maxRedirects: number;
  logger: Logger;
  hooks: SafeHooks;
  /** Which logical request this attempt belongs to, for hooks. */
  callId: number;
  /** `Bearer <token>`; sent only to the origin of `spec.url`. */
  authorization?: string;
  /** The client secret's forms, which a data answer may echo though the request never carried them. */
  credentials?: readonly string[];
  attempt: number;
  /** The caller's signal (the call's, from `RequestSpec.call`). */
  signal?: AbortSignal;
  /** The client's middleware, run on the attempt's first request. @default none */
  middleware?: readonly Middleware[];
}

/** The attempt's signal, with the timeout that aborts it. */
interface AttemptSignal extends BodyControl {
  readonly signal: AbortSignal;
  /** Whether the timeout, rather than the caller, aborted the attempt. */
  readonly timedOut: boolean;
  /** How long the timer last waited for progress: `timeoutMs`, or more after a grace. */
  readonly waitedMs: number;
  /** Stops the timer and stops following the caller's signal: the attempt settled. */
  release(): void;
}

/**
 * The attempt's own signal: it aborts with the caller's signal, or when `timeoutMs` pass after the
 * attempt starts or after the body last made progress (a 1 GiB upload may take minutes, but must
 * not hang when the link stalls). One controller serves both, since one is made per attempt. The
 * caller's signal may outlive thousands of calls (a service's shutdown signal), so it is followed
 * through a listener removed when the attempt settles, never with `AbortSignal.any`, whose
 * combined signals stay reachable from the source.
 */
function attemptSignal(caller: AbortSignal | undefined, timeoutMs: number): AttemptSignal {
  const controller = new AbortController();
  let timedOut = false;
  let waitedMs = timeoutMs;
  const start = (ms = timeoutMs) => {
    waitedMs = ms;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`No progress within ${ms} ms`, 'TimeoutError'));
    }, ms);
    // Like AbortSignal.timeout, the timer must not keep the process alive.
    if (typeof timer === 'object') timer.unref?.();
    return timer;
  };
  let timer = start();
  let graced = false;
  const stopCaller = caller ? onAbort(caller, () => controller.abort(caller.reason)) : () => {};
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    get waitedMs() {
      return waitedMs;
    },
    touch: (graceMs = 0) => {
      if (controller.signal.aborted) return;
      // Node's timers restart in place (for as long as they were set); workers and edge runtimes
      // return a number, set again, as is a timer whose length changes.
      if (!graced && graceMs <= 0 && typeof timer === 'object' && typeof timer.refresh === 'function') timer.refresh();
      else {
        clearTimeout(timer);
        graced = graceMs > 0;
        timer = start(timeoutMs + Math.max(0, graceMs));
      }
    },
    release: () => {
      clearTimeout(timer);
      stopCaller();
    },
  };
}

/**
 * One attempt: the request and its redirects (redirects.ts), then the whole response body, read
 * under its cap (below), all under one per-attempt timeout. Resolves with a 2xx
 * response whose body is already in memory; throws a PushError otherwise.
 */
export async function sendAttempt(spec: RequestSpec, options: AttemptOptions): Promise<Response> {
  const started = performance.now();
  const control = attemptSignal(options.signal, options.timeoutMs);
  const signal = control.signal;
  const event = {
    callId: options.callId,
    operation: spec.operation,
    method: spec.method,
    url: redactedUrl(spec.url),
    attempt: options.attempt,
  };
  // Most clients have no response hook, and this is on every attempt.
  const settled = !listens(options.hooks, 'response')
    ? () => {}
    : (status: number | undefined, requestId: string | undefined, error: string | undefined) =>
        options.hooks.response({
          ...event,
          status,
          durationMs: Math.round(performance.now() - started),
          requestId,
          error,
        });
  options.hooks.request(event);
  // An answer may echo what was sent; the bearer token and the caller's secrets never reach an error.
  // As fetch sends it: a header value loses its leading and trailing whitespace, so an echo of the
  // token as received holds no whitespace that the token as issued may have ended with.
  // The transport writes `Bearer <token>` itself: the prefix is cut as written, not as any whitespace.
  const bearerToken =
    options.authorization === undefined
      ? undefined
      : trimHttpWhitespace(
          options.authorization.startsWith('Bearer ') ? options.authorization.slice(7) : options.authorization,
        );
  const secrets = [
    ...(spec.secrets ?? []),
    ...(options.credentials ?? []),
    ...(bearerToken ? [bearerToken, ...base64Forms(bearerToken)] : []),
  ];
  // The address as the client built it, never a redirect hop's: the service chose those, and may
  // have written a token it received into one. A signed upload address came from an answer too.
  // Scrubbed only when a line is written: most clients log nothing, and this is on every attempt.
  // Read now: the URL object is handed to the caller's fetch, which could change it.
  const { host, pathname } = spec.url;
  const log = drops(options.logger, 'debug')
    ? () => {}
    : (method: string, fields: Record<string, unknown>) =>
        options.logger.debug('push-api-client request', {
          operation: spec.operation,
          method,
          host: scrubAnswerUrlText(host, secrets),
          path: scrubAnswerUrlText(pathname, secrets),
          attempt: options.attempt,
          durationMs: Math.round(performance.now() - started),
          ...fields,
        });
  // Nothing has been sent when the factory throws (a file that cannot be opened): not a network error.
  const openBody = (): RequestBody | undefined => {
    try {
      return spec.body?.(control);
    } catch (error) {
      if (error instanceof PushError) throw error;
      const detail = error instanceof Error ? `: ${error.message}` : '';
      throw new PushError(`${spec.operation} request body could not be created${detail}`, { cause: error });
    }
  };

  let method: string = spec.method;
  /** The status of an answer whose headers came: a timeout after them is a body that did not finish. */
  let answered: number | undefined;
  /** The hop whose answer is being read: a failure to read it (Bun's) quotes its address. */
  let answering: URL | undefined;
  try {
    const sent = await sendFollowingRedirects(spec, {
      fetch: options.fetch,
      userAgent: options.userAgent,
      allowInsecureHttp: options.allowInsecureHttp,
      maxRedirects: options.maxRedirects,
      ...(options.authorization !== undefined && { authorization: options.authorization }),
      signal,
      secrets,
      openBody,
      onRedirect: (status) => log(method, { status, redirect: true }),
      attempt: options.attempt,
      ...(options.middleware !== undefined && { middleware: options.middleware }),
    });
    ({ method } = sent);
    const { response } = sent;
    answered = response.status;
    answering = sent.url;
    if (!response.ok) throw await errorFromResponse(response, spec, secrets);
    // Every secret this request sent is scrubbed from the answer, headers included: the token
    // answer's body holds a new token, never the client secret.
    const buffered = await bufferSuccess(response, spec, secrets);
    log(method, { status: response.status });
    settled(response.status, requestIdFrom(buffered.headers), undefined);
    return buffered;
  } catch (caught) {
    // A failure of fetch itself was scrubbed where it was caught (redirects.ts).
    if (answering) scrubFailureTexts(caught, answering, secrets);
    const error = toTransportError(caught, {
      userSignal: options.signal,
      timedOut: control.timedOut,
      timeoutMs: Math.round(control.waitedMs),
      operation: spec.operation,
      answered,
    });
    const status = statusOf(error);
    log(method, status === undefined ? { error: error.name } : { status, error: error.name });
    settled(status, requestIdOf(error), error.name);
    throw error;
  } finally {
    control.release();
  }
}

/**
 * Client-wide middleware: functions that see each attempt's first request, may replace it, and
 * hand it on. Credentials are added after the last one has run, so no middleware ever sees the
 * client secret or the bearer token; the transport's own rules apply to what comes out.
 */

/** The public name of an operation, as middleware sees it. */
export type MiddlewareOperation = 'token' | 'uploadUrls' | 'upload' | 'finance' | 'request';

/** What a middleware knows of the request it is given. */
export interface MiddlewareContext {
  /** The operation the request serves. */
  operation: MiddlewareOperation;
  /** The attempt of this request, from 1: a re-send after a retryable failure counts one more. */
  attempt: number;
}

/**
 * A middleware: returns the answer of `next(request)`, for this request or a replacement (with a
 * header added, say). It may also answer without calling `next`.
 */
export type Middleware = (
  request: Request,
  next: (request: Request) => Promise<Response>,
  context: MiddlewareContext,
) => Promise<Response>;

const PUBLIC_NAMES: Readonly<Record<string, MiddlewareOperation>> = {
  token: 'token',
  'upload-urls': 'uploadUrls',
  upload: 'upload',
  finance: 'finance',
  request: 'request',
};

/** The public name of an internal operation name. */
export function middlewareOperation(operation: string): MiddlewareOperation {
  return PUBLIC_NAMES[operation] ?? 'request';
}

/** What the transport adds after the middleware: never shown to it. */
export interface Credentials {
  /** Headers such as `authorization` (Bearer, or Basic with the client secret). */
  headers: Record<string, string>;
  /** Form fields appended to a form body (`client_id`, `client_secret`). */
  form: Record<string, string>;
}

export interface MiddlewareSend {
  fetch: FetchLike;
  middleware: readonly Middleware[];
  context: MiddlewareContext;
  /** The transport's own request, without credentials. */
  url: URL;
  init: RequestInit & { duplex?: 'half' };
  credentials: Credentials;
  /**
   * The request carries the client secret: its URL must stay exactly the transport's, so that the
   * secret goes to the token endpoint the client was given and to no other path of that host.
   */
  keepUrl: boolean;
  /** Told of the headers that go on, without credentials, so that redirect hops carry them too. */
  onHeaders: (headers: Record<string, string>) => void;
  /**
   * The answer as the middleware may see it: with every secret the request carried scrubbed, so
   * that a logging middleware never writes down one a hostile service echoed.
   */
  answer: (response: Response) => Promise<Response>;
  /** Credentials the answer hands out (a new token), hidden from middleware and restored after it. */
  conceal?: ConcealedAnswer;
}

/**
 * A header the transport owns (`headers` refuses them from callers too) that the middleware set or
 * changed: a wrong length or framing makes fetch refuse the request, or the service wait for bytes
 * that never come, and neither is a network failure that may have sent it. Authorization is not
 * among them: the credentials replace it.
 */
function changedOwnedHeader(chosen: Headers, transport: RequestInit['headers']): string | undefined {
  const original = new Headers(transport);
  for (const [name] of chosen) {
    if (name === 'authorization' || name === 'proxy-authorization' || !isReservedHeader(name)) continue;
    if (chosen.get(name) !== original.get(name)) return name;
  }
  return undefined;
}

/** Form fields appended to a urlencoded body. */
export function withForm(body: string, form: Record<string, string>): string {
  const params = new URLSearchParams(body);
  for (const [name, value] of Object.entries(form)) params.set(name, value);
  return params.toString();
}

/**
 * Runs the chain, then sends what comes out of it with the credentials added. The request must
 * stay on its origin and method: the transport checked those, and credentials go only there.
 */
export async function sendThroughMiddleware(options: MiddlewareSend): Promise<Response> {
  const { url, init, credentials } = options;
  const operation = options.context.operation;
  const streamed = init.duplex === 'half';
  const first = new Request(url, init);
  let fetched = false;
  let sending = false;
  let settled = false;
  /**
   * What the send itself threw (a refused connection, an answer past its cap): classified by the
   * transport as it is. Anything else thrown once the request left is the middleware's own.
   */
  const sendErrors = new WeakSet<object>();
  /**
   * An error answer (4xx, 5xx) as the transport reads it, a copy kept before any middleware reads
   * it: its status is the service's verdict, so an attempt that ends (its timeout) while the body or
   * the middleware is still on its way ends with that answer, never as "no answer".
   */
  let refusal: Promise<Response> | undefined;
  const last = async (request: Request): Promise<Response> => {
    // A `next` kept and called after the attempt ended would send, credentials added, a request
    // that no retry rule, report or abort accounts for.
    if (settled) throw new PushError(`middleware called next after the ${operation} request had settled; not sent`);
    // One send per attempt: the first may have been taken by the service already (a finance POST's
    // batch stored), and a second would duplicate it outside the retry rules that decide when a
    // request may go again. The SDK's own retries run the middleware afresh, numbered by `attempt`.
    if (sending) throw new PushError(`middleware called next twice for one ${operation} attempt; not sent again`);
    const target = new URL(request.url);
    if (target.origin !== url.origin) {
      throw new PushError(`middleware sent the ${operation} request to another origin; not sent`);
    }
    if (options.keepUrl && target.href !== url.href) {
      throw new PushError(
        `middleware changed the ${operation} request's URL, which carries the client secret; not sent`,
      );
    }
    if (request.method !== init.method) {
      throw new PushError(`middleware changed the ${operation} request's method; not sent`);
    }
    const owned = changedOwnedHeader(request.headers, init.headers);
    if (owned !== undefined) {
      throw new PushError(
        `middleware set the ${owned} header of the ${operation} request, which the transport owns; not sent`,
      );
    }
    // Set before the first await, so that two calls made together cannot both pass.
    sending = true;
    const headers = new Headers(request.headers);
    options.onHeaders(Object.fromEntries(headers));
    for (const [name, value] of Object.entries(credentials.headers)) headers.set(name, value);
    let body: RequestInit['body'] = null;
    if (Object.keys(credentials.form).length > 0) body = withForm(await request.text(), credentials.form);
    else if (request.body !== null) body = streamed ? request.body : await request.arrayBuffer();
    const sent: RequestInit & { duplex?: 'half' } = { ...init, headers, body };
    if (body instanceof ReadableStream) sent.duplex = 'half';
    else delete sent.duplex;
    fetched = true;
    try {
      const response = await options.fetch(target, sent);
      const reading = options.answer(response);
      // Registered before the middleware's own reaction: the copy is taken before it reads the body.
      if (response.status >= 400) refusal = reading.then((answer) => answer.clone());
      const answer = await reading;
      return options.conceal === undefined ? answer : await options.conceal.conceal(answer);
    } catch (error) {
      if (error instanceof Object) sendErrors.add(error);
      throw error;
    }
  };
  const run = (index: number, request: Request): Promise<Response> => {
    const middleware = options.middleware[index];
    if (middleware === undefined) return last(request);
    return Promise.resolve(middleware(request, (next) => run(index + 1, next), options.context)).then((response) => {
      if (!(response instanceof Response)) {
        throw new PushError(`a middleware of the ${operation} request returned no Response`);
      }
      return response;
    });
  };
  // A middleware that throws before anything was sent leaves nothing for the service to have taken:
  // its error is final, never a network failure that a retry or an "outcome unknown" would follow.
  const chain = async (): Promise<Response> => {
    try {
      const response = await run(0, first);
      return options.conceal === undefined ? response : await options.conceal.restore(response);
    } catch (error) {
      const detail = error instanceof Error ? `: ${error.message}` : '';
      // An error of the middleware's own (a second `next` refused, one it built, its audit call
      // refused, one quoting the answer) after the request left says nothing of whether the
      // service took it, whatever code or words it carries: that is unknown, never "failed", or a
      // finance batch stored once would be reported failed and published again.
      if (fetched && !sendErrors.has(error as object) && !init.signal?.aborted) {
        throw new ConnectionError(
          `a middleware of the ${operation} request failed after sending it, so the service may have taken it${detail}`,
          { requestMaybeSent: true, cause: error },
        );
      }
      if (fetched || error instanceof PushError || init.signal?.aborted) throw error;
      throw new PushError(`a middleware of the ${operation} request failed before sending it${detail}`, {
        cause: error,
      });
    } finally {
      settled = true;
    }
  };
  // A middleware that never settles still ends with the attempt's timeout or the caller's abort,
  // rejected with the signal's reason as fetch would be, so that the error is mapped the same way.
  const signal = init.signal;
  if (!signal) return chain();
  if (signal.aborted) throw signal.reason;
  return new Promise<Response>((resolve, reject) => {
    const stop = onAbort(signal, () => {
      settled = true;
      // The read of an error answer ends with the abort, with what came of it (or, for the
      // caller's abort, with the abort).
      if (refusal === undefined) reject(signal.reason);
      else refusal.then(resolve, () => reject(signal.reason));
    });
    chain().then(
      (response) => {
        stop();
        resolve(response);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}

// The token endpoint's answer as middleware sees it: the tokens it hands out replaced by markers,
// so that a middleware that logs answers never writes down a live access token. The transport
// puts the real values back in whatever the middleware returns: the answer it was given, a clone,
// or a new Response built from its body.

/** The fields of an OAuth token answer that are credentials. */
export const TOKEN_ANSWER_SECRETS: readonly string[] = ['access_token', 'refresh_token', 'id_token'];

/** Conceals the secrets of one attempt's answer from its middleware, and restores them after. */
export class ConcealedAnswer {
  readonly #fields: readonly string[];
  readonly #operation: string;
  readonly #maxBytes: number;
  /** Marker to real value: a marker is random per answer, so no service can forge one. */
  readonly #markers = new Map<string, string>();
  readonly #real = new WeakMap<Response, Response>();

  constructor(fields: readonly string[], operation: string, maxBytes: number) {
    this.#fields = fields;
    this.#operation = operation;
    this.#maxBytes = maxBytes;
  }

  /** The answer with each secret field replaced by a marker; the answer given is already in memory. */
  async conceal(response: Response): Promise<Response> {
    if (!response.ok) return response;
    const text = await response.text();
    const init = answerHead(response, response.headers);
    const real = new Response(text, init);
    const body = parseJsonObject(text);
    const values: string[] = [];
    if (body !== undefined) {
      for (const field of this.#fields) {
        const value = body[field];
        if (typeof value !== 'string' || value === '') continue;
        const marker = `concealed-${field.replace(/_/g, '-')}-${crypto.randomUUID()}`;
        this.#markers.set(marker, value);
        values.push(value);
        body[field] = marker;
      }
    }
    if (values.length === 0) return real;
    // A hostile endpoint may echo the token in a header too.
    const headers = new Headers(headersToRecord(response.headers, values));
    headers.delete('content-length');
    const shown = new Response(scrubSecrets(JSON.stringify(body), values), answerHead(response, headers));
    this.#real.set(shown, real);
    return shown;
  }

  /** What the middleware returned, with the real values back in place of the markers. */
  async restore(response: Response): Promise<Response> {
    if (this.#markers.size === 0) return response;
    const real = this.#real.get(response);
    if (real !== undefined) return real;
    if (!response.ok) return response;
    const { bytes, truncated } = await readBounded(response, this.#maxBytes);
    if (truncated) throw new ResponseTooLargeError(this.#operation, response.status, this.#maxBytes);
    let text = decodeText(bytes);
    for (const [marker, value] of this.#markers) {
      // Inside a JSON string: the value goes back escaped as JSON would write it.
      text = text.split(marker).join(JSON.stringify(value).slice(1, -1));
    }
    return new Response(text, answerHead(response, response.headers));
  }
}

/**
 * Hooks: typed callbacks the client calls as its requests go, for metrics and tracing. Events say
 * what happened (operation, method, address without its query, attempt, status, duration, the
 * server's request id, the retry delay) and never carry a header value or a body, so nothing a
 * hook does can leak a token, a secret or a record.
 */

/** Hooks with every callback present and guarded: a hook can never fail a request. */
export type SafeHooks = Required<PushClientHooks>;

const noop = () => {};

/** No hooks: what internal parts get when the client was built without any. */
export const noHooks: SafeHooks = {
  request: noop,
  response: noop,
  retry: noop,
  tokenRefresh: noop,
  concurrency: noop,
};

/** Whether a hook listens: an event nobody hears need not be built. */
export function listens(hooks: SafeHooks, name: keyof SafeHooks): boolean {
  return hooks[name] !== noop;
}

/** Guards each given hook; `warn` hears of one that threw or rejected. */
export function safeHooks(
  hooks: PushClientHooks | undefined,
  warn: (message: string, fields: Record<string, unknown>) => void,
): SafeHooks {
  if (!hooks) return noHooks;
  const guard = <E extends object>(name: keyof PushClientHooks): ((event: E) => void) => {
    const hook = hooks[name] as ((event: E) => unknown) | undefined;
    if (typeof hook !== 'function') return noop;
    const ignored = (error: unknown) =>
      warn(`push-api-client ${name} hook threw; ignored`, {
        error: error instanceof Error ? error.message : String(error),
      });
    return (event) => {
      try {
        // A copy: the client builds later events from this one, and a hook may write to it.
        ignoreRejection(hook.call(hooks, { ...event }), ignored);
      } catch (error) {
        ignored(error);
      }
    };
  };
  return {
    request: guard('request'),
    response: guard('response'),
    retry: guard('retry'),
    tokenRefresh: guard('tokenRefresh'),
    concurrency: guard('concurrency'),
  };
}

/** The address as hooks and log lines show it: origin and path, never the query or credentials. */
export function redactedUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The server's request id an error carries, when the service answered. */
export function requestIdOf(error: unknown): string | undefined {
  const id = (error as { requestId?: unknown } | null)?.requestId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * What the transport does with an answer's body: a 2xx body is read under its cap and handed on;
 * any other body is read under the error cap, scrubbed of secrets and turned into an error. The
 * caps and the capped read itself (`readBounded`) are at the end of this file.
 */

/** Statuses whose response cannot carry a body (Fetch standard "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * Response headers as a plain object, each value scrubbed: a service may echo a secret in a header
 * too. A header whose name holds a secret is left out (a name cannot carry the redaction marker).
 */
export function headersToRecord(headers: Headers, secrets: readonly string[] = []): HeadersRecord {
  const out: HeadersRecord = {};
  const holdsSecret = secretInName(secrets);
  headers.forEach((value, key) => {
    if (holdsSecret(key)) return;
    out[key] = scrubSecrets(value, secrets);
  });
  return out;
}

/**
 * The headers with each value scrubbed and each name holding a secret left out, or the same object
 * when no name or value held one (the common case: the copy and its checks cost a success answer
 * more than reading its body).
 */
function scrubbedHeaders(headers: Headers, secrets: readonly string[]): Headers {
  let changed = false;
  const holdsSecret = secretInName(secrets);
  headers.forEach((value, key) => {
    changed ||= scrubSecrets(value, secrets) !== value || holdsSecret(key);
  });
  return changed ? new Headers(headersToRecord(headers, secrets)) : headers;
}

/**
 * The text of the success answers read here, scrubbed, by the answer handed on: the SDK's own
 * readers take it from here instead of reading the copy's body again. The copy's body stays
 * unread, so a caller given the response may still read it.
 */
const answerTexts = new WeakMap<Response, string>();

/** An answer's body as text: the text it was buffered with, or else read. */
export function answerText(response: Response): Promise<string> {
  const text = answerTexts.get(response);
  return text === undefined ? response.text() : Promise.resolve(text);
}

function parseErrorBody(text: string, secrets: readonly string[]): ApiErrorBody | string | undefined {
  if (text === '') return undefined;
  const parsed = parseJsonObject(text);
  return parsed === undefined ? text : (scrubJsonValue(parsed, secrets) as ApiErrorBody);
}

/**
 * The status and headers of an answer rebuilt in memory, without its reason phrase: clients are to
 * ignore it (RFC 9112 §4), HTTP/2 has none, and a service may write anything there, a secret it
 * received included. Fetch decodes it as UTF-8, so a Latin-1 phrase arrives as U+FFFD, which no
 * search for the secret matches and which a Response refuses to carry.
 */
export function answerHead(response: Response, headers: HeadersInit): ResponseInit {
  return { status: response.status, headers };
}

/**
 * The credentials a 2xx answer hands out: the values of its JSON body's `fields` (the token
 * endpoint's `access_token`), as issued and as a request will carry them (trimmed).
 */
function issuedSecrets(text: string, fields: readonly string[]): string[] {
  const body = parseJsonObject(text);
  if (body === undefined) return [];
  const values = new Set<string>();
  for (const field of fields) {
    const value = body[field];
    if (typeof value !== 'string') continue;
    for (const form of [value, trimHttpWhitespace(value)]) if (form !== '') values.add(form);
  }
  return [...values];
}

/**
 * Reads a 2xx body under `spec.maxResponseBytes` and returns a response that holds it in memory.
 * Past the cap: a ResponseTooLargeError, and the connection is dropped. When the request carried
 * secrets (the bearer token), they are scrubbed from the body too: no answer needs to echo them,
 * and whatever the caller builds from it (an error quoting the body) stays clean. The headers are
 * scrubbed of them as well, and of the credentials the answer itself hands out
 * (`spec.answerSecrets`): the caller needs the new token from the body, and from nowhere else.
 * The response carries no reason phrase (see {@link answerHead}).
 */
export async function bufferSuccess(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<Response> {
  const head = (headSecrets: readonly string[]): ResponseInit =>
    answerHead(response, headSecrets.length === 0 ? response.headers : scrubbedHeaders(response.headers, headSecrets));
  if (NULL_BODY_STATUSES.has(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, head(secrets));
  }
  const limit = spec.maxResponseBytes ?? MAX_API_RESPONSE_BYTES;
  const { bytes, truncated } = await readBounded(response, limit);
  if (truncated) {
    const requestId = requestIdFrom(response.headers, secrets);
    throw answeredBy(new ResponseTooLargeError(spec.operation, response.status, limit), requestId);
  }
  if (secrets.length === 0 && spec.answerSecrets === undefined) return new Response(bytes, head(secrets));
  const text = decodeText(bytes);
  const scrubbed = scrubSecrets(text, secrets);
  const issued = spec.answerSecrets === undefined ? [] : issuedSecrets(scrubbed, spec.answerSecrets);
  const buffered = new Response(scrubbed === text ? bytes : scrubbed, head([...secrets, ...issued]));
  answerTexts.set(buffered, scrubbed);
  return buffered;
}

/**
 * An answer as middleware sees it: read under the caps the transport reads it under, with every
 * secret the request carried (the client secret's forms, the bearer token) scrubbed from its body
 * and headers, so that a logging middleware never writes down one that a hostile service echoed.
 * A request without secrets (a signed-address PUT) gets its answer read under the caps too: a
 * middleware that logs answers must not read a storage host's endless one into memory.
 */
export async function answerForMiddleware(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<Response> {
  if (response.ok) return bufferSuccess(response, spec, secrets);
  const init = answerHead(response, new Headers(headersToRecord(response.headers, secrets)));
  if (NULL_BODY_STATUSES.has(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, init);
  }
  // Only the start of an error body is ever used (errorFromResponse reads no further).
  const { bytes, truncated } = await readErrorBody(response, spec);
  const scrubbed = scrubSecrets(decodeText(bytes), secrets);
  return new Response(truncated ? cutAfterSecrets(scrubbed, secrets) : scrubbed, init);
}

/** The answer's status and headers, the headers scrubbed of secrets, for `mapError` (its body was read). */
function withScrubbedHeaders(response: Response, secrets: readonly string[]): AnswerHead {
  if (secrets.length === 0) return response;
  return { status: response.status, headers: new Headers(headersToRecord(response.headers, secrets)) };
}

/**
 * Turns a non-2xx answer into the error `spec.mapError` builds (by default the PushApiError
 * subclass for its status). The body is read up to {@link MAX_ERROR_BODY_BYTES} only: the status
 * decides what happens next, and the text is detail. Secrets are removed from the raw text, from
 * every parsed field and from the headers before anything reaches the error.
 */
export async function errorFromResponse(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<PushError> {
  const { bytes, truncated } = await readErrorBody(response, spec);
  const scrubbed = scrubSecrets(decodeText(bytes), secrets);
  // The cap, or the end of a body that stopped coming, may have cut through an echoed secret,
  // leaving a prefix that no search finds.
  const text = truncated ? cutAfterSecrets(scrubbed, secrets) : scrubbed;
  if (spec.mapError) return spec.mapError(withScrubbedHeaders(response, secrets), text);
  return PushApiError.fromResponse(
    response.status,
    parseErrorBody(text, secrets),
    headersToRecord(response.headers, secrets),
  );
}

// Reading response bodies with a cap. A hostile or broken service may answer with gigabytes; the
// body is read chunk by chunk, and past the cap reading stops and the connection is dropped, so
// memory stays bounded whatever the answer claims.

/**
 * Token answers: `{access_token, token_type, expires_in, scope}`. A JWT access token is a few KB;
 * 64 KiB leaves room for any real token and nothing more.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * Finance answers: `{"success": true}`, or an error (read under {@link MAX_ERROR_BODY_BYTES}). A
 * publish has many in flight at once, so a success answer padded to the data API's cap would cost
 * megabytes each; 64 KiB leaves room for any field a service may add, and nothing more.
 */
export const MAX_FINANCE_RESPONSE_BYTES = 64 * 1024;

/**
 * Data API answers (an address map, `client.request`). The largest is an address map: one
 * request asks for at most ~8 KB of `filenames=` pairs, so at most ~680 names, and each gets an
 * address of at most 8 KiB (the request-line limit of common proxies, which a signed address must
 * pass): ~5.5 MiB with the names, rounded up.
 */
export const MAX_API_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Error answers: only the start is used (a code and a message, an XML `<Code>` and `<Message>`).
 * A longer error body is cut here, not refused: its status still decides what happens next.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What a capped read found: the bytes up to the cap, and whether more followed. */
export interface BoundedBody {
  bytes: Uint8Array<ArrayBuffer>;
  truncated: boolean;
}

/**
 * Reads the start of an error answer's body (up to {@link MAX_ERROR_BODY_BYTES}). The status is
 * the service's verdict and the body only detail, so a body that stops coming (it stalls past the
 * attempt's timeout, or its connection drops) ends the read with what came, counted as cut: a 400
 * stays a refusal and a 503 a pause, never "no answer" (which would leave a finance batch the
 * service refused `unknown`). The caller's abort still ends the request as an abort.
 */
function readErrorBody(response: Response, spec: RequestSpec): Promise<BoundedBody> {
  return readBounded(response, MAX_ERROR_BODY_BYTES, () => spec.call?.signal?.aborted !== true);
}

/**
 * Reads at most `limit` bytes of a response body. Past the limit, the body is cancelled, which
 * makes fetch drop the connection (a half-read HTTP/1.1 response cannot be reused). Errors while
 * reading (a reset, the attempt's timeout) propagate as thrown by the stream, unless
 * `keepPartial` says to end the read there: then what came is returned as a cut body.
 */
export async function readBounded(
  response: Response,
  limit: number,
  keepPartial?: (error: unknown) => boolean,
): Promise<BoundedBody> {
  const body = response.body;
  if (body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let truncated = false;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        if (keepPartial?.(error) !== true) throw error;
        truncated = true;
        break;
      }
      const { done, value } = next;
      if (done) break;
      if (length + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - length));
        length = limit;
        truncated = true;
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

/** Decodes bytes as UTF-8; a character cut at the cap becomes U+FFFD instead of an exception. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
