/**
 * Helpers that keep secrets out of logs. Signed upload addresses carry their signature in the
 * query string, and tokens travel in headers, so a log line gets the path only and never a header.
 */

/** The URL without query, fragment or user info: `https://host/path`. */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * Removes each secret from a server-supplied text before it goes into an error message. A
 * misbehaving server could echo the credentials it received.
 */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  return out;
}
