/**
 * One attempt, from the request a caller built to the answer's body read. In this order:
 * - the attempt's timeout, its hook events and its log line (sendAttempt);
 * - the send and its redirects, followed by hand, so that no credential or body leaves its origin
 *   and every hop meets the address rules (fetch.ts);
 * - which POSTs go without fetch's copy of their body: those to an address that has answered
 *   one without a redirect;
 * - the user's middleware chain, run on the first hop before credentials are added, so that it
 *   never sees the client secret or a token.
 */

import { ConnectionError, PushError, RedirectError, ResponseTooLargeError, requestIdFrom } from '../errors.js';
import { drops } from '../internal/logger.js';
import {
  base64Forms,
  parseJsonObject,
  scrubAnswerUrlText,
  scrubSecrets,
  trimHttpWhitespace,
  truncateText,
} from '../internal/text.js';
import { onAbort } from '../internal/waits.js';
import {
  answerForMiddleware,
  answerHead,
  assertSecureUrl,
  bufferSuccess,
  closerThanService,
  decodeText,
  errorFromResponse,
  headersToRecord,
  isReservedHeader,
  listens,
  MAX_API_RESPONSE_BYTES,
  readBounded,
  redactedUrl,
  requestIdOf,
  type SafeHooks,
  toTransportError,
} from './fetch.js';
import type { FetchLike, Logger } from './public-types.js';
import { statusOf } from './retry.js';
import type { BodyControl, RequestBody, RequestSpec } from './types.js';

// ── One attempt ──────────────────────────────────────────────────────────────────────────────────
// Its timeout, its hook events and its log line, around the send below (`sendAttempt`).

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
  /** The client's addresses known to answer a POST without a redirect (DirectAnswers, below). @default none */
  directAnswers?: DirectAnswers;
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
 * One attempt: the request and its redirects (below), then the whole response body, read
 * under its cap (fetch.ts), all under one per-attempt timeout. Resolves with a 2xx
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
      ...(options.directAnswers !== undefined && { directAnswers: options.directAnswers }),
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
    // A failure of fetch itself was scrubbed where it was caught (sendFollowingRedirects, below).
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

// ── The send and its redirects ───────────────────────────────────────────────────────────────────
// Redirects are followed by hand (`redirect: 'manual'`, which every runtime implements), so that
// these rules hold on every hop:
// - a POST never follows a redirect: its body was already sent, so the service may have acted on
//   it, and re-sending it elsewhere may duplicate it (on the finance POST the batch is `unknown`);
// - neither Authorization nor a body ever leaves the original origin;
// - every target passes the https guard;
// - no hop goes closer to this machine than the service the request belongs to (fetch.ts):
//   a remote service cannot send the client to loopback, link-local or private addresses;
// - a streamed body is never replayed: a redirect answering it is an error.

const FOLLOWED_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Headers that authenticate to the origin that set them: never sent on a hop to another. */
const ORIGIN_CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'cookie2']);

interface HopOptions {
  fetch: FetchLike;
  userAgent: string;
  allowInsecureHttp: boolean;
  maxRedirects: number;
  /** `Bearer <token>`; sent only to the origin of `spec.url`. */
  authorization?: string;
  signal: AbortSignal;
  /** Removed from the headers a RedirectError keeps. */
  secrets: readonly string[];
  /** Opens the request body afresh (for a 307/308 within the origin). */
  openBody: () => RequestBody | undefined;
  onRedirect: (status: number, url: URL) => void;
  /** Run on the attempt's first request, before credentials are added. @default none */
  middleware?: readonly Middleware[];
  /** The attempt number, for middleware. */
  attempt?: number;
  /** Addresses known to answer a POST without a redirect: those are sent without a replay copy. */
  directAnswers?: DirectAnswers;
}

/** Streams need `duplex: 'half'` in Node's fetch; strings, buffers and blobs do not. */
function needsDuplex(body: RequestBody | undefined): boolean {
  if (body === undefined || body === null) return false;
  return !(typeof body === 'string' || body instanceof ArrayBuffer || ArrayBuffer.isView(body) || body instanceof Blob);
}

/** A body read through a stream: a stream, or a Blob (an upload's is backed by the file's stream). */
function isStreamed(body: RequestBody | undefined): boolean {
  return needsDuplex(body) || body instanceof Blob;
}

let redirectErrorSupported: boolean | undefined;

