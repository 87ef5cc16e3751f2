/**
 * Text that crosses the boundary: a service's answer and what we say about it. In this order:
 * - secrets kept out of errors: server-supplied text is scrubbed before it goes into an error or a
 *   log, and cut to a bounded length;
 * - the secret search: a secret found in any encoding a JSON service or a form uses, in linear
 *   time;
 * - the one-pass decoder it searches through, which remembers where each character came from;
 * - JSON parsed with a depth bound, so that no hostile nesting overflows a later walk;
 * - UTF-8 byte lengths without Node's Buffer;
 * - names: a URL's text without its trailing slashes, and the rules an upload's file name meets
 *   (shared with the CLI, which checks its paths' names before the upload starts).
 */

// ── Secrets kept out of errors ───────────────────────────────────────────────────────────────────
// Server-supplied text scrubbed of every form of a secret, and cut to a bounded length.

/**
 * The longest text copied from a service's answer into an error message (and into the CLI's
 * rejects lines): a hostile service may send megabytes of "message". Longer texts are cut and end
 * with `…`.
 */
const MAX_ERROR_TEXT_LENGTH = 500;

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
interface ScrubResult {
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
const MAX_JSON_DEPTH = 32;

/** What stands in for a value nested deeper than {@link MAX_JSON_DEPTH}. */
const TOO_DEEP = '[nested too deep]';

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

// ── The secret search ────────────────────────────────────────────────────────────────────────────
// Where secrets appear in a text, in any encoding a JSON service or a form uses, one character at
// a time (`\u0073ecret`, `a\/b`, `a%2Fb`, `a+b`, or any mix). The text is decoded a fixed number
// of times (once per backslash reading) and each reading is searched without backtracking, so the
// work is linear in the text's length whatever the secrets are: a regex built from a secret would
// re-read up to the secret's length at each position, and a long token plus an answer full of its
// near-copies would block the event loop for seconds.

/** Secrets shorter than this are not searched for: they would match ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** A search pattern, and the same compiled back to front to find it when its start is glued to an escape. */
interface Pattern {
  readonly forward: SearchPattern;
  readonly backward: SearchPattern;
}

/** A secret made ready to be searched for, in the text as it is and in each reading of its escapes. */
interface CompiledSecret {
  readonly raw: SearchPattern;
  readonly read: Readonly<Record<BackslashReading, readonly Pattern[]>>;
  /**
   * Units in its shortest pattern. Every encoding read here takes at least one character per unit,
   * so a text shorter than this cannot hold the secret: most headers and short answers need no search.
   */
  readonly shortest: number;
  /**
   * The patterns searched for in a text without escapes, as strings: such a text is first looked
   * through with the runtime's own search, and searched unit by unit only when one is there.
   */
  readonly plainTexts: readonly string[];
}

function pattern(units: Uint16Array): Pattern {
  return { forward: compilePattern(units), backward: compilePattern(units.slice().reverse()) };
}

function sameUnits(a: Uint16Array, b: Uint16Array): boolean {
  return a.length === b.length && a.every((unit, i) => unit === b[i]);
}

/**
 * The secret itself, and the secret read through the same escapes as the text: a secret that holds
 * `%41` or `\n` literally is then found however much of it the answer re-encoded.
 */
function readingPatterns(secret: string, plain: Uint16Array, reading: BackslashReading): Pattern[] {
  const read = decodeEscapedText(secret, reading);
  const units = read.units.slice(0, read.length);
  const out = [pattern(plain)];
  if (units.length >= MIN_SECRET_LENGTH && !sameUnits(units, plain)) out.push(pattern(units));
  return out;
}

/** UTF-16 units as a string, unit for unit (lone surrogates included), in slices a call's arguments can hold. */
function unitsText(units: Uint16Array): string {
  let out = '';
  for (let at = 0; at < units.length; at += 8192) out += String.fromCharCode(...units.subarray(at, at + 8192));
  return out;
}

function compileSecret(secret: string): CompiledSecret {
  const plain = comparableUnits(secret);
  const raw = compilePattern(rawUnits(secret));
  const read = {
    json: readingPatterns(secret, plain, 'json'),
    lone: readingPatterns(secret, plain, 'lone'),
    unicode: readingPatterns(secret, plain, 'unicode'),
  };
  const lengths = Object.values(read).flatMap((patterns) => patterns.map(({ forward }) => forward.units.length));
  const plainTexts = read.json.map(({ forward }) => unitsText(forward.units));
  return { raw, read, shortest: Math.min(raw.units.length, ...lengths), plainTexts };
}

/** Compiled secrets, built once each: a token is scrubbed from many answers. */
const compiled = new Map<string, CompiledSecret>();
let compiledLength = 0;

/**
 * Bounds of the cache, in secrets and in their total length: each compiled secret holds about a
 * dozen tables its length long, and a hostile token endpoint may hand out a new 60 KB token at each
 * refresh. Tokens are refreshed, and old ones need no pattern.
 */
const MAX_COMPILED_SECRETS = 64;
const MAX_COMPILED_LENGTH = 256 * 1024;

function compiledSecret(secret: string): CompiledSecret {
  let found = compiled.get(secret);
  if (found === undefined) {
    found = compileSecret(secret);
    while (
      compiled.size > 0 &&
      (compiled.size >= MAX_COMPILED_SECRETS || compiledLength + secret.length > MAX_COMPILED_LENGTH)
    ) {
      const oldest = compiled.keys().next().value as string;
      compiled.delete(oldest);
      compiledLength -= oldest.length;
    }
    compiled.set(secret, found);
    compiledLength += secret.length;
  }
  return found;
}

/**
 * Source ranges to cut, as a flat list of `[start, end)` pairs. Matches of one search arrive in
 * order, so overlapping ones are joined as they come and the list grows with distinct ranges only.
 */
class Ranges {
  readonly #pairs: number[] = [];

