import type { InvalidRecord } from '../errors.js';
import { type BatchAssembler, type Item, prepareRecord } from './batch-assembler.js';
import { bodyBytesFor } from './batcher.js';
import type { InputCursor } from './input-cursor.js';
import type { PendingBatch } from './report.js';
import { isSurelyValid, loadRecordSchema } from './validate.js';

/**
 * The batches of one publish run, pulled by the workers one at a time (run.ts), so that the input
 * is read no further ahead than the concurrency needs. zod is loaded here, by the first record
 * that needs it, whatever the input: an array of valid records never loads it.
 */

/** Reasons to stop reading: an abort, an error that every further batch would meet, a callback that threw. */
export type ShouldStop = () => boolean;

/**
 * Reads the input one record at a time; an async input's reads are raced against the signal.
 * With `onInvalid: 'throw'` reading stops at the first invalid record; records already read into
 * the unfinished batch are left to the caller to settle.
 */
export async function* batchesFromInput(
  input: InputCursor,
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
  signal: AbortSignal | undefined,
): AsyncGenerator<PendingBatch, void, undefined> {
  // An array is read by index: its iterator's result objects cost more than checking a record
  // while the JIT has not compiled the loop yet, which is most of a short process's publish.
  const array = input.array;
  for (let i = 0; ; i++) {
    let value: unknown;
    if (array) {
      if (i >= array.length) break;
      value = array[i];
    } else {
      // A sync input is read without an await per record: awaiting a value that is already
      // there costs a turn of the microtask queue each time.
      const next = input.isAsync ? await input.nextAsync(signal) : input.nextSync();
      if (next.done) break;
      value = next.value;
    }
    let batch = assembler.add(value);
    while (batch === 'needs-schema') {
      await loadRecordSchema();
      batch = assembler.add(value);
    }
    if (batch) yield batch;
    if (assembler.firstInvalid || shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

/** Sends what `prevalidate` kept, letting go of each record as it is handed to a batch. */
export function* batchesFromPrepared(
  items: (Item | undefined)[],
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
): Generator<PendingBatch, void, undefined> {
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as Item;
    items[i] = undefined;
    const batch = assembler.addPrepared(item);
    if (batch) yield batch;
    if (shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

/**
 * Checks a whole sync input before anything is sent (`onInvalid: 'throw'`), so that the error
 * lists every bad record. `keepItems`: keep the prepared records for sending (each checked once),
 * for an iterable that cannot be read twice; an array is read again instead, so that only the
 * invalid entries are held.
 */
export async function prevalidate(
  records: Iterable<unknown>,
  maxBatchBytes: number,
  keepItems: boolean,
): Promise<{ items: Item[]; invalid: InvalidRecord[] }> {
  const items: Item[] = [];
  const invalid: InvalidRecord[] = [];
  // Most records fit with room to spare: the bound is enough, and nothing need be built for them.
  const surelyFits = maxBatchBytes - bodyBytesFor(1, 0);
  /** Judges one record and notes the verdict; `'needs-schema'`: nothing was noted, load zod and ask again. */
  const judge = (input: unknown, index: number): 'noted' | 'needs-schema' => {
    if (!keepItems && isSurelyValid(input, surelyFits)) return 'noted';
    const prepared = prepareRecord(input, index, maxBatchBytes);
    if (prepared === 'needs-schema') return prepared;
    if (!prepared.ok) invalid.push({ index, issues: prepared.issues });
    else if (keepItems) items.push(prepared.item);
    return 'noted';
  };
  if (Array.isArray(records)) {
    // By index, as in batchesFromInput.
    for (let i = 0; i < records.length; i++) {
      while (judge(records[i], i) === 'needs-schema') await loadRecordSchema();
    }
  } else {
    let index = 0;
    for (const input of records) {
      while (judge(input, index) === 'needs-schema') await loadRecordSchema();
      index++;
    }
  }
  return { items, invalid };
}
