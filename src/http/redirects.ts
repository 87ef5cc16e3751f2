/**
 * Sending one attempt and its redirects, followed by hand (`redirect: 'manual'`, which every
 * runtime implements), so that these rules hold on every hop:
 * - a POST never follows a redirect: its body was already sent, so the service may have acted on
 *   it, and re-sending it elsewhere may duplicate it (on the finance POST the batch is `unknown`);
 * - neither Authorization nor a body ever leaves the original origin;
 * - every target passes the https guard;
 * - no hop goes closer to this machine than the service the request belongs to (below):
 *   a remote service cannot send the client to loopback, link-local or private addresses;
 * - a streamed body is never replayed: a redirect answering it is an error.
 */

import type { Dispatcher } from 'undici';
import { AbortError, ConfigurationError, ConnectionError, PushError, RedirectError, TimeoutError } from '../errors.js';
import { scrubAnswerUrlText, truncateText } from '../internal/text.js';
import {
  answerForMiddleware,
  ConcealedAnswer,
  type Credentials,
  headersToRecord,
  MAX_API_RESPONSE_BYTES,
  type Middleware,
  middlewareOperation,
  redactedUrl,
  sendThroughMiddleware,
  withForm,
} from './attempt.js';
import { dispatcherFetch } from './dispatcher-fetch.js';
import type { FetchLike } from './public-types.js';
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

/**
 * Where a request may go. Two rules, checked on every request and on every hop of a redirect:
 * https only, except to a loopback host or with `allowInsecureHttp` (`assertSecureUrl`); and no
 * hop closer to this machine than the service the request belongs to (`closerThanService`).
 */

/** True when the URL may carry credentials or data: https, or http to a loopback host or when allowed. */
export function isSecureUrl(url: URL, allowInsecureHttp = false): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (allowInsecureHttp || isLoopbackHostname(url.hostname));
}

/**
 * Schemes named when a URL is refused for its scheme. Any other is not repeated: an answer chose
 * it (a redirect's `Location`, a signed address), and anything before a first `:` reads as a
 * scheme, a token or secret the service echoed, of any length, included.
 */
const NAMED_PROTOCOLS = new Set(['file:', 'data:', 'blob:', 'javascript:', 'ftp:', 'ws:', 'wss:', 'mailto:', 'about:']);

/**
 * Throws a ConfigurationError unless the URL is https, or http to a loopback host (127/8,
 * localhost, [::1], in any spelling), or http with `allowInsecureHttp`. Used for `authUrl`, `baseUrl`, every request,
 * every redirect target and every signed upload address.
 *
 * @param what names the URL in the message, such as `baseUrl` or `signed upload address`.
 * @param secrets removed from the host the message names, for an address an answer chose.
 */
export function assertSecureUrl(
  url: URL,
  what: string,
  allowInsecureHttp = false,
  secrets: readonly string[] = [],
): URL {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    const named = NAMED_PROTOCOLS.has(url.protocol) ? `"${url.protocol}"` : 'of another kind';
    throw new ConfigurationError(`${what} must be an http(s) URL, got protocol ${named}`);
  }
  if (!isSecureUrl(url, allowInsecureHttp)) {
    throw new ConfigurationError(
      `${what} uses plain http to ${scrubAnswerUrlText(url.host, secrets)}; only https is allowed except for loopback hosts. ` +
        'Set allowInsecureHttp: true (PUSH_ALLOW_INSECURE_HTTP=1, or --allow-insecure-http in the CLI) to override; credentials would travel unencrypted.',
    );
  }
  return url;
}

/**
 * Parses an option as an absolute URL, naming the option (and its variable) when it is not one.
 * Credentials (`user:password@`) are refused: they would show wherever the URL is printed (the
 * client's JSON, error messages, the CLI's files). The message never repeats the value.
 */