  add(start: number, end: number): void {
    const last = this.#pairs.length - 1;
    // Only a range that starts inside the last one joins it: the next search starts over from the text's start.
    if (last > 0 && start >= (this.#pairs[last - 1] as number) && start < (this.#pairs[last] as number)) {
      this.#pairs[last] = Math.max(this.#pairs[last] as number, end);
      return;
    }
    this.#pairs.push(start, end);
  }

  /** The ranges sorted by start, overlapping ones joined. */
  merged(): number[] {
    const pairs = this.#pairs;
    if (pairs.length === 0) return [];
    const order = Array.from({ length: pairs.length / 2 }, (_, i) => i);
    order.sort((a, b) => (pairs[2 * a] as number) - (pairs[2 * b] as number));
    const out: number[] = [];
    for (const i of order) {
      const start = pairs[2 * i] as number;
      const end = pairs[2 * i + 1] as number;
      const last = out.length - 1;
      if (last > 0 && start < (out[last] as number)) out[last] = Math.max(out[last] as number, end);
      else out.push(start, end);
    }
    return out;
  }
}

/** Whether the source from `at` reads, character by character, as `units[from..from + count)`. */
function readsAs(text: string, at: number, units: Uint16Array, from: number, count: number): boolean {
  for (let i = 0; i < count; i++) {
    const code = text.charCodeAt(at + i);
    if ((code === 0x2b ? 0x20 : code) !== units[from + i]) return false;
  }
  return true;
}

/**
 * Finds one pattern in one reading. Besides whole matches, a match may begin or end inside an
 * escape the reading took whole: `%4` written before an echoed `9…` reads as `I…`, and an echo
 * ending in `\` followed by `"` reads as `"`, yet the source still holds the secret. Those are found
 * through the partial matches next to each escape: the escape's first or last characters, read as
 * they are, complete them. An escape takes at most 12 characters, so this adds at most one step per
 * character of the text.
 */
function searchReading(text: string, decoded: DecodedText, { forward, backward }: Pattern, ranges: Ranges): number {
  const { units, starts } = decoded;
  const size = forward.units.length;
  let steps = 0;
  steps += searchPrefixEnds(units, decoded.length, forward, (index, longest) => {
    if (longest === size) ranges.add(starts[index - size + 1] as number, sourceEnd(decoded, index));
    // The escape after this unit, if any (not the second half of this unit's pair): does its start complete a partial match?
    if (index + 1 >= decoded.length || starts[index + 1] === starts[index]) return;
    const end = starts[index + 1] as number;
    const escapeLength = sourceEnd(decoded, index + 1) - end;
    let matched = longest === size ? (forward.fail[size - 1] as number) : longest;
    while (matched > 0 && size - matched < escapeLength) {
      const tail = size - matched;
      if (readsAs(text, end, forward.units, matched, tail))
        ranges.add(starts[index - matched + 1] as number, end + tail);
      matched = forward.fail[matched - 1] as number;
      steps++;
    }
  });
  steps += searchSuffixStarts(units, decoded.length, backward, (index, longest) => {
    if (index === 0) return;
    const start = starts[index] as number;
    // How many characters the escape before this unit took: 1 means no escape, 0 the middle of a pair.
    const escapeLength = start - (starts[index - 1] as number);
    let matched = longest === size ? (backward.fail[size - 1] as number) : longest;
    while (matched > 0 && size - matched < escapeLength) {
      const head = size - matched;
      if (readsAs(text, start - head, forward.units, 0, head))
        ranges.add(start - head, sourceEnd(decoded, index + matched - 1));
      matched = backward.fail[matched - 1] as number;
      steps++;
    }
  });
  return steps;
}

/** The ranges to cut, and the steps taken to find them. */
interface SecretRanges {
  /** Sorted, disjoint `[start, end)` source ranges as a flat list of pairs. */
  ranges: number[];
  /** Units decoded plus search steps: at most a fixed multiple of the text's length per secret. */
  steps: number;
}

/** Finds every secret (of at least {@link MIN_SECRET_LENGTH} characters) in `text`, in any encoding. */
function findSecretRanges(text: string, secrets: readonly (string | undefined)[]): SecretRanges {
  const usable = secrets.filter((secret): secret is string => !!secret && secret.length >= MIN_SECRET_LENGTH);
  if (usable.length === 0 || text === '') return { ranges: [], steps: 0 };
  const compiledSecrets = usable.map(compiledSecret).filter((secret) => secret.shortest <= text.length);
  if (compiledSecrets.length === 0) return { ranges: [], steps: 0 };
  const ranges = new Ranges();
  let steps = 0;
  if (!hasEscapes(text)) {
    // Nothing to decode: the text is its only reading. Most texts hold no secret at all, which the
    // runtime's search tells at native speed (one call per pattern, never a scan per match).
    if (!compiledSecrets.some((secret) => secret.plainTexts.some((plain) => text.includes(plain)))) {
      return { ranges: [], steps: text.length };
    }
    const units = rawUnits(text);
    for (const secret of compiledSecrets) {
      for (const { forward } of secret.read.json) {
        steps += searchAll(units, units.length, forward, (first, last) => ranges.add(first, last + 1));
      }
    }
    return { ranges: ranges.merged(), steps: steps + text.length };
  }
  const readings = readingsDiffer(text) ? BACKSLASH_READINGS : (['json'] as const);
  for (const reading of readings) {
    const decoded = decodeEscapedText(text, reading);
    steps += text.length;
    for (const secret of compiledSecrets) {
      for (const each of secret.read[reading]) steps += searchReading(text, decoded, each, ranges);
    }
  }
  // As it is, too: a secret next to a stray `\` or `%` is still there for anyone reading the raw text.
  const raw = rawUnits(text);
  for (const secret of compiledSecrets) {
    steps += searchAll(raw, raw.length, secret.raw, (first, last) => ranges.add(first, last + 1));
  }
  return { ranges: ranges.merged(), steps };
}

// Knuth–Morris–Pratt search over UTF-16 units. A regex built from a secret backtracks: each start
// position may re-read up to the secret's length, so a long secret and an answer full of its
// near-copies cost their product. KMP reads each unit of the text once and steps back through its
// table at most as often as it stepped forward: work is at most twice the text's length, whatever
// the pattern.

/** A pattern ready to be searched for: its units and the KMP failure table. */
interface SearchPattern {
  readonly units: Uint16Array;
  /** `fail[i]`: the length of the longest proper border of `units[0..i]`. */
  readonly fail: Int32Array;
}

/** Builds the failure table of `units` (not empty) in time linear in its length. */
export function compilePattern(units: Uint16Array): SearchPattern {
  const fail = new Int32Array(units.length);
  let border = 0;
  for (let i = 1; i < units.length; i++) {
    while (border > 0 && units[i] !== units[border]) border = fail[border - 1] as number;
    if (units[i] === units[border]) border++;
    fail[i] = border;
  }
  return { units, fail };
}

/**
 * Calls `visit(index, matched)` for every unit index where a part of the pattern ends, in order, with `matched` the length of the
 * longest prefix of the pattern that ends there (shorter ones that end there too are
 * `pattern.fail[matched - 1]` and so on); `matched` equal to the pattern's length is a whole match.
 * Returns the steps taken (units read plus steps back), at most `2 × length`.
 */
function searchPrefixEnds(
  text: Uint16Array,
  length: number,
  pattern: SearchPattern,
  visit: (index: number, matched: number) => void,
): number {
  const { units, fail } = pattern;
  const size = units.length;
  let steps = 0;
  let matched = 0;
  for (let i = 0; i < length; i++) {
    steps++;
    if (matched === size) matched = fail[size - 1] as number;
    const unit = text[i];
    while (matched > 0 && unit !== units[matched]) {
      matched = fail[matched - 1] as number;
      steps++;
    }
    if (unit === units[matched]) matched++;
    if (matched > 0) visit(i, matched);
  }
  return steps;
}

/**
 * Calls `onMatch(first, last)` (unit indexes, inclusive) for every occurrence of `pattern` in the
 * first `length` units of `text`, overlapping ones included, in order. Returns the steps taken,
 * at most `2 × length`.
 */
function searchAll(
  text: Uint16Array,
  length: number,
  pattern: SearchPattern,
  onMatch: (first: number, last: number) => void,
): number {
  const size = pattern.units.length;
  return searchPrefixEnds(text, length, pattern, (index, matched) => {
    if (matched === size) onMatch(index - size + 1, index);
  });
}

/**
 * The same search run from the text's end: calls `visit(index, matched)` for every unit index, with
 * `matched` the length of the longest suffix of the pattern that starts there (shorter ones that
 * start there too are `pattern.fail[matched - 1]` and so on). `reversed` is the pattern compiled
 * back to front. Indexes where no part of the pattern starts are not visited. Returns the steps
 * taken, at most `2 × length`. The loop is `searchPrefixEnds`'s written backwards rather than
 * shared with it: a direction chosen inside the loop made the scan about 30 % slower.
 */
function searchSuffixStarts(
  text: Uint16Array,
  length: number,
  reversed: SearchPattern,
  visit: (index: number, matched: number) => void,
): number {
  const { units, fail } = reversed;
  const size = units.length;
  let steps = 0;
  let matched = 0;
  for (let i = length - 1; i >= 0; i--) {
    steps++;
    if (matched === size) matched = fail[size - 1] as number;
    const unit = text[i];
    while (matched > 0 && unit !== units[matched]) {
      matched = fail[matched - 1] as number;
      steps++;
    }
    if (unit === units[matched]) matched++;
    if (matched > 0) visit(i, matched);
  }
  return steps;
}

// ── The escape decoder ───────────────────────────────────────────────────────────────────────────
// Reads a text the way a JSON service or a form would unescape it, in one left-to-right pass:
// `\uXXXX` (either case of `u` and of the hex digits), the JSON short escapes (`\/`, `\"`, `\\`,
// `\b`, `\f`, `\n`, `\r`, `\t`), percent-encoded UTF-8 (`%c3%a9`, either case) and `+` for a space.
// Each decoded UTF-16 unit remembers where its source began, so that a match found in the decoded
// text can be cut out of the source. Work and memory are linear in the text: no backtracking, no
// second pass.

/** A text read through every escape it may carry. */
interface DecodedText {
  /** The decoded UTF-16 code units, with `+` and space read as one and the same unit (a space). */
  readonly units: Uint16Array;
  /**
   * `starts[i]` is the source index where unit `i` begins; `starts[length]` is the source length.
   * Two units decoded from one escape (an astral character) share a start.
   */
  readonly starts: Int32Array;
  /** The number of decoded units. */
  readonly length: number;
}

const SPACE = 0x20;
const PLUS = 0x2b;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;

/** `\X` short escapes of JSON (RFC 8259 §7), by the code of X. */
const SHORT_ESCAPES = new Map<number, number>([
  [0x22, 0x22], // \"
  [0x5c, 0x5c], // \\
  [0x2f, 0x2f], // \/
  [0x62, 0x08], // \b
  [0x66, 0x0c], // \f
  [0x6e, 0x0a], // \n
  [0x72, 0x0d], // \r
  [0x74, 0x09], // \t
]);

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The value of `count` hex digits at `at`, or -1 when any is missing or not a hex digit. */
function hexAt(text: string, at: number, count: number): number {
  if (at + count > text.length) return -1;
  let value = 0;
  for (let i = 0; i < count; i++) {
    const digit = hexDigit(text.charCodeAt(at + i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** One escape read at a position: the code point it stands for and how many source characters it took. */
interface Escape {
  codePoint: number;
  length: number;
}

function jsonEscapeAt(text: string, at: number, reading: BackslashReading): Escape | undefined {
  const next = text.charCodeAt(at + 1);
  if (next === 0x75 || next === 0x55) {
    const unit = hexAt(text, at + 2, 4);
    return unit < 0 ? undefined : { codePoint: unit, length: 6 };
  }
  if (reading === 'unicode' || (reading === 'lone' && next === BACKSLASH)) return undefined;
  const short = SHORT_ESCAPES.get(next);
  return short === undefined ? undefined : { codePoint: short, length: 2 };
}

/** The number of bytes a UTF-8 sequence with this lead byte takes, or 0 when it cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** `%XX` bytes forming one UTF-8 character; a broken sequence is no escape (its `%` is read as itself). */
function percentEscapeAt(text: string, at: number): Escape | undefined {
  const lead = hexAt(text, at + 1, 2);
  const bytes = lead < 0 ? 0 : sequenceLength(lead);
  if (bytes === 0) return undefined;
  if (bytes === 1) return { codePoint: lead, length: 3 };
  let codePoint = lead & (0xff >> (bytes + 1));
  for (let i = 1; i < bytes; i++) {
    const pos = at + 3 * i;
    if (text.charCodeAt(pos) !== PERCENT) return undefined;
    const byte = hexAt(text, pos + 1, 2);
    if (byte < 0x80 || byte > 0xbf) return undefined;
    codePoint = (codePoint << 6) | (byte & 0x3f);
  }
  return codePoint > 0x10ffff ? undefined : { codePoint, length: 3 * bytes };
}

/** Whether the text holds anything the decoder would change: without it, decoding is the identity. */
function hasEscapes(text: string): boolean {
  return text.includes('\\') || text.includes('%') || text.includes('+');
}

/**
 * Whether the {@link BackslashReading}s may read the text differently: only a backslash that is not
 * the start of `\\uXXXX` is read differently by one of them.
 */
function readingsDiffer(text: string): boolean {
  for (let at = text.indexOf('\\'); at >= 0; at = text.indexOf('\\', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next !== 0x75 && next !== 0x55) return true;
    // `\\uXXXX`: all three readings take it whole; skip past it so its digits are not looked at again.
    if (hexAt(text, at + 2, 4) >= 0) at += 5;
    else return true;
  }
  return false;
}

/**
 * How a backslash is read. A secret holding a backslash may be echoed with it raw, escaped as `\\`,
 * or next to escaped characters, and one reading cannot tell these apart, so three are searched:
 * - `json`, as a JSON parser reads: `\\` is one backslash, so `\\u0061` is a backslash and `u0061`;
 * - `lone`: a backslash never escapes a backslash, so `\\u0061` is a backslash and `a`;
 * - `unicode`: only `\uXXXX` is an escape, as a person scanning for it reads: `\n` is `\` and `n`.
 * In every reading a run of backslashes counts as one, so that `\\` and `\` compare alike.
 */
type BackslashReading = 'json' | 'lone' | 'unicode';

/** Every {@link BackslashReading}. */
const BACKSLASH_READINGS: readonly BackslashReading[] = ['json', 'lone', 'unicode'];

/** Decodes `text` in one pass; see the module comment for what is read. */
function decodeEscapedText(text: string, reading: BackslashReading = 'json'): DecodedText {
  // Every source character yields at most one unit, except a 4-byte percent escape (12 characters, 2 units).
  const units = new Uint16Array(text.length);
  const starts = new Int32Array(text.length + 1);
  let length = 0;
  let at = 0;
  while (at < text.length) {
    const start = at;
    const code = text.charCodeAt(at);
    const found =
      code === BACKSLASH ? jsonEscapeAt(text, at, reading) : code === PERCENT ? percentEscapeAt(text, at) : undefined;
    const codePoint = found === undefined ? code : found.codePoint;
    at += found === undefined ? 1 : found.length;
    // A backslash after a backslash joins it: its source ends where the next unit starts.
    if (codePoint === BACKSLASH && length > 0 && units[length - 1] === BACKSLASH) continue;
    if (codePoint >= 0x10000) {
      units[length] = 0xd800 + ((codePoint - 0x10000) >> 10);
      starts[length++] = start;
      units[length] = 0xdc00 + ((codePoint - 0x10000) & 0x3ff);
    } else {
      units[length] = codePoint === PLUS ? SPACE : codePoint;
    }
    starts[length++] = start;
  }
  starts[length] = text.length;
  return { units, starts, length };
}

/** Where the source of unit `index` ends (exclusive). */
function sourceEnd(decoded: DecodedText, index: number): number {
  const start = decoded.starts[index] as number;
  let next = index + 1;
  while ((decoded.starts[next] as number) === start) next++;
  return decoded.starts[next] as number;
}

/**
 * The UTF-16 units of `text` unescaped, but compared the way {@link decodeEscapedText} compares: `+`
 * read as a space, a run of backslashes as one.
 */
function comparableUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH && length > 0 && units[length - 1] === BACKSLASH) continue;
    units[length++] = code === PLUS ? SPACE : code;
  }
  return units.slice(0, length);
}

/** The UTF-16 units of `text` as they are. */
function rawUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}

// ── Bounded JSON ─────────────────────────────────────────────────────────────────────────────────
// JSON parsed with values deeper than `MAX_JSON_DEPTH` replaced, so that no hostile nesting
// overflows a later walk.

/**
 * A parsed JSON value with every value nested deeper than {@link MAX_JSON_DEPTH} replaced by
 * {@link TOO_DEEP}. JSON.parse accepts any depth, but a hostile answer nesting tens of thousands of
 * arrays overflows the stack of every recursive walk after it: `JSON.stringify` of an error that
 * carries it, `util.inspect`, structuredClone. Returns `value` itself when nothing is that deep.
 */
function limitJsonDepth(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const limited = limitJsonDepth(item, depth + 1);
      if (limited === item) return;
      copy ??= [...value];
      copy[i] = limited;
    });
    return copy ?? value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const limited = limitJsonDepth(item, depth + 1);
    if (limited === item) continue;
    copy ??= { ...value };
    // defineProperty: a key named "__proto__" must stay a key.
    Object.defineProperty(copy, key, { value: limited, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? value;
}

/** Parses JSON, any value; deeper than {@link MAX_JSON_DEPTH} is replaced (see {@link limitJsonDepth}). */
export function parseJsonBounded(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: limitJsonDepth(JSON.parse(text)) };
  } catch {
    return { ok: false };
  }
}

