import { PushError, requestIdFrom } from '../errors.js';
import { drops } from '../internal/logger.js';
import { base64Forms, scrubAnswerUrlText, trimHttpWhitespace } from '../internal/redact.js';
import { onAbort } from '../internal/waits.js';
import type { FetchLike } from './fetch.js';
import { toTransportError } from './fetch.js';
import { listens, redactedUrl, requestIdOf, type SafeHooks } from './hooks.js';
import type { Middleware } from './middleware.js';
import type { Logger } from './public-types.js';
import { scrubFailureTexts, sendFollowingRedirects } from './redirects.js';
import { bufferSuccess, errorFromResponse } from './response-body.js';
import { statusOf } from './retry.js';
import type { BodyControl, RequestBody, RequestSpec } from './types.js';

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
 * under its cap (response-body.ts), all under one per-attempt timeout. Resolves with a 2xx
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
