/**
 * Keeps secrets out of errors. Signed upload addresses carry their signature in the query string,
 * and tokens travel in headers, so log lines get the path only and never a header; server-supplied
 * text is scrubbed here before it goes into an error, and cut to a bounded length.
 */

import { findSecretRanges } from './secret-ranges.js';

/**
 * The longest text copied from a service's answer into an error message (and into the CLI's
 * rejects lines): a hostile service may send megabytes of "message". Longer texts are cut and end
 * with `…`.
 */
export const MAX_ERROR_TEXT_LENGTH = 500;

/** Cuts a server-supplied text to {@link MAX_ERROR_TEXT_LENGTH} characters. */
export function truncateText(text: string, max: number = MAX_ERROR_TEXT_LENGTH): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in half: the result must stay well-formed UTF-16.
  let end = max - 1;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** Shortest base64 form searched for: shorter runs of the alphabet are ordinary text. */
const MIN_BASE64_FORM_LENGTH = 8;

/**
 * Longest text whose base64 forms are searched for. Real tokens are a few KB; a hostile endpoint's
 * 60 KB token would bring four patterns of 80 KB, past what the scrubber keeps compiled, and every
 * answer would compile them anew.
 */
const MAX_BASE64_SOURCE_LENGTH = 12 * 1024;

/**
 * `text` as it shows inside base64 of a longer text that holds it (a gateway quoting the request
 * body, an error naming the `Authorization` it refused): base64 turns each 3 bytes into 4
 * characters, so the secret reads one of three ways after the bytes before it, each without the
 * characters it shares with its neighbours. In both alphabets (`+/`, and the URL-safe `-_`). None
 * for a text longer than {@link MAX_BASE64_SOURCE_LENGTH}.
 */
export function base64Forms(text: string): readonly string[] {
  if (text.length > MAX_BASE64_SOURCE_LENGTH) return NO_FORMS;
  // Every attempt asks for its bearer token's forms, and the token changes once an hour.
  if (text === lastBase64Source) return lastBase64Forms;
  lastBase64Forms = computeBase64Forms(text);
  lastBase64Source = text;
  return lastBase64Forms;
}

const NO_FORMS: readonly string[] = Object.freeze([]);
let lastBase64Source: string | undefined;
// Frozen: every caller gets this one array, and one that added to it would change what the next
// caller scrubs, and for another token once the memo moves on.
let lastBase64Forms: readonly string[] = NO_FORMS;

function computeBase64Forms(text: string): readonly string[] {
  const bytes = new TextEncoder().encode(text);
  const out = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    let binary = '\0'.repeat(offset);
    for (let at = 0; at < bytes.length; at += 8192) binary += String.fromCharCode(...bytes.subarray(at, at + 8192));
    // The characters made of this text's bits alone.
    const inner = btoa(binary).slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    if (inner.length < MIN_BASE64_FORM_LENGTH) continue;
    out.add(inner);
    out.add(inner.replaceAll('+', '-').replaceAll('/', '_'));
  }
  return Object.freeze([...out]);
}

/** What stands where a secret was found. */
export const REDACTED = '[redacted]';

/**
 * The secrets as they may show in a URL's host: the URL parser lower-cases a host (and decodes its
 * `%XX`), so a secret an answer put in a redirect target's host comes out lower-cased.
 */
function hostForms(secrets: readonly (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    out.add(secret);
    out.add(secret.toLowerCase());
  }
  return [...out];
}

/**
 * Scrubs a text taken from an address an answer chose (a redirect's target, a signed upload
 * address): its host, origin or path. Secrets are matched in their own case and lower-cased.
 */
export function scrubAnswerUrlText(text: string, secrets: readonly (string | undefined)[]): string {
  return scrubSecrets(text, hostForms(secrets));
}

/**
 * The most characters one UTF-16 unit of a secret takes in an encoding the scrubber reads: `\uXXXX`
 * (6), or `%XX%XX%XX` for a character of three UTF-8 bytes (9); a surrogate pair takes 12 for two.
 */
function longestEncodedLength(secret: string): number {
  let length = 0;
  for (let i = 0; i < secret.length; i++) {
    const unit = secret.charCodeAt(i);
    length += unit >= 0x800 && (unit < 0xd800 || unit > 0xdfff) ? 9 : 6;
  }
  return length;
}

