import type { InvalidRecord } from '../errors.js';
import type { BatchAssembler } from './batch-assembler.js';
import type { InputCursor } from './input-cursor.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import { type Item, type PreparedRecord, prepareRecord } from './validate.js';

/**
 * The batches of one publish run, pulled by the workers one at a time (run.ts), so that the input
 * is read no further ahead than the concurrency needs. Each record read is checked (validate.ts)
 * and counted: a valid one goes to the assembler, which fills batches; an invalid one goes to the
 * report.
 */

/** Reasons to stop reading: an abort, an error that every further batch would meet, a callback that threw. */
export type ShouldStop = () => boolean;

export interface BatchSourceOptions {
  /** Most UTF-8 bytes in one request body: a record too large to be sent alone is invalid. */
  maxBatchBytes: number;
  /** Reading stops at the first invalid record (`onInvalid: 'throw'`). */
  stopAtInvalid: boolean;
}

export class BatchSource {
  readonly #assembler: BatchAssembler;
  readonly #report: ReportBuilder;
  readonly #options: BatchSourceOptions;
  /** The input index of the next record read. */
  #nextRecord = 0;
  /** Set when `stopAtInvalid` met an invalid record: reading stopped there. */
  firstInvalid: InvalidRecord | undefined;

  constructor(assembler: BatchAssembler, report: ReportBuilder, options: BatchSourceOptions) {
    this.#assembler = assembler;
    this.#report = report;
    this.#options = options;
  }

  /**
   * Reads the input one record at a time; an async input's reads are raced against the signal.
   * With `stopAtInvalid` reading stops at the first invalid record; records already read into
   * the unfinished batch are left to the caller to settle (`BatchAssembler.flush`).
   */
  async *fromInput(
    input: InputCursor,
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
      let prepared = prepareRecord(value, this.#nextRecord, this.#options.maxBatchBytes);
      if (prepared instanceof Promise) prepared = await prepared;
      const batch = this.#take(prepared);
      if (batch) yield batch;
      if (this.firstInvalid || shouldStop()) return;
    }
    const last = this.#assembler.flush();
    if (last) yield last;
  }

  /** Sends what `prevalidate` kept, letting go of each record as it is handed to a batch. */
  *fromPrepared(items: (Item | undefined)[], shouldStop: ShouldStop): Generator<PendingBatch, void, undefined> {
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as Item;
      items[i] = undefined;
      const batch = this.#take({ ok: true, item });
      if (batch) yield batch;
      if (shouldStop()) return;
    }
    const last = this.#assembler.flush();
    if (last) yield last;
  }

  /** Counts one record read: into a batch (the batch it completed, if any), or into the report as invalid. */
  #take(prepared: PreparedRecord): PendingBatch | undefined {
    const index = this.#nextRecord++;
    this.#report.read();
    if (prepared.ok) return this.#assembler.add(prepared.item);
    const entry = this.#report.addInvalid(index, prepared.issues);
    if (this.#options.stopAtInvalid) this.firstInvalid ??= entry;
    return undefined;
  }
}
