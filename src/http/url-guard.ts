import { ConfigurationError } from '../errors.js';

/** Hosts that never leave the machine, so plain http cannot expose a token on the network. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname.toLowerCase());
}

/** True when the URL may carry credentials or data: https, or http to a loopback host or when allowed. */
export function isSecureUrl(url: URL, allowInsecureHttp = false): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (allowInsecureHttp || isLoopbackHost(url.hostname));
}

/**
 * Throws a ConfigurationError unless the URL is https, or http to a loopback host (127.0.0.1,
 * localhost, [::1]), or http with `allowInsecureHttp`. Used for `authUrl`, `baseUrl`, every request,
 * every redirect target and every signed upload address.
 *
 * @param what names the URL in the message, such as `baseUrl` or `signed upload address`.
 */
export function assertSecureUrl(url: URL, what: string, allowInsecureHttp = false): URL {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigurationError(`${what} must be an http(s) URL, got protocol "${url.protocol}"`);
  }
  if (!isSecureUrl(url, allowInsecureHttp)) {
    throw new ConfigurationError(
      `${what} uses plain http to ${url.host}; only https is allowed except for loopback hosts. ` +
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
    throw new ConfigurationError(`${what} is not an absolute URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigurationError(
      `${what} must not contain credentials (user:password@host); pass clientId and clientSecret instead`,
    );
  }
  return url;
}

/** The four bytes of a dotted IPv4 host as the WHATWG URL parser leaves it (it already turns `127.1` into `127.0.0.1`). */
function ipv4Bytes(hostname: string): number[] | undefined {
  const parts = hostname.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined;
  return parts.map(Number);
}

/** Where a host is, as far as its address says: this machine, a private network, or anywhere. */
export type NetworkScope = 'loopback' | 'private' | 'public';

function ipv4Scope([a = 0, b = 0]: number[]): NetworkScope {
  // 0.0.0.0/8 ("this host") reaches local services like 127/8 does.
  if (a === 127 || a === 0) return 'loopback';
  if (
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, where cloud metadata services answer
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  ) {
    return 'private';
  }
  return 'public';
}

/** The eight 16-bit groups of a bracketed IPv6 host, from the parser's compressed form. */
function ipv6Groups(hostname: string): number[] | undefined {
  if (!hostname.startsWith('[') || !hostname.endsWith(']')) return undefined;
  const [head = '', tail] = hostname.slice(1, -1).split('::');
  const parse = (text: string) => (text === '' ? [] : text.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
}

function ipv6Scope(groups: number[]): NetworkScope {
  const [first = 0, , , , , sixth = 0, high = 0, low = 0] = groups;
  const zeroPrefix = groups.slice(0, 5).every((group) => group === 0);
  if (zeroPrefix && sixth === 0 && high === 0 && (low === 0 || low === 1)) return 'loopback'; // :: and ::1
  // ::ffff:a.b.c.d, IPv4-mapped (the parser writes ::ffff:XXXX:XXXX), and the old ::a.b.c.d.
  if (zeroPrefix && (sixth === 0xffff || sixth === 0)) {
    return ipv4Scope([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  }
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80) return 'private'; // fc00::/7, fe80::/10
  return 'public';
}

/**
 * Where a URL's host is: `loopback` (127/8, 0.0.0.0, `localhost` and `*.localhost`, `::1`, `::`),
 * `private` (10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10, fc00::/7, fe80::/10), IPv4-mapped
 * IPv6 forms of these included, or `public`. Decided on the URL parser's normal form, so `127.1`,
 * `0x7f.1` and `[::ffff:127.0.0.1]` are caught. A name that resolves to such an address is not
 * (that needs DNS, which a URL check cannot do).
 */
export function networkScope(url: URL): NetworkScope {
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback';
  const v4 = ipv4Bytes(host);
  if (v4 !== undefined) return ipv4Scope(v4);
  const v6 = ipv6Groups(host);
  return v6 === undefined ? 'public' : ipv6Scope(v6);
}