/**
 * A text read up to a cap, scrubbed, and cut there: the cut may have gone through a secret, whose
 * first characters no search finds. The last characters, as many as any secret can take in any
 * encoding, are dropped too, and the text ends with `…` to show the cut.
 */
export function cutAfterSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let drop = 0;
  for (const secret of secrets) if (secret) drop = Math.max(drop, longestEncodedLength(secret));
  let end = Math.max(0, text.length - drop);
  // Never keep half of a surrogate pair.
  const code = text.charCodeAt(end - 1);
  if (end > 0 && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** What {@link scrubSecretsCounted} did: the scrubbed text, and the steps it took to find the secrets. */
export interface ScrubResult {
  text: string;
  /** Units decoded plus search steps: linear in the text's length for any number of secrets of any length. */
  steps: number;
}

/**
 * {@link scrubSecrets}, also reporting the work done, so that tests can hold it to a linear bound
 * without timing anything.
 */
export function scrubSecretsCounted(text: string, secrets: readonly (string | undefined)[]): ScrubResult {
  const { ranges, steps } = findSecretRanges(text, secrets);
  return { text: cut(text, ranges), steps };
}

/** `text` with each range replaced by {@link REDACTED}. */
function cut(text: string, cuts: readonly number[]): string {
  if (cuts.length === 0) return text;
  let out = '';
  let from = 0;
  for (let i = 0; i < cuts.length; i += 2) {
    out += text.slice(from, cuts[i]) + REDACTED;
    from = cuts[i + 1] as number;
  }
  return out + text.slice(from);
}

/**
 * Removes each secret from a server-supplied text before it goes into an error message. A
 * misbehaving server could echo the credentials it received, in any encoding a JSON service or a
 * form uses, one character at a time (`\u0073ecret`, `a\/b`, `a%2Fb`, `a+b`): each mix is found.
 * The text is read once through its escapes and searched without backtracking, so the work is
 * linear in the text's length whatever the secrets are.
 */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  return scrubSecretsCounted(text, secrets).text;
}

/**
 * How deep {@link scrubJsonValue} walks a parsed answer. Real answers nest a few levels; a hostile
 * one may nest tens of thousands, which JSON.parse accepts but a recursive walk, `JSON.stringify`
 * and `util.inspect` do not (RangeError). Deeper values are replaced by {@link TOO_DEEP}.
 */
export const MAX_JSON_DEPTH = 32;

/** What stands in for a value nested deeper than {@link MAX_JSON_DEPTH}. */
export const TOO_DEEP = '[nested too deep]';

/**
 * Scrubs every string in a parsed JSON value, keys included, down to {@link MAX_JSON_DEPTH}; deeper
 * values are replaced, never walked. The raw text was scrubbed already; this catches what only
 * decoding reveals (a secret percent-encoded inside a JSON string whose `%` was itself `\u`-escaped).
 */
export function scrubJsonValue(value: unknown, secrets: readonly (string | undefined)[], depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => scrubJsonValue(item, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty: a key named "__proto__" must stay a key.
    Object.defineProperty(out, scrubSecrets(key, secrets), {
      value: scrubJsonValue(item, secrets, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * A test of header names for the secrets: whether a name may hold one. Names come lower-cased (the
 * Headers class lower-cases what the service sent), so they are searched for the secrets
 * lower-cased. A name with a `%` escape (a name may hold one) could hold an encoded secret in
 * either case, which a search in one case misses: it counts as holding one.
 */
export function secretInName(secrets: readonly string[]): (name: string) => boolean {
  if (secrets.length === 0) return () => false;
  const lowered = secrets.map((secret) => secret.toLowerCase());
  return (name) => name.includes('%') || scrubSecrets(name, lowered) !== name;
}

/**
 * HTTP's optional whitespace (space, tab) and the line breaks a header value may not hold, which
 * fetch drops from both ends of a header value.
 */
function isHttpWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * `text` without the HTTP whitespace at either end, as fetch sends a header value: the form of a
 * token a service receives, hence the one scrubbed. A loop, not a
 * regex: `[ \t]+$` over a value with a long inner run of spaces re-reads the run from each of its
 * characters, and a token endpoint chooses the token.
 */
export function trimHttpWhitespace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isHttpWhitespace(text.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}