/**
 * Parses a JSON object; anything else (invalid JSON, an array, a string, null) is undefined.
 * Values deeper than {@link MAX_JSON_DEPTH} are replaced (see {@link limitJsonDepth}).
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  const parsed = parseJsonBounded(text);
  if (!parsed.ok) return undefined;
  const { value } = parsed;
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`, found by one pass over the text
 * (no recursion, so any depth is safe to ask about). Brackets inside strings do not count.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // a backslash escapes the next character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > max) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

// ── UTF-8 sizes ──────────────────────────────────────────────────────────────────────────────────
// Without Node's Buffer, which workers and edge runtimes do not have.

const encoder = new TextEncoder();
/** Larger strings are encoded whole rather than kept in a scratch buffer that size. */
const MAX_SCRATCH_BYTES = 1024 * 1024;
let scratch = new Uint8Array(4096);

/**
 * The number of bytes `text` takes in UTF-8, as `TextEncoder` encodes it (an unpaired surrogate
 * becomes U+FFFD, 3 bytes). `encodeInto` a reused buffer is native in every runtime: a few times
 * slower than Node's `Buffer.byteLength`, and several times faster than counting code units in
 * JavaScript.
 */
export function utf8ByteLength(text: string): number {
  // UTF-8 needs at most 3 bytes per UTF-16 code unit.
  const most = text.length * 3;
  if (most > scratch.length) {
    if (most > MAX_SCRATCH_BYTES) return encoder.encode(text).byteLength;
    scratch = new Uint8Array(Math.max(most, scratch.length * 2));
  }
  return encoder.encodeInto(text, scratch).written;
}

