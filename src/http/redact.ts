/**
 * Keeps secrets out of errors. Signed upload addresses carry their signature in the query string,
 * and tokens travel in headers, so log lines get the path only and never a header; server-supplied
 * text is scrubbed here before it goes into an error, and cut to a bounded length.
 */

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

/** Secrets shorter than this are not scrubbed: they would match ordinary words. */
const MIN_SECRET_LENGTH = 4;

const REDACTED = '[redacted]';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** A hex digit in either case, as a regex: `\u00E9` and `%c3%a9` are both valid encodings. */
function hexPattern(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');
}

const JSON_SHORT_ESCAPES: Record<string, string> = {
  '"': '\\\\"',
  '\\': '\\\\\\\\',
  '/': '\\\\/',
  '\b': '\\\\b',
  '\f': '\\\\f',
  '\n': '\\\\n',
  '\r': '\\\\r',
  '\t': '\\\\t',
};

/**
 * Every way one character of a secret can appear in a service's answer: as itself; JSON-escaped
 * (`\uXXXX` for any character, `\/`, `\"` and the other short escapes); percent-encoded (its UTF-8
 * bytes, as in a URL or a form); and `+` for a space (form encoding).
 */
function characterPattern(char: string): string {
  const options = [escapeRegExp(char)];
  const short = JSON_SHORT_ESCAPES[char];
  if (short !== undefined) options.push(short);
  const units = [];
  for (let i = 0; i < char.length; i++) units.push(`\\\\[uU]${hexPattern(char.charCodeAt(i), 4)}`);
  options.push(units.join(''));
  const bytes = new TextEncoder().encode(char);
  options.push(Array.from(bytes, (byte) => `%${hexPattern(byte, 2)}`).join(''));
  if (char === ' ') options.push('\\+');
  return `(?:${options.join('|')})`;
}

/** One regex per secret, built once: a token is scrubbed from many answers. */
const patterns = new Map<string, RegExp>();

function secretPattern(secret: string): RegExp {
  let pattern = patterns.get(secret);
  if (pattern === undefined) {
    pattern = new RegExp(Array.from(secret, characterPattern).join(''), 'g');
    // Bounded: tokens are refreshed, and old ones need no pattern.
    if (patterns.size >= 64) patterns.delete(patterns.keys().next().value as string);
    patterns.set(secret, pattern);
  }
  return pattern;
}

/**
 * Removes each secret from a server-supplied text before it goes into an error message. A
 * misbehaving server could echo the credentials it received, in any encoding a JSON service or a
 * form uses, one character at a time (`\u0073ecret`, `a\/b`, `a%2Fb`, `a+b`): each mix is found.
 */
export function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.replace(secretPattern(secret), REDACTED);
  }
  return out;
}

/**
 * Scrubs every string in a parsed JSON value, keys included, at any depth. The raw text was
 * scrubbed already; this catches what only decoding reveals (a secret percent-encoded inside a
 * JSON string whose `%` was itself `\u`-escaped).
 */
export function scrubJsonValue(value: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((item) => scrubJsonValue(item, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      // defineProperty: a key named "__proto__" must stay a key.
      Object.defineProperty(out, scrubSecrets(key, secrets), {
        value: scrubJsonValue(item, secrets),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}
