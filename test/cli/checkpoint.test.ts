import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpoint } from '../../src/cli/checkpoint.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { RangeSet } from '../../src/cli/ranges.js';
import type { InputSpec } from '../../src/cli/readers/index.js';
import { makeTempDir } from './helpers/run.js';

const inputs: InputSpec[] = [{ path: 'a.csv', name: 'a.csv', format: 'csv', size: 10 }];
const target = { appId: 'app-a', baseUrl: 'http://127.0.0.1:4010' };
let temp = makeTempDir();
afterEach(() => {
  temp.remove();
  temp = makeTempDir();
});

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
});

describe('Checkpoint', () => {
  it('skips delivered records on resume and treats handed-off but unsettled records as unknown', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    first.handOffThrough(30);
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

  it('resends unknown records only with --resend-unknown', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    first.handOffThrough(4);
    first.settle('unknown', [0, 1, 2, 3]);
    first.save();
    expect(Checkpoint.open(path, 'sha256:x', inputs, true, target).decide(1)).toBe('send');
  });

  it('refuses a checkpoint written for different input', () => {
    const path = temp.path('cp.json');
    Checkpoint.open(path, 'sha256:x', inputs, false, target).save();
    expect(() => Checkpoint.open(path, 'sha256:y', inputs, false, target)).toThrow(UsageError);
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

  it('lets a checkpoint that delivered nothing (every record failed) be reused for another app', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, { ...target, appId: 'typo' });
    first.settle('failed', [0, 1, 2]);
    first.handedOffExactly(3);
    first.save();
    expect(Checkpoint.open(path, 'sha256:x', inputs, false, target).decide(0)).toBe('send');
  });

  it('after a clean stop, treats only records really handed over as possibly sent', () => {
    const path = temp.path('cp.json');
    const first = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    first.handOffThrough(40); // reserved ahead of the sender
    first.settle('sent', [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    first.handedOffExactly(10);
    first.save();
    const second = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    expect(second.decide(10)).toBe('send');
    expect(second.carried()).toEqual({ delivered: 10, unknown: 0 });
  });

  it('writes the file atomically as JSON with the fingerprint', () => {
    const path = temp.path('cp.json');
    const checkpoint = Checkpoint.open(path, 'sha256:x', inputs, false, target);
    checkpoint.handOffThrough(1000);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({
      version: 1,
      fingerprint: 'sha256:x',
      target: { appId: 'app-a', baseUrl: 'http://127.0.0.1:4010/' },
      handedOffThrough: 1000,
    });
  });
});