// ── Names ────────────────────────────────────────────────────────────────────────────────────────
// A URL's text without its trailing slashes, and the rules an upload's file name meets.

/**
 * `text` without the trailing `/` characters. Written as a loop because `/\/+$/` is quadratic: the
 * regex engine tries the run of slashes from every position in it, and a URL taken from the
 * environment or a configuration file may hold a long one.
 */
export function trimTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}

// The rules an upload's file name must meet, checked before any request so that a bad name never
// reaches the service (the CLI checks its paths' names with them too, to name the path).

/** Object keys of S3-compatible stores are at most 1024 bytes of UTF-8. */
const MAX_FILE_NAME_BYTES = 1024;

// \p{Cc}: C0 controls, DEL and C1 controls. \p{Cs} in a /u regex matches only unpaired surrogates,
// which URLSearchParams would silently turn into U+FFFD, so the returned key would not match the name.
const CONTROL_CHARACTER = /\p{Cc}/u;
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Returns why `name` cannot be used as an upload file name, or undefined when it can. */
export function fileNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (name === '') return 'must not be empty';
  if (name === '.' || name === '..') return 'must not be "." or ".."';
  if (name.includes('/') || name.includes('\\')) return 'must not contain a path separator ("/" or "\\")';
  if (CONTROL_CHARACTER.test(name)) return 'must not contain control characters';
  if (UNPAIRED_SURROGATE.test(name)) return 'must be well-formed Unicode (it has an unpaired surrogate)';
  if (utf8ByteLength(name) > MAX_FILE_NAME_BYTES) return `must be at most ${MAX_FILE_NAME_BYTES} bytes of UTF-8`;
  return undefined;
}