export function parseUrlOption(value: string | URL, what: string): URL {
  let url: URL;
  try {
    url = value instanceof URL ? new URL(value.href) : new URL(value);
  } catch {
    throw new ConfigurationError(
      `${what} is not an absolute URL; write it with its scheme, such as https://api.example.com`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigurationError(
      `${what} must not contain credentials (user:password@host); pass clientId and clientSecret instead`,
    );
  }
  return url;
}

// Where a host is, as far as its written address says, and the one rule built on it: no hop of a
// request goes closer to this machine than the service the request belongs to. Decided on the
// WHATWG URL parser's normal form, which already turns `127.1`, `2130706433`, `0x7f.1`,
// `0177.0.0.1`, `127.0.0.1.` and `[0:0:0:0:0:0:0:1]` into `127.0.0.1` or `[::1]`; the rest
// (trailing dots on names, IPv4 inside IPv6) is handled here. A name that DNS resolves to such an
// address is not caught: that needs the resolver, which a URL check cannot consult.

/** This machine, a private network (link-local and carrier-grade NAT included), or anywhere. */
export type NetworkScope = 'loopback' | 'private' | 'public';

const SCOPE_RANK: Record<NetworkScope, number> = { public: 0, private: 1, loopback: 2 };

/** Names that /etc/hosts maps to this machine on common systems, besides `localhost` itself. */
const LOOPBACK_NAMES = new Set([
  'localhost',
  'localhost.localdomain',
  'localhost4',
  'localhost4.localdomain4',
  'localhost6',
  'localhost6.localdomain6',
  'ip6-localhost',
  'ip6-loopback',
]);

/** The host without the trailing dots of a fully qualified name (`localhost.` is `localhost`), lower-cased. */
function bareHost(hostname: string): string {
  let end = hostname.length;
  while (end > 0 && hostname.charCodeAt(end - 1) === 0x2e) end--;
  return hostname.slice(0, end).toLowerCase();
}

/** The four bytes of a dotted IPv4 host as the parser leaves it. */
function ipv4Bytes(host: string): number[] | undefined {
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

function ipv4Scope([a = 0, b = 0]: readonly number[]): NetworkScope {
  // 0.0.0.0/8 ("this host") reaches local services like 127/8 does.
  if (a === 127 || a === 0) return 'loopback';
  if (
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, where cloud metadata services answer
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // 192.0.0.0/24 and 192.0.2.0/24: protocol assignments, never a public host
    (a === 198 && (b === 18 || b === 19)) || // benchmarking networks, used inside labs and clouds
    a >= 224 // multicast, reserved and the local broadcast 255.255.255.255
  ) {
    return 'private';
  }
  return 'public';
}

/** The eight 16-bit groups of a bracketed IPv6 host, from the parser's compressed form (dotted tails already folded). */
function ipv6Groups(host: string): number[] | undefined {
  if (!host.startsWith('[') || !host.endsWith(']')) return undefined;
  const [head = '', tail] = host.slice(1, -1).split('::');
  const parse = (text: string) => (text === '' ? [] : text.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
  return groups.length === 8 && groups.every((group) => group >= 0 && group <= 0xffff) ? groups : undefined;
}

function embeddedV4(high: number, low: number): number[] {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff];
}

function closest(a: NetworkScope, b: NetworkScope): NetworkScope {
  return SCOPE_RANK[a] >= SCOPE_RANK[b] ? a : b;
}

function ipv6Scope(groups: readonly number[]): NetworkScope {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  if (zeroPrefix && g4 === 0 && g5 === 0 && g6 === 0 && (g7 === 0 || g7 === 1)) return 'loopback'; // :: and ::1
  // IPv4 carried in IPv6 reaches that IPv4 address: ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d
  // (IPv4-mapped), ::ffff:0:a.b.c.d (IPv4-translated) and 64:ff9b::a.b.c.d (NAT64).
  if (zeroPrefix && ((g4 === 0 && (g5 === 0 || g5 === 0xffff)) || (g4 === 0xffff && g5 === 0))) {
    return ipv4Scope(embeddedV4(g6, g7));
  }
  if (g0 === 0x64 && g1 === 0xff9b) {
    // 64:ff9b::/96 is the well-known NAT64 prefix; 64:ff9b:1::/48 is for a site's own translators.
    return g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 ? ipv4Scope(embeddedV4(g6, g7)) : 'private';
  }
  if (g0 === 0x2002) return ipv4Scope(embeddedV4(g1, g2)); // 6to4: the relay's IPv4 address
  if (g0 === 0x2001 && g1 === 0) {
    // Teredo: the server's IPv4 address, and the client's with every bit inverted.
    return closest(ipv4Scope(embeddedV4(g2, g3)), ipv4Scope(embeddedV4(g6 ^ 0xffff, g7 ^ 0xffff)));
  }
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // fc00::/7, unique local
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return 'private'; // link-local, old site-local
  if ((g0 & 0xff00) === 0xff00) return 'private'; // multicast
  return 'public';
}

/**
 * Where a URL's host is: `loopback` (127/8, 0/8, `::1`, `::`, `localhost` and `*.localhost` in any
 * case and with trailing dots, the other names hosts files give this machine), `private` (10/8,
 * 172.16/12, 192.168/16, 169.254/16, 100.64/10, multicast and reserved ranges, fc00::/7,
 * fe80::/10), IPv4 carried in IPv6 judged by its IPv4 address, or `public`.
 */
export function networkScope(url: URL): NetworkScope {
  // Every PUT of an upload asks this for the same two hosts: the answer is remembered per host name.
  const known = scopeOfHostname.get(url.hostname);
  if (known !== undefined) return known;
  const scope = scopeOf(url.hostname);
  if (url.hostname.length > MAX_DNS_NAME_LENGTH) return scope;
  if (scopeOfHostname.size >= MAX_REMEMBERED_HOSTS) scopeOfHostname.clear();
  scopeOfHostname.set(url.hostname, scope);
  return scope;
}

/** Host names whose scope is remembered; an answer may name any number of hosts, so the memory is bounded. */
const MAX_REMEMBERED_HOSTS = 256;
/** A DNS name is at most 253 characters; longer host names (from a hostile answer) are not remembered. */
const MAX_DNS_NAME_LENGTH = 253;
const scopeOfHostname = new Map<string, NetworkScope>();

function scopeOf(hostname: string): NetworkScope {
  const host = bareHost(hostname);
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return 'loopback';
  const v4 = ipv4Bytes(host);
  if (v4 !== undefined) return ipv4Scope(v4);
  const v6 = ipv6Groups(host);
  return v6 === undefined ? 'public' : ipv6Scope(v6);
}

/**
 * True for a host whose packets never leave this machine, so that plain http there cannot expose
 * a token on the network: `localhost` (trailing dots allowed) or a loopback IP literal in any
 * spelling. Not `*.localhost` (a resolver may send those to DNS) nor `0.0.0.0` / `::` (not an
 * address one connects to on purpose).
 */
export function isLoopbackHostname(hostname: string): boolean {
  // Asked on every attempt of a plain-http request (a local emulator): remembered per host name.
  const known = loopbackHostnames.get(hostname);
  if (known !== undefined) return known;
  const loopback = isLoopbackHost(hostname);
  if (hostname.length > MAX_DNS_NAME_LENGTH) return loopback;
  if (loopbackHostnames.size >= MAX_REMEMBERED_HOSTS) loopbackHostnames.clear();
  loopbackHostnames.set(hostname, loopback);
  return loopback;
}

const loopbackHostnames = new Map<string, boolean>();

function isLoopbackHost(hostname: string): boolean {
  const host = bareHost(hostname);
  if (host === 'localhost') return true;
  const v4 = ipv4Bytes(host);
  if (v4 !== undefined) return v4[0] === 127;
  const v6 = ipv6Groups(host);
  return v6 !== undefined && !v6.every((group) => group === 0) && ipv6Scope(v6) === 'loopback';
}

/**
 * Why `target` may not be used for a request of the service at `service`, or undefined when it
 * may. A hop may go as close to this machine as the service is itself, never closer: a remote
 * service sending the client to `http://127.0.0.1:…` or `http://10.0.0.5/` would make it reach into
 * this machine or its network (server-side request forgery). A loopback service (the emulator)
 * may use loopback addresses; a service on the private network may use private ones.
 */
export function closerThanService(target: URL, service: URL, secrets: readonly string[] = []): string | undefined {
  const scope = networkScope(target);
  const serviceScope = networkScope(service);
  if (SCOPE_RANK[scope] <= SCOPE_RANK[serviceScope]) return undefined;
  const where = scope === 'loopback' ? 'this machine (loopback)' : 'a private network';
  // The target's host was chosen by an answer: it may hold a secret the service received, and be any length.
  const host = truncateText(scrubAnswerUrlText(target.host, secrets), 100);
  return `points into ${where} (${host}) while the service (${service.host}) is not there`;
}

/**
 * The one place a request meets the runtime: which fetch a call uses, and what its failures mean
 * (a ConnectionError that says whether the request may have been written, a TimeoutError, an
 * AbortError, a ConfigurationError for a request the runtime refuses to build, or the error a
 * body's own source threw).
 */
export type { FetchLike } from './public-types.js';

/**
 * Chooses the fetch for one call, in this order: the `fetch` option; undici's own fetch when a
 * `dispatcher` is given (Node only, see dispatcher-fetch.ts); otherwise `globalThis.fetch`,
 * looked up at call time so that msw and other interceptors installed after the client was built
 * still see every request.
 */
export function createFetch(options: { fetch?: FetchLike; dispatcher?: Dispatcher }): FetchLike {
  const { fetch: custom, dispatcher } = options;
  if (custom) return (input, init) => custom(input, init);
  if (dispatcher) return dispatcherFetch(dispatcher);
  return (input, init) => globalThis.fetch(input, init);
}

/**
 * Error codes that mean the connection was never established, so the request cannot have been
 * written: DNS failures, refused or unreachable hosts, connect timeouts and TLS handshake failures.
 * Anything else (a reset, a closed socket, a body timeout) may come after the request was sent.
 */
const BEFORE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/**
 * The codes of a server certificate that failed verification (OpenSSL's X509 verify results, as
 * Node names them). Verification ends the handshake, before a byte of the request is written.
 */
const CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_REJECTED',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
]);