/**
 * Whether this runtime's fetch implements `redirect: 'error'`. Under `'manual'`, undici clones the
 * request before sending it, which tees the body stream: the unread branch keeps a copy of every
 * byte (a 1 GiB upload would sit in memory), and copying it costs CPU. `'error'` skips the clone.
 * workerd does not implement `'error'` (its Request constructor throws), and there `'manual'` is
 * used; a 3xx is refused by hand either way.
 */
function canRefuseRedirects(): boolean {
  redirectErrorSupported ??= (() => {
    try {
      return new Request('http://localhost/', { redirect: 'error' }).redirect === 'error';
    } catch {
      return false;
    }
  })();
  return redirectErrorSupported;
}

/**
 * What fetch throws for a redirect under `redirect: 'error'`, in each runtime's exact words, so that
 * no other failure passes for one (a DNS failure for a host named `redirect-…`, a fetch that does
 * not know the mode): Node's undici, a TypeError caused by an Error "unexpected redirect"; msw's
 * interceptor, the same with the text itself as the cause; Bun, a TypeError "UnexpectedRedirect
 * fetching …"; Deno, a TypeError "… redirect mode is set to 'error'"; node-fetch, a FetchError of
 * type `no-redirect`.
 */
function isRefusedRedirect(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { cause } = error as { cause?: unknown };
  if (error instanceof TypeError) {
    if (cause instanceof Error ? cause.message === UNDICI_REFUSAL : cause === UNDICI_REFUSAL) return true;
    return (
      cause === undefined &&
      (error.message.startsWith('UnexpectedRedirect fetching') || error.message.endsWith(DENO_REFUSAL))
    );
  }
  return error.name === 'FetchError' && (error as { type?: unknown }).type === 'no-redirect';
}

/** undici's failure when a request is sent again with its body's stream already read. */
function withoutBodyLeft(error: unknown): boolean {
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  return (cause as { code?: unknown } | undefined)?.code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH';
}

const UNDICI_REFUSAL = 'unexpected redirect';
const DENO_REFUSAL = "redirect mode is set to 'error'";

// ── POSTs without a replay copy ──────────────────────────────────────────────────────────────────
// Under `redirect: 'manual'` (or `'follow'`), fetch keeps a copy of the request body from which a
// 307 or 308 could be replayed: undici tees the body stream and copies every chunk into the second
// branch. A POST is never replayed (`refusal` refuses every redirect of one), so that copy is pure
// cost: CPU to copy each body (bench/README.md has the measurements), and one body of memory per
// request in flight. `redirect: 'error'` skips it, but fetch then turns a redirect into a network
// error without its status or target, which are what explains a wrong `baseUrl`. So the first POST
// to an address is sent under `'manual'`, and a redirect there is reported in full; once an answer
// from that address came without a redirect, later POSTs to it skip the copy; once it redirects
// one, it keeps the copy for good. Only the runtime's own fetch is used so (http-client.ts).

/** Enough for every address one client posts to (the token endpoint, one finance URL per app). */
const MOST_ADDRESSES = 64;

/**
 * The addresses whose answers to a request that follows no redirect (a POST) came without one, and
 * those that keep the copy for good: an address that redirected a POST, whether the redirect was
 * read or refused unread, so that each redirect after it is reported in full (those sent before it
 * was seen may still come back unread), and one whose 421 fetch could not send again without it.
 */
export class DirectAnswers {
  readonly #direct = new Set<string>();
  readonly #keepsCopy = new Set<string>();

  /** The address as remembered: origin and path, without the query. */
  static key(url: URL): string {
    return url.origin + url.pathname;
  }

  has(url: URL): boolean {
    return this.#direct.has(DirectAnswers.key(url));
  }

