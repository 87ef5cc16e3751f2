/**
 * Where secrets appear in a text, in any encoding a JSON service or a form uses, one character at
 * a time (`\u0073ecret`, `a\/b`, `a%2Fb`, `a+b`, or any mix). The text is decoded a fixed number
 * of times (once per backslash reading) and each reading is searched without backtracking, so the
 * work is linear in the text's length whatever the secrets are: a regex built from a secret would
 * re-read up to the secret's length at each position, and a long token plus an answer full of its
 * near-copies would block the event loop for seconds.
 */
import {
  BACKSLASH_READINGS,
  type BackslashReading,
  comparableUnits,
  type DecodedText,
  decodeEscapedText,
  hasEscapes,
  rawUnits,
  readingsDiffer,
  sourceEnd,
} from './escaped-text.js';

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
export interface SecretRanges {
  /** Sorted, disjoint `[start, end)` source ranges as a flat list of pairs. */
  ranges: number[];
  /** Units decoded plus search steps: at most a fixed multiple of the text's length per secret. */
  steps: number;
}

/** Finds every secret (of at least {@link MIN_SECRET_LENGTH} characters) in `text`, in any encoding. */
export function findSecretRanges(text: string, secrets: readonly (string | undefined)[]): SecretRanges {
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
export interface SearchPattern {
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
