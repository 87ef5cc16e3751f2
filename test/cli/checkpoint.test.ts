import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Checkpoint, MAX_CHECKPOINT_RANGES } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { type Range, RangeSet } from '../../src/cli/ranges.js';
import type { InputSpec } from '../../src/cli/readers/index.js';
import { makeTempDir } from '../support/cli/run.js';

const inputs: InputSpec[] = [{ path: 'a.csv', name: 'a.csv', format: 'csv', size: 10 }];
const target = { appId: 'app-a', baseUrl: 'http://127.0.0.1:4010' };
let temp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  temp = makeTempDir();
});
afterEach(() => temp.remove());

describe('RangeSet', () => {
  it('merges ordinals settled out of order into ranges', () => {
    const set = new RangeSet();
    set.addAll([4, 5]);
    set.addAll([0, 1, 2]);
    set.addAll([3]);
    expect(set.ranges()).toEqual([[0, 6]]);
    expect(set.complementUpTo(8).ranges()).toEqual([[6, 8]]);
    expect(set.has(5)).toBe(true);
    expect(set.has(6)).toBe(false);
  });

  it('union, difference and removal agree with a plain set of ordinals, and leave their inputs unchanged', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const randomRanges = (): Range[] =>
      Array.from({ length: random(12) }, () => {
        const start = random(80);
        return [start, start + random(15)] as Range;
      });
    const members = (set: RangeSet) => [...Array(100).keys()].filter((i) => set.has(i));
    for (let round = 0; round < 200; round++) {
      const [x, y] = [randomRanges(), randomRanges()];
      const a = new RangeSet(x);
      const b = new RangeSet(y);
      const before = [a.ranges(), b.ranges()];
      const inA = new Set(members(a));
      const inB = new Set(members(b));
      expect(members(a.union(b))).toEqual([...Array(100).keys()].filter((i) => inA.has(i) || inB.has(i)));
      expect(members(a.difference(b))).toEqual([...inA].filter((i) => !inB.has(i)));
      expect([a.ranges(), b.ranges()]).toEqual(before);
      const removed = [...inB].filter(() => random(2) === 0);
      a.removeAll(removed);
      expect(members(a)).toEqual([...inA].filter((i) => !removed.includes(i)));
    }
  });

  it('removes ordinals by splitting ranges', () => {
    const set = new RangeSet([[0, 10]]);
    set.removeAll([3, 4, 9]);
    expect(set.ranges()).toEqual([
      [0, 3],
      [5, 9],
    ]);
    expect(set.difference(new RangeSet([[0, 2]])).ranges()).toEqual([
      [2, 3],
      [5, 9],
    ]);
  });
});