  /** An answer without a redirect came from the address. */
  answered(url: URL): void {
    const key = DirectAnswers.key(url);
    if (!this.#keepsCopy.has(key)) remember(this.#direct, key);
  }

  /** Requests to the address keep the copy from now on. */
  keepCopy(url: URL): void {
    const key = DirectAnswers.key(url);
    this.#direct.delete(key);
    remember(this.#keepsCopy, key);
  }
}

/** Adds to a bounded set; the oldest entry goes first (for `#direct`, that only costs time). */
function remember(set: Set<string>, key: string): void {
  if (set.has(key)) return;
  if (set.size >= MOST_ADDRESSES) {
    const oldest = set.values().next().value;
    if (oldest !== undefined) set.delete(oldest);
  }
  set.add(key);
}

/** A request every redirect of which `refusal` refuses, whatever its status: a POST, or one never re-sent. */
function followsNoRedirect(spec: RequestSpec): boolean {
  return spec.redirects !== 'none' && (spec.method === 'POST' || spec.retryPolicy === 'non-idempotent');
}

/**
 * A redirect that fetch refused under `redirect: 'error'` for a request sent without a replay copy
 * (DirectAnswers): its status and target were not exposed, as fetch's opaque redirects show
 * status 0. The request was sent, so it is classified as any refused redirect of a POST.
 */
function refusedRedirectError(spec: RequestSpec): RedirectError {
  return new RedirectError(
    0,
    {},
    `${spec.operation} answered with a redirect, which a ${spec.method} never follows: the request was already sent, so whether the service acted on it is unknown. ` +
      'Its status and target were not read: earlier answers from this address came without a redirect, so the request kept no copy to replay. Requests to it from now on keep that copy, and report a redirect in full',
    undefined,
  );
}

function resolveLocation(location: string | null, base: URL): URL | undefined {
  if (location === null) return undefined;
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/**
 * The target's origin only: a Location may carry credentials, a signature or a token in its query.
 * The service chose the host too, and may have put a secret it received there.
 */
function targetOrigin(location: string | null, base: URL, secrets: readonly string[]): string | undefined {
  const origin = resolveLocation(location, base)?.origin;
  // An opaque origin ("null", for a data: or javascript: target) names nothing.
  return origin === undefined || origin === 'null' ? undefined : scrubAnswerUrlText(origin, secrets);
}

function redirectError(
  spec: RequestSpec,
  response: Response,
  url: URL,
  secrets: readonly string[],
  reason: string,
): RedirectError {
  const origin = targetOrigin(response.headers.get('location'), url, secrets);
  // The service chose the target: a host name may be any length.
  const target = origin === undefined ? 'no valid location' : truncateText(origin, 200);
  const headers = headersToRecord(response.headers, secrets);
  // The full target may carry a signature, a token or credentials: only its origin is kept.
  delete headers.location;
  return new RedirectError(
    response.status,
    headers,
    `${spec.operation} answered with a redirect (HTTP ${response.status} to ${target}), ${reason}`,
    origin,
  );
}

/**
 * The texts of a fetch failure that may quote the host or the address it was sending to. Bun's
 * fetch errors carry the whole address in `path`, and Deno's cause says `error sending request for
 * url (<address>)`.
 */
const ADDRESS_QUOTING_FIELDS = ['message', 'stack', 'hostname', 'host', 'path', 'url'] as const;

/**
 * Any http(s) address in a text, with its query when it has one, for a runtime that quotes the
 * address in another spelling than its `href` (decoded, or escaped otherwise): up to a space, a
 * quote or a `)`. The query is optional so that every address matches where it starts and the
 * search goes on after its end: with a required query, each `http://` inside a long run of them
 * (a path an answer chose) was tried again up to the run's end, quadratic in the text's length.
 */
const ANY_ADDRESS = /(\bhttps?:\/\/[^\s?#"'<>)]*)(\?[^\s#"'<>)]*)?/gi;

/** The most errors of one failure scrubbed: its causes and an AggregateError's members. */
const MAX_SCRUBBED_ERRORS = 20;

/**
 * Scrubs, in place, a fetch failure and its causes (and an AggregateError's members): Node names
 * the host it could not resolve (`getaddrinfo ENOTFOUND <host>`) or whose certificate did not
 * match, and a redirect target's or a signed address's host was chosen by an answer, which may
 * have written a credential there. Bun and Deno quote the whole address, whose query is a signed
 * address's signature (a write credential for the file) or what a redirect chose to put there: it
 * is left out, as hooks and log lines leave it out. Bun quotes it in a failure to read the answer's
 * body too, so `url` is the address of the hop whose failure this is.
 */
export function scrubFailureTexts(error: unknown, url: URL, secrets: readonly string[]): void {
  const query = url.search === '' ? undefined : url.href;
  if (secrets.length === 0 && query === undefined) return;
  // A cycle of causes is scrubbed again, which changes nothing, up to the bound.
  const errors: unknown[] = [error];
  for (let index = 0; index < errors.length && index < MAX_SCRUBBED_ERRORS; index++) {
    const current = errors[index];
    if (!(current instanceof Error)) continue;
    const fields = current as unknown as Record<string, unknown>;
    for (const key of ADDRESS_QUOTING_FIELDS) {
      const value = fields[key];
      if (typeof value !== 'string') continue;
      const withoutQuery =
        query === undefined
          ? value
          : value
              .replaceAll(query, `${redactedUrl(url)}?[redacted]`)
              .replace(ANY_ADDRESS, (address: string, head: string, search: string | undefined) =>
                search ? `${head}?[redacted]` : address,
              );
      const scrubbed = secrets.length === 0 ? withoutQuery : scrubAnswerUrlText(withoutQuery, secrets);
      if (scrubbed === value) continue;
      try {
        fields[key] = scrubbed;
      } catch {
        // A read-only field stays as it is; the message the caller reads is built from codes only.
      }
    }
    // An AggregateError's members (happy eyeballs, a caller's fetch that tried several routes).
    const { errors: members } = current as { errors?: unknown };
    if (Array.isArray(members)) errors.push(...members);
    errors.push(current.cause);
  }
}

/** Why a 3xx is not followed, or undefined when it is. */
function refusal(spec: RequestSpec, streamed: boolean, response: Response): string | undefined {
  if (spec.method === 'POST' || spec.retryPolicy === 'non-idempotent') {
    return spec.retryPolicy === 'non-idempotent'
      ? 'which a POST never follows: the request was already sent, so whether the service acted on it is unknown'
      : 'which a POST never follows';
  }
  if (streamed) return 'which is not followed for a streamed body';
  if (!FOLLOWED_STATUSES.has(response.status) || response.headers.get('location') === null) {
    return 'which cannot be followed';
  }
  return undefined;
}

/**
 * Sends the request and follows its redirects. Resolves with the first answer that is not a
 * redirect (2xx or an error status); a 3xx that is not followed becomes a RedirectError, or goes
 * to `spec.mapError` when the request asked for `redirects: 'none'` and maps errors itself.
 */
export async function sendFollowingRedirects(
  spec: RequestSpec,
  options: HopOptions,
): Promise<{ response: Response; url: URL; method: string }> {
  let url = spec.url;
  let method: string = spec.method;
  let headers: Record<string, string> = { ...spec.headers };
  const service = spec.service ?? spec.url;
  // The first address may come from an answer too (a signed upload address): it obeys the same rule.
  const firstProblem = closerThanService(url, service, options.secrets);
  if (firstProblem !== undefined) {
    throw new PushError(`${spec.operation} URL ${firstProblem}; it is not used`);
  }
  let body = options.openBody();
  for (let hop = 0; ; hop++) {
    assertSecureUrl(
      url,
      hop === 0 ? `${spec.operation} URL` : 'redirect target',
      options.allowInsecureHttp,
      options.secrets,
    );
    const sameOrigin = url.origin === spec.url.origin;
    const sent: Record<string, string> = { 'user-agent': options.userAgent };
    // Trace context (and its baggage, which may name users or tenants) is for the service alone.
    const traceHeaders = new Set(sameOrigin ? [] : spec.traceHeaders);
    for (const [name, value] of Object.entries(headers)) {
      if (traceHeaders.has(name.toLowerCase())) continue;
      // Credentials never follow a redirect to another origin, whoever set them: a cookie is one
      // (a gateway's session, set through `defaultHeaders`), as curl and Go drop it too.
      if (sameOrigin || !ORIGIN_CREDENTIAL_HEADERS.has(name.toLowerCase())) sent[name] = value;
    }
    // Added after middleware (which runs on the first hop only), and only on the request's own origin.
    const credentials: Credentials = { headers: {}, form: {} };
    if (sameOrigin) {
      Object.assign(credentials.headers, spec.credentials?.headers);
      if (options.authorization) credentials.headers.authorization = options.authorization;
      Object.assign(credentials.form, spec.credentials?.form);
    }
    const middleware = hop === 0 ? (options.middleware ?? []) : [];
    if (middleware.length === 0) {
      Object.assign(sent, credentials.headers);
      if (Object.keys(credentials.form).length > 0)
        body = withForm(typeof body === 'string' ? body : '', credentials.form);
    }
    const streamed = isStreamed(body);
    // Without a replay copy of its body when the address is known to answer directly (DirectAnswers).
    const direct =
      !streamed &&
      hop === 0 &&
      body !== undefined &&
      followsNoRedirect(spec) &&
      options.directAnswers?.has(url) === true &&
      canRefuseRedirects();
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: sent,
      body,
      signal: options.signal,
      redirect: direct || (streamed && canRefuseRedirects()) ? 'error' : 'manual',
    };
    if (needsDuplex(body)) init.duplex = 'half';
    let response: Response;
    try {
      response =
        middleware.length === 0
          ? await options.fetch(url, init)
          : await sendThroughMiddleware({
              fetch: options.fetch,
              middleware,
              context: { operation: middlewareOperation(spec.operation), attempt: options.attempt ?? 1 },
              url,
              init,
              credentials,
              keepUrl: spec.credentials !== undefined,
              answer: (answer) => answerForMiddleware(answer, spec, options.secrets),
              ...(spec.answerSecrets !== undefined && {
                conceal: new ConcealedAnswer(
                  spec.answerSecrets,
                  spec.operation,
                  spec.maxResponseBytes ?? MAX_API_RESPONSE_BYTES,
                ),
              }),
              onHeaders: (chosen) => {
                // The headers middleware chose go where the request goes; user-agent is set per hop.
                headers = Object.fromEntries(Object.entries(chosen).filter(([name]) => name !== 'user-agent'));
              },
            });
    } catch (error) {
      scrubFailureTexts(error, url, options.secrets);
      if (direct && isRefusedRedirect(error)) {
        options.directAnswers?.keepCopy(url);
        throw refusedRedirectError(spec);
      }
      // After a 421, fetch sends a request again by itself (the Fetch standard asks it to), and
      // without the copy has no body left: undici fails on the length. That failure also follows a
      // reset after the service may have stored the body, so it is not sent again here: it stays
      // ambiguous, and the address keeps the copy from now on. Other failures change nothing.
      if (direct && withoutBodyLeft(error)) options.directAnswers?.keepCopy(url);
      if (streamed && isRefusedRedirect(error)) {
        throw new PushError(`${spec.operation} answered with a redirect, which is not followed for a streamed body`, {
          cause: error,
        });
      }
      throw error;
    }
    // A fetch that followed the redirect all the same (it ignores the mode): the body went on to
    // the target; the batch's outcome is unknown, as for any redirect of a POST.
    if (direct && response.redirected) {
      options.directAnswers?.keepCopy(url);
      await response.body?.cancel().catch(() => undefined);
      throw refusedRedirectError(spec);
    }
    if (response.status < 300 || response.status >= 400) {
      // A 421 is no sign of a direct address: fetch sends its request again by itself, which under
      // 'error' it cannot do (above).
      if (hop === 0 && body !== undefined && followsNoRedirect(spec) && response.status !== 421) {
        options.directAnswers?.answered(url);
      }
      return { response, url, method };
    }
    if (hop === 0 && followsNoRedirect(spec)) options.directAnswers?.keepCopy(url);

    if (spec.redirects === 'none' && spec.mapError) return { response, url, method };
    const reason = spec.redirects === 'none' ? 'and this request follows none' : refusal(spec, streamed, response);
    // A redirect's body is never read: nothing in it is used.
    await response.body?.cancel().catch(() => undefined);
    const target = reason === undefined ? resolveLocation(response.headers.get('location'), url) : undefined;
    if (target === undefined) {
      throw redirectError(spec, response, url, options.secrets, reason ?? 'which cannot be followed');
    }
    if (hop >= options.maxRedirects) {
      throw redirectError(spec, response, url, options.secrets, `after ${hop} redirects already: too many redirects`);
    }
    const closer = closerThanService(target, service, options.secrets);
    if (closer !== undefined) {
      throw redirectError(spec, response, url, options.secrets, `which is not followed: the target ${closer}`);
    }
    options.onRedirect(response.status, url);
    // Fetch standard: a 303 becomes a GET without a body (a POST never gets here).
    const becomesGet = response.status === 303 && method !== 'GET';
    // A body holds what the caller meant for this service; another origin never receives it from us.
    if (!becomesGet && body !== undefined && target.origin !== spec.url.origin) {
      throw redirectError(
        spec,
        response,
        url,
        options.secrets,
        'and a redirect to another origin is not followed for a request with a body',
      );
    }
    url = target;
    if (becomesGet) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
    } else {
      body = options.openBody();
    }
  }
}

// ── The user's middleware ────────────────────────────────────────────────────────────────────────
// Functions that see each attempt's first request, may replace it, and hand it on. Credentials are
// added after the last one has run, so no middleware ever sees the client secret or the bearer
// token; the transport's own rules apply to what comes out.

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

interface MiddlewareSend {
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
