import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RangeSet } from '../../src/cli/ranges.js';

/** The ordinals of a set, one by one: the model the ranges must agree with. */
function members(set: RangeSet): number[] {
  return set.ranges().flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i));
}

describe('RangeSet add and remove', () => {
  it('agree with a plain set of ordinals, and keep the ranges sorted, disjoint and apart', () => {
    const operation = fc.record({
      add: fc.boolean(),
      start: fc.integer({ min: 0, max: 60 }),
      length: fc.integer({ min: 0, max: 12 }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        const set = new RangeSet();
        const model = new Set<number>();
        for (const { add, start, length } of operations) {
          if (add) set.add(start, start + length);
          else set.remove(start, start + length);
          for (let i = start; i < start + length; i++) add ? model.add(i) : model.delete(i);
        }
        expect(members(set)).toEqual([...model].sort((x, y) => x - y));
        const ranges = set.ranges();
        for (let i = 0; i < ranges.length; i++) {
          const [a, b] = ranges[i] as [number, number];
          expect(b).toBeGreaterThan(a);
          // Touching ranges are merged: a gap of at least one between neighbours.
          if (i > 0) expect(a).toBeGreaterThan((ranges[i - 1] as [number, number])[1]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('merge touching ranges and split a range in the middle', () => {
    const set = new RangeSet([
      [0, 2],
      [4, 6],
      [8, 10],
    ]);
    set.add(2, 4);
    expect(set.ranges()).toEqual([
      [0, 6],
      [8, 10],
    ]);
    set.remove(1, 3);
    expect(set.ranges()).toEqual([
      [0, 1],
      [3, 6],
      [8, 10],
    ]);
    set.remove(0, 100);
    expect(set.ranges()).toEqual([]);
  });
});