/**
 * OpenSSL's codes for a handshake that could not agree (a protocol version, a cipher, a
 * certificate either side refused, a plain-http port answering TLS). The server's TLS layer
 * delivers no request data before its handshake completes, so even under TLS 1.3, where the
 * client may write before the server has judged its certificate, nothing reached the service.
 * Alerts that can come mid-stream (a bad record MAC, a decode error) are not among them.
 */
const TLS_HANDSHAKE_REFUSAL =
  /^ERR_SSL_(?:\w+_ALERT_(?:PROTOCOL_VERSION|HANDSHAKE_FAILURE|UNKNOWN_CA|BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_(?:REVOKED|EXPIRED|UNKNOWN|REQUIRED)|INSUFFICIENT_SECURITY|UNRECOGNIZED_NAME|NO_APPLICATION_PROTOCOL)|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|NO_SHARED_CIPHER|NO_CIPHERS_AVAILABLE|WRONG_VERSION_NUMBER|DH_KEY_TOO_SMALL|EE_KEY_TOO_SMALL|CA_MD_TOO_WEAK|CA_KEY_TOO_SMALL)$/;

/**
 * The system calls of a connection already open. Some codes above are met there too: Linux reports
 * a host or network unreachable on a read or a write (an ICMP error met by a retransmission or a
 * keep-alive probe, a route gone with a VPN), after the request may have reached the service.
 * Node's system errors name the call; other runtimes' errors name none, and their codes keep
 * their meaning.
 */