describe('Checkpoint', () => {
  it('skips delivered records on resume and treats reserved but unsettled records as unknown', async () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    await first.reserve(Array.from({ length: 30 }, (_, i) => i));
    first.settle('sent', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    first.settle('failed', [10, 11]);
    first.save();
    const second = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    expect(second.decide(5)).toBe('skip-delivered');
    expect(second.decide(10)).toBe('send');
    expect(second.decide(12)).toBe('skip-unknown');
    expect(second.decide(30)).toBe('send');
    expect(second.carried()).toEqual({ delivered: 10, unknown: 18 });
  });

  it('resends unknown records only with --resend-unknown', async () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    await first.reserve([0, 1, 2, 3]);
    first.settle('unknown', [0, 1, 2, 3]);
    first.save();
    expect(Checkpoint.open(path, 'sha256:x', inputs, true, target).decide(1)).toBe('send');
  });

  it('refuses a list of more ranges than a checkpoint may hold, and reads one at the bound', () => {
    const path = temp.path('cp.json');
    Checkpoint.open(path, 'sha256:x', inputs, false, target).save();
    const file = JSON.parse(readFileSync(path, 'utf8'));
    const ranges = (count: number) => Array.from({ length: count }, (_, i) => [2 * i, 2 * i + 1]);
    writeFileSync(path, JSON.stringify({ ...file, delivered: ranges(MAX_CHECKPOINT_RANGES) }));
    expect(Checkpoint.open(path, 'sha256:x', inputs, false, target).decide(2)).toBe('skip-delivered');
    writeFileSync(path, JSON.stringify({ ...file, failed: ranges(MAX_CHECKPOINT_RANGES + 1) }));
    expect(() => Checkpoint.open(path, 'sha256:x', inputs, false, target)).toThrow(
      /"failed" holds 100001 ranges, more than the 100000/,
    );
  });

  it('refuses a checkpoint written for different input', () => {
    const path = temp.path('cp.json');
    Checkpoint.open(path, 'sha256:x', inputs, false, target).save();
    expect(() => Checkpoint.open(path, 'sha256:y', inputs, false, target)).toThrow(UsageError);
  });

  it('refuses a checkpoint another user owns, checked on the file it opens', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    first.settle('sent', [0, 1]);
    first.save();
    // As if another user had created the file between the check of its path and this read: seen
    // from a user id other than the file's, whoever runs the test.
    const owner = statSync(path).uid;
    const getuid = vi.spyOn(process, 'getuid').mockReturnValue(owner + 1);
    try {
      expect(() => Checkpoint.open(path, 'sha256:x', inputs, false, target)).toThrow(
        /--checkpoint .*cp\.json: owned by another user/,
      );
    } finally {
      getuid.mockRestore();
    }
    expect(Checkpoint.open(path, 'sha256:x', inputs, false, target).decide(0)).toBe('skip-delivered');
  });

  it('refuses a checkpoint written for another app or another base URL, naming both', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    first.settle('sent', [0, 1]);
    first.save();
    expect(() => Checkpoint.open(path, 'sha256:x', inputs, false, { ...target, appId: 'app-b' })).toThrow(
      /written for app "app-a" at http:\/\/127\.0\.0\.1:4010\/, not app "app-b"/,
    );
    expect(() =>
      Checkpoint.open(path, 'sha256:x', inputs, false, { ...target, baseUrl: 'http://127.0.0.1:4011' }),
    ).toThrow(UsageError);
    // The same service written with a trailing slash is the same target.
    expect(() =>
      Checkpoint.open(path, 'sha256:x', inputs, false, { ...target, baseUrl: 'http://127.0.0.1:4010/' }),
    ).not.toThrow();
  });

  it('lets a checkpoint that delivered nothing (every record failed) be reused for another app', async () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, { ...target, appId: 'typo' });
    await first.reserve([0, 1, 2]);
    first.settle('failed', [0, 1, 2]);
    first.save();
    expect(Checkpoint.open(path, 'sha256:x', inputs, false, target).decide(0)).toBe('send');
  });

  it('treats only the batches in flight at a kill as possibly sent, whatever order they settled in', async () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    // Three batches of 10 in flight; the second settles first, then the process dies.
    await first.reserve(Array.from({ length: 10 }, (_, i) => i));
    await first.reserve(Array.from({ length: 10 }, (_, i) => 10 + i));
    await first.reserve(Array.from({ length: 10 }, (_, i) => 20 + i));
    first.settle(
      'sent',
      Array.from({ length: 10 }, (_, i) => 10 + i),
    );
    first.save();
    const second = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    expect(second.decide(5)).toBe('skip-unknown');
    expect(second.decide(15)).toBe('skip-delivered');
    expect(second.decide(25)).toBe('skip-unknown');
    expect(second.decide(30)).toBe('send');
    expect(second.carried()).toEqual({ delivered: 10, unknown: 20 });
  });

  it('still reads the handed-off mark of older checkpoint files', () => {
    const path = temp.path('cp.json');
    Checkpoint.open(path, 'sha256:x', inputs, false, target).save();
    const file = JSON.parse(readFileSync(path, 'utf8'));
    delete file.inFlight;
    writeFileSync(path, JSON.stringify({ ...file, handedOffThrough: 20, delivered: [[0, 10]] }));
    const resumed = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    expect(resumed.decide(12)).toBe('skip-unknown');
    expect(resumed.carried()).toEqual({ delivered: 10, unknown: 10 });
  });

  it('writes the file atomically as JSON with the fingerprint', async () => {
    const path = temp.path('cp.json');
    const checkpoint = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    await checkpoint.reserve([0, 1, 2, 7]);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({
      version: 1,
      fingerprint: 'sha256:x',
      target: { appId: 'app-a', baseUrl: 'http://127.0.0.1:4010/' },
      inFlight: [
        [0, 3],
        [7, 8],
      ],
    });
  });
});
