/**
 * Where an attempt meets the wire, below the redirect loop. In this order:
 * - where a request may go: https only, except to a loopback host or with `allowInsecureHttp`, and
 *   no hop closer to this machine than the service the request belongs to;
 * - the headers the transport owns, which fetch a call uses, and what its failures mean (a
 *   ConnectionError that says whether the request may have been written, a TimeoutError, an
 *   AbortError, a ConfigurationError);
 * - what hooks are told, and the address they see (never its query);
 * - the answer's body: a 2xx read under its cap, an error body cut, scrubbed (internal/text.ts)
 *   and mapped to its class (errors.ts).
 */

import type { Dispatcher } from 'undici';
import {
  AbortError,
  type ApiErrorBody,
  answeredBy,
  ConfigurationError,
  ConnectionError,
  type HeadersRecord,
  PushApiError,
  PushError,
  ResponseTooLargeError,
  requestIdFrom,
  TimeoutError,
} from '../errors.js';
import { ignoreRejection } from '../internal/logger.js';
import {
  cutAfterSecrets,
  parseJsonObject,
  scrubAnswerUrlText,
  scrubJsonValue,
  scrubSecrets,
  secretInName,
  trimHttpWhitespace,
  truncateText,
} from '../internal/text.js';
import { dispatcherFetch } from './dispatcher-fetch.js';
import type { FetchLike, PushClientHooks } from './public-types.js';
import type { AnswerHead, RequestSpec } from './types.js';

// ── Where a request may go ───────────────────────────────────────────────────────────────────────
// Two rules, checked on every request and on every hop of a redirect: https only, except to a
// loopback host or with `allowInsecureHttp` (`assertSecureUrl`); and no hop closer to this machine
// than the service the request belongs to (`closerThanService`).

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
type NetworkScope = 'loopback' | 'private' | 'public';

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

// ── The call to fetch ────────────────────────────────────────────────────────────────────────────
// The one place a request meets the runtime: the headers it may not set, which fetch a call uses,
// and what its failures mean (a ConnectionError that says whether the request may have been
// written, a TimeoutError, an AbortError, a ConfigurationError for a request the runtime refuses to
// build, or the error a body's own source threw).

/**
 * Headers the transport or the credentials own. Setting one would either be ignored by fetch or
 * change what the request means (a second Authorization, a wrong length), so it is refused loudly.
 */
const RESERVED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  // undici refuses it on every attempt (it does not implement 100-continue).
  'expect',
]);

/** Whether the transport or the credentials own this header (any case). */
export function isReservedHeader(name: string): boolean {
  return RESERVED_HEADERS.has(name.toLowerCase());
}

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

// ── Hooks made safe ──────────────────────────────────────────────────────────────────────────────
// Typed callbacks the client calls as its requests go, for metrics and tracing. Events say what
// happened (operation, method, address without its query, attempt, status, duration, the server's
// request id, the retry delay) and never carry a header value or a body, so nothing a hook does can
// leak a token, a secret or a record.

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

// ── The answer's body ────────────────────────────────────────────────────────────────────────────
// A 2xx body is read under its cap and handed on; any other body is read under the error cap,
// scrubbed of secrets and turned into an error. The caps and the capped read itself
// (`readBounded`) close the file.

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
interface BoundedBody {
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
