/**
 * The checked records of one publish run, batch by batch: the caller's input read one record at a
 * time (`InputCursor`), each record checked and counted (`BatchSource`), the valid ones handed to
 * the assembler (batcher.ts).
 */
import type { InvalidRecord } from '../errors.js';
import { abortErrorFrom, onAbort } from '../internal/waits.js';
import type { BatchAssembler } from './batcher.js';
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
  /** Set when the input was read to its end, rather than reading being stopped. */
  readToEnd = false;

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
    this.readToEnd = true;
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
    this.readToEnd = true;
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

/**
 * The caller's iterator, read one record at a time and closed exactly once however publishing
 * ends, so that a database cursor or a file handle behind it is released (as `for...of` does on
 * `break`). Reads are pulled by hand rather than with `for await`, so that an abort does not wait
 * for an input that is slow, or never yields.
 */
export class InputCursor {
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>;
  /** Done, threw, or closed: nothing left to close. */
  #finished = false;
  /** An async read still running (left behind by an abort). */
  #pending: Promise<unknown> | undefined;
  /**
   * One abort listener serves every read (a listener added and removed per record cost as much
   * as the rest of reading it); it rejects the read that is waiting, if any. Removed by `close`.
   */
  #abort: { signal: AbortSignal; stopListening: () => void } | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;

  /** An async iterable's iterator: reads are awaited (`nextAsync`); otherwise `nextSync`. */
  readonly isAsync: boolean;
  /** The input itself when it is an array, which may be read by index instead (nothing to close). */
  readonly array: readonly unknown[] | undefined;

  constructor(records: Iterable<unknown> | AsyncIterable<unknown>) {
    this.array = Array.isArray(records) ? records : undefined;
    const openAsync = (records as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
    this.isAsync = typeof openAsync === 'function';
    this.#iterator = this.isAsync
      ? (openAsync as () => AsyncIterator<unknown>).call(records)
      : (records as Iterable<unknown>)[Symbol.iterator]();
  }

  /** The next record of a sync input. */
  nextSync(): IteratorResult<unknown> {
    try {
      const result = (this.#iterator as Iterator<unknown>).next();
      if (result.done) this.#finished = true;
      return result;
    } catch (error) {
      this.#finished = true; // an iterator that threw is done (ECMA-262: no return() after a throw)
      throw error;
    }
  }

  /** The next record of an async input; rejects with AbortError as soon as the signal fires. */
  nextAsync(signal: AbortSignal | undefined): Promise<IteratorResult<unknown>> {
    let read: Promise<IteratorResult<unknown>>;
    try {
      read = Promise.resolve(this.#iterator.next());
    } catch (error) {
      this.#finished = true;
      return Promise.reject(error);
    }
    // Noted before anyone else awaits the read, so that the notes are up to date when they resume.
    this.#pending = read;
    read.then(this.#onRead, this.#onReadFailed);
    // Without a signal, the iterator's own promise: no promise of ours per record.
    if (!signal) return read;
    if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
    if (this.#abort?.signal !== signal) {
      this.#stopListening();
      const stopListening = onAbort(signal, () => this.#rejectWaiting?.(abortErrorFrom(signal)));
      this.#abort = { signal, stopListening };
    }
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.#rejectWaiting = reject;
      read.then(
        (result) => {
          this.#rejectWaiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          this.#rejectWaiting = undefined;
          reject(error);
        },
      );
    });
  }

  /*
   * What a read's end tells: nothing pending any more (one read at a time: reading stops at an
   * abort), and the input finished when it ended or threw. Made once, not per read.
   */
  readonly #onRead = (result: IteratorResult<unknown>): void => {
    this.#pending = undefined;
    if (result.done) this.#finished = true;
  };

  readonly #onReadFailed = (): void => {
    this.#pending = undefined;
    this.#finished = true;
  };

  #stopListening(): void {
    this.#abort?.stopListening();
    this.#abort = undefined;
  }

  /**
   * Calls the iterator's `return()` once, unless it finished by itself. When an abort left a read
   * pending, `return()` is called but not awaited: an async generator runs it only after that
   * read, which may never come, while a hand-written iterator may use it to cancel the read.
   * An error from `return()` goes to `onError`; it never replaces the outcome of the run.
   */
  async close(onError: (error: unknown) => void): Promise<void> {
    this.#stopListening();
    if (this.#finished) return;
    this.#finished = true;
    const iterator = this.#iterator as { return?: () => unknown };
    if (typeof iterator.return !== 'function') return;
    try {
      const closing = Promise.resolve(iterator.return());
      if (this.#pending) closing.catch(onError);
      else await closing;
    } catch (error) {
      onError(error);
    }
  }
}
