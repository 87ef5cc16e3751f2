import { ConfigurationError } from '../errors.js';
import { scrubAnswerUrlText } from '../internal/redact.js';
import { isLoopbackHostname } from './network-scope.js';

/** True when the URL may carry credentials or data: https, or http to a loopback host or when allowed. */
export function isSecureUrl(url: URL, allowInsecureHttp = false): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && (allowInsecureHttp || isLoopbackHostname(url.hostname));
}

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
    throw new ConfigurationError(`${what} must be an http(s) URL, got protocol "${url.protocol}"`);
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
    throw new ConfigurationError(`${what} is not an absolute URL`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigurationError(
      `${what} must not contain credentials (user:password@host); pass clientId and clientSecret instead`,
    );
  }
  return url;
}
