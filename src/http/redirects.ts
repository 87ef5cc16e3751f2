/**
 * Sending one attempt and its redirects, followed by hand (`redirect: 'manual'`, which every
 * runtime implements), so that these rules hold on every hop:
 * - a POST never follows a redirect: its body was already sent, so the service may have acted on
 *   it, and re-sending it elsewhere may duplicate it (on the finance POST the batch is `unknown`);
 * - neither Authorization nor a body ever leaves the original origin;
 * - every target passes the https guard;
 * - no hop goes closer to this machine than the service the request belongs to (address-rules.ts):
 *   a remote service cannot send the client to loopback, link-local or private addresses;
 * - a streamed body is never replayed: a redirect answering it is an error.
 */

import { PushError, RedirectError } from '../errors.js';
import { scrubAnswerUrlText, truncateText } from '../internal/redact.js';
import { assertSecureUrl, closerThanService } from './address-rules.js';
import type { FetchLike } from './fetch.js';
import { redactedUrl } from './hooks.js';
import {
  ConcealedAnswer,
  type Credentials,
  type Middleware,
  middlewareOperation,
  sendThroughMiddleware,
  withForm,
} from './middleware.js';
import { answerForMiddleware, headersToRecord, MAX_API_RESPONSE_BYTES } from './response-body.js';
import type { RequestBody, RequestSpec } from './types.js';

const FOLLOWED_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Headers that authenticate to the origin that set them: never sent on a hop to another. */
const ORIGIN_CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'cookie2']);

export interface HopOptions {
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
 * The redirect mode for a streamed body. Under `'manual'`, undici clones the request before
 * sending it, which tees the body stream: the unread branch keeps a copy of every byte, and a
 * 1 GiB upload would sit in memory. `'error'` skips the clone. workerd does not implement
 * `'error'` (its Request constructor throws), and there `'manual'` is used; a 3xx is refused by
 * hand either way.
 */
function streamedRedirectMode(): RequestRedirect {
  redirectErrorSupported ??= (() => {
    try {
      return new Request('http://localhost/', { redirect: 'error' }).redirect === 'error';
    } catch {
      return false;
    }
  })();
  return redirectErrorSupported ? 'error' : 'manual';
}

/** What fetch throws for a redirect under `redirect: 'error'`: a TypeError caused by "unexpected redirect". */
function isRefusedRedirect(error: unknown): boolean {
  const cause = error instanceof TypeError ? error.cause : undefined;
  return cause instanceof Error && /redirect/i.test(cause.message);
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
    const init: RequestInit & { duplex?: 'half' } = {
      method,
      headers: sent,
      body,
      signal: options.signal,
      redirect: streamed ? streamedRedirectMode() : 'manual',
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
      if (streamed && isRefusedRedirect(error)) {
        throw new PushError(`${spec.operation} answered with a redirect, which is not followed for a streamed body`, {
          cause: error,
        });
      }
      throw error;
    }
    if (response.status < 300 || response.status >= 400) return { response, url, method };

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