const OPEN_CONNECTION_SYSCALLS = new Set(['read', 'write', 'writev', 'shutdown']);

/** Whether a failure with this code, met in `syscall`, surely came before the request was written. */
function failedBeforeSending(code: string, syscall: unknown): boolean {
  if (typeof syscall === 'string' && OPEN_CONNECTION_SYSCALLS.has(syscall)) return false;
  return BEFORE_SEND_CODES.has(code) || CERTIFICATE_CODES.has(code) || TLS_HANDSHAKE_REFUSAL.test(code);
}

/** Walks `cause` links (fetch wraps the socket error in a TypeError) and returns the first `code`. */
function findErrorCode(error: unknown): string | undefined {
  return findCodedError(error)?.code;
}

/**
 * Deno's fetch failures carry no `code`: their innermost cause says `client error (Connect): ...`
 * when the connection could not be made, before a byte of the request was written. The operating
 * system's error it names becomes Node's code for it, so that a refused connection counts as not
 * sent (a batch `failed`, safe to send again, and the stop of the run) as it does on Node and Bun.
 */
const DENO_CONNECT_FAILURE = /\bclient error \(Connect\)/;
const DENO_CONNECT_CODES: readonly [RegExp, string][] = [
  [/\(os error 111\)|connection refused/i, 'ECONNREFUSED'],
  [/\bdns error\b.*temporary failure/i, 'EAI_AGAIN'],
  [/\bdns error\b/i, 'ENOTFOUND'],
  [/\(os error 113\)|no route to host/i, 'EHOSTUNREACH'],
  [/\(os error 101\)|network is unreachable/i, 'ENETUNREACH'],
  [/\(os error 99\)|cannot assign requested address/i, 'EADDRNOTAVAIL'],
];

