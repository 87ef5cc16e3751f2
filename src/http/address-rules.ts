/**
 * Where a request may go. Two rules, checked on every request and on every hop of a redirect:
 * https only, except to a loopback host or with `allowInsecureHttp` (`assertSecureUrl`); and no
 * hop closer to this machine than the service the request belongs to (`closerThanService`).
 */
import { ConfigurationError } from '../errors.js';
import { scrubAnswerUrlText, truncateText } from '../internal/redact.js';

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
