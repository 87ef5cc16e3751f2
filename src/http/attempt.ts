import { type ApiErrorBody, type HeadersRecord, PushApiError, PushError, parseRetryAfterHeader } from '../errors.js';
import type { FetchLike } from './fetch.js';
import { parseJsonObject } from './json.js';
import { toTransportError } from './network-errors.js';
import { scrubSecrets } from './redact.js';
import type { BodyControl, Logger, RequestBody, RequestSpec } from './types.js';
import { assertSecureUrl } from './url-guard.js';

/** What the transport knows about a failed attempt beyond the error itself. */
export interface FailureInfo {
  status?: number;
  retryAfterMs?: number;
}

/** Keyed by the thrown error, so that errors keep their public shape and the retry loop still sees the details. */
export const failureInfo = new WeakMap<PushError, FailureInfo>();

export interface AttemptOptions {
  fetch: FetchLike;
  timeoutMs: number;
  userAgent: string;
  allowInsecureHttp: boolean;
  maxRedirects: number;
  logger: Logger;
  /** `Bearer <token>`; sent only to the origin of `spec.url`. */
  authorization?: string;
  attempt: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Statuses whose response cannot carry a body (Fetch standard "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

export function headersToRecord(headers: Headers): HeadersRecord {
  const out: HeadersRecord = {};
  headers.forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function parseErrorBody(text: string): ApiErrorBody | string | undefined {
  if (text === '') return undefined;
  return (parseJsonObject(text) as ApiErrorBody | undefined) ?? text;
}

/** `PushApiError.fromResponse`, with the secrets also removed from the headers the error keeps. */
function defaultMapError(response: Response, bodyText: string, secrets: readonly string[]): PushError {
  const headers = headersToRecord(response.headers);
  for (const [name, value] of Object.entries(headers)) headers[name] = scrubSecrets(value, secrets);
  return PushApiError.fromResponse(response.status, parseErrorBody(bodyText), headers);
}

/** Streams need `duplex: 'half'` in Node's fetch; strings, buffers and blobs do not. */
function needsDuplex(body: RequestBody | undefined): boolean {
  if (body === undefined || body === null) return false;
  return !(
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData
  );
}

/** What fetch throws for a redirect under `redirect: 'error'`: a TypeError caused by "unexpected redirect". */
function isRefusedRedirect(error: unknown): boolean {
  const cause = error instanceof TypeError ? error.cause : undefined;
  return cause instanceof Error && /redirect/i.test(cause.message);
}

/**
 * The attempt's timeout. It fires `timeoutMs` after the attempt starts, or after the body last
 * made progress: a 1 GiB upload may take minutes, but must not hang when the link stalls.
 */
function attemptTimeout(timeoutMs: number): BodyControl & { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`No progress within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  // Like AbortSignal.timeout, the timer must not keep the process alive.
  timer.unref?.();
  return {
    signal: controller.signal,
    touch: () => {
      if (!controller.signal.aborted) timer.refresh();
    },
    clear: () => clearTimeout(timer),
  };
}

/**
 * One attempt: the request, its redirects (followed by hand so that neither Authorization nor a
 * body ever leaves the original origin and every hop passes the https guard), and the whole
 * response body, all under one per-attempt timeout. Resolves with a 2xx response whose body is
 * already buffered; throws a PushError otherwise.
 */
export async function sendAttempt(spec: RequestSpec, options: AttemptOptions): Promise<Response> {
  const started = performance.now();
  const timeout = attemptTimeout(options.timeoutMs);
  const timeoutSignal = timeout.signal;
  const signal = spec.signal ? AbortSignal.any([spec.signal, timeoutSignal]) : timeoutSignal;
  let url = spec.url;
  let method: string = spec.method;
  let body: RequestBody | undefined;
  let headers: Record<string, string> = { ...spec.headers };
  let status: number | undefined;
  let streamed = false;
  const log = (fields: Record<string, unknown>) =>
    options.logger.debug('push-api-client request', {
      operation: spec.operation,
      method,
      host: url.host,
      path: url.pathname,
      attempt: options.attempt,
      durationMs: Math.round(performance.now() - started),
      ...fields,
    });
  // Nothing has been sent when the factory throws (a file that cannot be opened): not a network error.
  const openBody = (): RequestBody | undefined => {
    try {
      return spec.body?.(timeout);
    } catch (error) {
      if (error instanceof PushError) throw error;
      const detail = error instanceof Error ? `: ${error.message}` : '';
      throw new PushError(`${spec.operation} request body could not be created${detail}`, { cause: error });
    }
  };
  // An error body may echo what was sent; the bearer token and the caller's secrets never reach an error.
  const bearerToken = options.authorization?.replace(/^Bearer\s+/i, '');
  const secrets = bearerToken ? [...(spec.secrets ?? []), bearerToken] : (spec.secrets ?? []);

  try {
    body = openBody();
    for (let hop = 0; ; hop++) {
      assertSecureUrl(url, hop === 0 ? `${spec.operation} URL` : 'redirect target', options.allowInsecureHttp);
      const sameOrigin = url.origin === spec.url.origin;
      const sent: Record<string, string> = { 'user-agent': options.userAgent };
      for (const [name, value] of Object.entries(headers)) {
        // Credentials never follow a redirect to another origin, whoever set them.
        if (sameOrigin || name.toLowerCase() !== 'authorization') sent[name] = value;
      }
      if (options.authorization && sameOrigin) sent.authorization = options.authorization;
      const duplex = needsDuplex(body);
      // A Blob body is read through its stream too (an upload's is the file's stream, request-body.ts).
      streamed = duplex || body instanceof Blob;
      // undici clones the request under redirect: 'manual', which tees the body stream: the unread
      // branch keeps a copy of every byte, a whole upload in memory. Streamed bodies (signed-URL
      // PUTs) refuse redirects instead.
      const init: RequestInit & { duplex?: 'half' } = {
        method,
        headers: sent,
        body,
        signal,
        redirect: streamed ? 'error' : 'manual',
      };
      if (duplex) init.duplex = 'half';
      const response = await options.fetch(url, init);
      status = response.status;
      const location = response.headers.get('location');
      if (spec.redirects !== 'none' && REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => undefined);
        if (hop >= options.maxRedirects) {
          throw new PushApiError(response.status, undefined, headersToRecord(response.headers), 'Too many redirects');
        }
        log({ status: response.status, redirect: true });
        const target = new URL(location, url);
        // Fetch standard: 303, and 301/302 after a POST, become a GET without a body.
        const becomesGet =
          response.status === 303 || (method === 'POST' && response.status !== 307 && response.status !== 308);
        // A body holds what the caller meant for this service (records, credentials); fetch would
        // re-send it anywhere, but another origin never receives it from us.
        if (!becomesGet && body !== undefined && target.origin !== spec.url.origin) {
          throw new PushError(
            `${spec.operation} answered ${response.status} with a redirect to another origin (${target.origin}), ` +
              'which is not followed for a request with a body',
          );
        }
        url = target;
        if (becomesGet) {
          method = 'GET';
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-/i.test(k)));
        } else {
          body = openBody();
        }
        continue;
      }
      if (response.ok) {
        const data = NULL_BODY_STATUSES.has(response.status) ? null : await response.arrayBuffer();
        log({ status: response.status });
        return new Response(data, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        });
      }
      const text = scrubSecrets(await response.text().catch(() => ''), secrets);
      const error = spec.mapError ? spec.mapError(response, text) : defaultMapError(response, text, secrets);
      failureInfo.set(error, {
        status: response.status,
        retryAfterMs: parseRetryAfterHeader(response.headers.get('retry-after')),
      });
      throw error;
    }
  } catch (caught) {
    const error =
      streamed && isRefusedRedirect(caught)
        ? new PushError(`${spec.operation} answered with a redirect, which is not followed for a streamed body`, {
            cause: caught,
          })
        : toTransportError(caught, {
            userSignal: spec.signal,
            timeoutSignal,
            timeoutMs: options.timeoutMs,
            operation: spec.operation,
          });
    log(status === undefined ? { error: error.name } : { status, error: error.name });
    throw error;
  } finally {
    timeout.clear();
  }
}