/** Node's code for a Deno connect failure `message`, when it names one this module knows. */
function denoConnectCode(message: unknown): string | undefined {
  if (typeof message !== 'string' || !DENO_CONNECT_FAILURE.test(message)) return undefined;
  return DENO_CONNECT_CODES.find(([pattern]) => pattern.test(message))?.[1];
}

/** The first error in the `cause` chain that has a string `code`, with its message and system call. */
function findCodedError(error: unknown): { code: string; message: string | undefined; syscall: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const message = (current as { message?: unknown }).message;
    const code = (current as { code?: unknown }).code ?? denoConnectCode(message);
    if (typeof code === 'string') {
      const syscall = (current as { syscall?: unknown }).syscall;
      return { code, message: typeof message === 'string' && message !== '' ? message : undefined, syscall };
    }
    const errors = (current as { errors?: unknown }).errors;
    // AggregateError (happy eyeballs tries several addresses): each one failed to connect.
    if (Array.isArray(errors) && errors.length > 0) current = errors[0];
    else current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** undici's codes for a request it refuses to start: its arguments are wrong, or not supported. */
const UNDICI_REFUSALS = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/** Codes of errors raised while building a request, before any socket is touched. */
const LOCAL_CODES = new Set(['ERR_INVALID_URL', 'ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_ARG_VALUE']);

/**
 * What fetch throws, before connecting, for a request it cannot build: an invalid header name or
 * value (CR, LF, NUL, a character above U+00FF), an unparsable URL, a GET with a body. Network
 * failures in Node carry a coded `cause`; these carry none, or a local code.
 */
function localRequestProblem(error: unknown): string | undefined {
  if (!(error instanceof TypeError)) return undefined;
  const code = findErrorCode(error);
  if (code !== undefined && !LOCAL_CODES.has(code) && !UNDICI_REFUSALS.has(code)) return undefined;
  const message = error.message;
  // The Fetch standard's "bad ports" (1, 6000, 6665-6669, 10080 and others, services that must never
  // receive an HTTP request): fetch refuses them before connecting, saying only "bad port", with no
  // code. Nothing was sent, and every request there would meet it.
  if (error.cause instanceof Error && error.cause.message === 'bad port') {
    return 'its port is one fetch never connects to (a "bad port": the Fetch standard blocks ports such as 1, 6000, 6665-6669 and 10080); use another port';
  }
  if (/invalid header (name|value)|ByteString/i.test(message)) {
    return 'a header name or value is invalid (CR, LF, NUL or a character above U+00FF)';
  }
  if (code === 'ERR_INVALID_URL' || /parse URL|invalid URL/i.test(message)) return 'the URL is invalid';
  if (/cannot have body/i.test(message)) return 'a GET or HEAD request cannot have a body';
  // undici checks a request's headers and options before it writes a byte (a `transfer-encoding`,
  // `upgrade` or `expect` header a middleware set): refused there, nothing was sent.
  if (code !== undefined && UNDICI_REFUSALS.has(code)) {
    return `undici refused it: ${truncateText(findCodedError(error)?.message ?? code, 200)}`;
  }
  return undefined;
}

/**
 * undici's words for a proxy that answered a `CONNECT` with anything but 200. The tunnel never
 * opened, so the request never left this machine, whatever the status.
 */
const TUNNEL_REFUSED = /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/;

/**
 * The error for a proxy that refused to open a tunnel or to forward a plain http request, or
 * undefined when `code` and `message` say something else. A 4xx of the proxy (407: its credentials are missing or wrong; 403: its policy
 * forbids the host) answers every attempt the same: a configuration error, never re-sent. A 5xx
 * (the proxy could not reach the host) may pass, so it is retried like a refused connection. The
 * message names the status only: the proxy URL may hold a password.
 */
function proxyRefusal(code: string | undefined, message: string | undefined, operation: string) {
  // A plain http request the proxy was to forward (absolute form): undici turns its 407 into this.
  if (code === 'UND_ERR_INVALID_ARG' && message === 'Proxy Authentication Required (407)') {
    return new ConfigurationError(
      `${operation} request not sent: the proxy refused to forward it (407${PROXY_HINTS[407]})`,
    );
  }
  if (code !== 'UND_ERR_ABORTED' || message === undefined) return undefined;
  const status = Number(TUNNEL_REFUSED.exec(message)?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const what = `${operation} request not sent: the proxy refused to open a tunnel (${status}${PROXY_HINTS[status] ?? ''})`;
  if (status >= 500) return new ConnectionError(what, { requestMaybeSent: false });
  return new ConfigurationError(what);
}

/** What a proxy's refusal of a tunnel most often means, for the statuses that have one cause. */
const PROXY_HINTS: Record<number, string> = {
  407: ' Proxy Authentication Required: check the user and password in the proxy URL',
  403: ' Forbidden: the proxy does not allow this host',
};

/** A PushError that fetch wrapped (it reports a failed body stream as a TypeError caused by it). */
function pushErrorCause(error: unknown): PushError | undefined {
  let current = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PushError) return current;
    current = current.cause;
  }
  return undefined;
}

