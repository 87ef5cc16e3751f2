/**
 * Knuth–Morris–Pratt search over UTF-16 units. A regex built from a secret backtracks: each start
 * position may re-read up to the secret's length, so a long secret and an answer full of its
 * near-copies cost their product. KMP reads each unit of the text once and steps back through its
 * table at most as often as it stepped forward: work is at most twice the text's length, whatever
 * the pattern.
 */

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
export function searchPrefixEnds(
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
export function searchAll(
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
 * taken, at most `2 × length`.
 */
export function searchSuffixStarts(
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
