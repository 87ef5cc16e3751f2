/** Half-open ranges `[start, end)` of record ordinals. */
export type Range = [number, number];

/**
 * A set of record ordinals stored as sorted, merged ranges. Batches settle in any order under
 * concurrency, but they cover a contiguous stream, so the set stays a handful of ranges.
 */
export class RangeSet {
  readonly #list: Range[];

  /** Sorts and merges once: linear after the sort, whatever a (hostile) checkpoint file lists. */
  constructor(ranges: readonly Range[] = []) {
    const sorted = ranges.filter(([a, b]) => b > a).map(([a, b]): Range => [a, b]);
    sorted.sort((x, y) => x[0] - y[0]);
    const merged: Range[] = [];
    for (const [a, b] of sorted) {
      const last = merged.at(-1);
      if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    this.#list = merged;
  }

  /**
   * Adds `[start, end)`, merging with neighbours. Binary search and one splice of the ranges it
   * touches: a checkpoint may hold a million ranges, and each settled batch adds to it.
   */
  add(start: number, end: number): void {
    if (end <= start) return;
    const list = this.#list;
    // Ranges from `first` to `after - 1` overlap or touch [start, end).
    const first = this.#firstIndex((range) => range[1] >= start);
    const after = this.#firstIndex((range) => range[0] > end, first);
    if (first === after) {
      list.splice(first, 0, [start, end]);
      return;
    }
    const merged: Range = [Math.min(start, (list[first] as Range)[0]), Math.max(end, (list[after - 1] as Range)[1])];
    list.splice(first, after - first, merged);
  }

  /** The first index from `from` whose range satisfies `test`, which holds for a suffix of the sorted list. */
  #firstIndex(test: (range: Range) => boolean, from = 0): number {
    let low = from;
    let high = this.#list.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (test(this.#list[mid] as Range)) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /** Adds a list of ordinals, in runs. */
  addAll(ordinals: readonly number[]): void {
    for (const [start, end] of runsOf(ordinals)) this.add(start, end);
  }

  /** Removes `[start, end)`, splitting a range that holds it; like {@link add}, one splice. */
  remove(start: number, end: number): void {
    if (end <= start) return;
    const list = this.#list;
    // Ranges from `first` to `after - 1` overlap [start, end).
    const first = this.#firstIndex((range) => range[1] > start);
    const after = this.#firstIndex((range) => range[0] >= end, first);
    if (first >= after) return;
    const kept: Range[] = [];
    const [a] = list[first] as Range;
    const [, b] = list[after - 1] as Range;
    if (a < start) kept.push([a, start]);
    if (b > end) kept.push([end, b]);
    list.splice(first, after - first, ...kept);
  }

  /** Removes a list of ordinals, in runs. */
  removeAll(ordinals: readonly number[]): void {
    for (const [start, end] of runsOf(ordinals)) this.remove(start, end);
  }

  /** This set minus `other`, in one pass over both. */
  difference(other: RangeSet): RangeSet {
    const out: Range[] = [];
    const cut = other.#list;
    let j = 0;
    for (const [a, b] of this.#list) {
      let start = a;
      while (j < cut.length && (cut[j] as Range)[1] <= start) j++;
      let k = j;
      while (k < cut.length && (cut[k] as Range)[0] < b) {
        const [c, d] = cut[k] as Range;
        if (c > start) out.push([start, c]);
        start = Math.max(start, d);
        if (d >= b) break;
        k++;
      }
      if (start < b) out.push([start, b]);
    }
    return new RangeSet(out);
  }

  has(ordinal: number): boolean {
    let low = 0;
    let high = this.#list.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const [a, b] = this.#list[mid] as Range;
      if (ordinal < a) high = mid - 1;
      else if (ordinal >= b) low = mid + 1;
      else return true;
    }
    return false;
  }

  /** `[0, end)` minus this set. */
  complementUpTo(end: number): RangeSet {
    const out = new RangeSet();
    let cursor = 0;
    for (const [a, b] of this.#list) {
      if (a >= end) break;
      if (a > cursor) out.add(cursor, a);
      cursor = Math.max(cursor, b);
    }
    if (cursor < end) out.add(cursor, end);
    return out;
  }

  union(other: RangeSet): RangeSet {
    return new RangeSet([...this.#list, ...other.#list]);
  }

  size(): number {
    return this.#list.reduce((sum, [a, b]) => sum + (b - a), 0);
  }

  ranges(): Range[] {
    return this.#list.map(([a, b]) => [a, b]);
  }
}

/** Ordinals as sorted runs of consecutive values, `[start, end)`. */
function runsOf(ordinals: readonly number[]): Range[] {
  const sorted = [...ordinals].sort((x, y) => x - y);
  const runs: Range[] = [];
  let i = 0;
  while (i < sorted.length) {
    const start = sorted[i] as number;
    let end = start + 1;
    while (i + 1 < sorted.length && (sorted[i + 1] as number) <= end) {
      end = Math.max(end, (sorted[i + 1] as number) + 1);
      i++;
    }
    runs.push([start, end]);
    i++;
  }
  return runs;
}
