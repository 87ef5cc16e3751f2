/**
 * The secret scan shared by the chaos, security and CLI runs: every form in which a secret could
 * leak (as is, URL-encoded, inside an HTTP Basic header) is looked for in every captured text.
 */

/** The forms of one credential that must never appear in output. */
export function secretForms(clientId: string, clientSecret: string): string[] {
  return [
    clientSecret,
    encodeURIComponent(clientSecret),
    new URLSearchParams({ s: clientSecret }).toString().slice(2),
    Buffer.from(`${clientId}:${clientSecret}`).toString('base64'),
  ];
}

/** Returns a short, safe label (first 4 characters) of every secret found in the texts. */
export function findSecrets(texts: Iterable<string>, secrets: Iterable<string>): string[] {
  const haystack = [...texts].join('\n');
  const found: string[] = [];
  for (const secret of new Set(secrets)) {
    if (secret.length >= 8 && haystack.includes(secret)) found.push(`${secret.slice(0, 4)}…`);
  }
  return found;
}
