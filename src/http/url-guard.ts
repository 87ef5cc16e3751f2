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
        'Set allowInsecureHttp: true to override (credentials would travel unencrypted).',
    );
  }
  return url;
}

/** Parses an option as an absolute URL, naming the option (and its variable) when it is not one. */
export function parseUrlOption(value: string | URL, what: string): URL {
  if (value instanceof URL) return new URL(value.href);
  try {
    return new URL(value);
  } catch {
    throw new ConfigurationError(`${what} is not an absolute URL`);
  }
}