/**
 * Turns whatever `fetch` threw into a PushError. The caller's signal and `timedOut` tell a caller
 * abort from a timeout: both surface as an abort of the attempt's signal.
 */
export function toTransportError(
  error: unknown,
  context: {
    userSignal?: AbortSignal;
    timedOut: boolean;
    timeoutMs: number;
    operation: string;
    /** The status of an answer whose headers had come when it failed. */
    answered?: number | undefined;
  },
): PushError {
  if (error instanceof PushError) return error;
  // The request body's own source failed (a file that changed while it was read): that error is
  // the outcome, not a network fault, and sending again cannot fix it.
  const sourceError = pushErrorCause(error);
  if (sourceError !== undefined) return sourceError;
  if (context.userSignal?.aborted) {
    return new AbortError(`${context.operation} request aborted by the caller`, { cause: context.userSignal.reason });
  }
  if (context.timedOut) {
    const what =
      context.answered === undefined
        ? 'got no response'
        : `got an answer (${context.answered}) whose body did not finish`;
    return new TimeoutError(`${context.operation} request ${what} within ${context.timeoutMs} ms`, { cause: error });
  }
  // Every attempt would fail the same way, and nothing was sent: fatal, never "maybe sent". The
  // cause is left out: fetch quotes the offending value, which may be a header holding a token.
  const refusal = proxyRefusal(findErrorCode(error), findCodedError(error)?.message, context.operation);
  if (refusal !== undefined) return refusal;
  const problem = localRequestProblem(error);
  if (problem !== undefined) {
    return new ConfigurationError(`${context.operation} request could not be sent: ${problem}`);
  }
  const coded = findCodedError(error);
  const code = coded?.code;
  const requestMaybeSent = code === undefined || !failedBeforeSending(code, coded?.syscall);
  // undici's own errors say what went wrong in words a code cannot ("other side closed"); so do
  // Node's for a certificate ("self-signed certificate", the names a certificate holds). Neither
  // names a header value. System errors (ECONNRESET...) need none; OpenSSL's are a source path.
  const worded =
    code !== undefined &&
    (code.startsWith('UND_ERR_') || CERTIFICATE_CODES.has(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID');
  const detail =
    worded && coded?.message !== undefined
      ? `${code} (${truncateText(coded.message, 200)})`
      : (code ?? (error instanceof Error ? error.message : 'network error'));
  return new ConnectionError(`${context.operation} request failed: ${detail}`, { requestMaybeSent, cause: error });
}
