/**
 * File reads a few at a time: the slots on their own. An upload of many files from disk, whose
 * reads are counted as they happen, is in sources.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ReadSlots } from '../../src/uploads/file-source.js';

/** A read that settles when the test says so, and records when it started. */
function heldRead(started: number[], index: number) {
  let settle!: (outcome: 'ok' | 'fail') => void;
  const done = new Promise<'ok' | 'fail'>((resolve) => {
    settle = resolve;
  });
  const read = async () => {
    started.push(index);
    if ((await done) === 'fail') throw new Error(`read ${index} failed`);
    return index;
  };
  return { read, settle };
}

/** Lets every promise that can settle do so. */
const settleAll = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('ReadSlots', () => {
  it('runs at most its size at once, and the waiting reads in the order they came', async () => {
    const slots = new ReadSlots(3);
    const started: number[] = [];
    const reads = Array.from({ length: 8 }, (_, index) => heldRead(started, index));
    const results = reads.map((read) => slots.run(read.read));
    await settleAll();
    expect(started).toEqual([0, 1, 2]);

    reads[1]?.settle('ok');
    await settleAll();
    expect(started).toEqual([0, 1, 2, 3]);

    reads[0]?.settle('ok');
    reads[2]?.settle('ok');
    await settleAll();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);

    for (const read of reads) read.settle('ok');
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('frees the slot of a read that fails, and passes its error on', async () => {
    const slots = new ReadSlots(1);
    const started: number[] = [];
    const first = heldRead(started, 0);
    const second = heldRead(started, 1);
    const failing = slots.run(first.read);
    const next = slots.run(second.read);
    await settleAll();
    expect(started).toEqual([0]);

    first.settle('fail');
    await expect(failing).rejects.toThrow('read 0 failed');
    await settleAll();
    expect(started).toEqual([0, 1]);
    second.settle('ok');
    await expect(next).resolves.toBe(1);
  });

  it('hands a freed slot to the oldest waiter, not to a read that arrives after it', async () => {
    const slots = new ReadSlots(1);
    const started: number[] = [];
    const holder = heldRead(started, 0);
    const waiter = heldRead(started, 1);
    const late = heldRead(started, 2);
    const runs = [slots.run(holder.read), slots.run(waiter.read)];
    await settleAll();
    holder.settle('ok');
    // Asked for in the same turn as the slot is freed: it still comes after the waiter.
    runs.push(slots.run(late.read));
    await settleAll();
    expect(started).toEqual([0, 1]);
    waiter.settle('ok');
    late.settle('ok');
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
  });
});
