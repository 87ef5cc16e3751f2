/**
 * Keeps secrets out of errors. Signed upload addresses carry their signature in the query string,
 * and tokens travel in headers, so log lines get the path only and never a header; server-supplied
 * text is scrubbed here before it goes into an error.
 */

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
