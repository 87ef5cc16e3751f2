import type { InvalidRecord, RecordIssue } from '../errors.js';
import { abortErrorFrom } from '../http/delay.js';
import {
  BatchBuilder,
  type BatchItem,
  type BatchLimits,
  batchItem,
  bodyBytesFor,
  buildBody,
  fitsAlone,
  utf8Length,
} from './batcher.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import type { FinanceRecord } from './schema.js';
import {
  inspectFinanceRecordFast,
  loadRecordSchema,
  objectPrototypeIsClean,
  parseFinanceRecordFast,
  validateWithSchema,
} from './validate.js';

/**
 * Turns input records into batches: validate (validate.ts: a fast path, zod for the rest), bound
 * the JSON size, and fill batches by count and bytes (batcher.ts serializes per record only near
 * `maxBatchBytes`). Records are pulled only when a worker asks for
 * the next batch, so the input is read no further ahead than the concurrency needs.
 */

type Item = BatchItem<FinanceRecord>;

/** A record that cannot be sent alone within `maxBatchBytes` is reported invalid, never dropped. */
function tooLargeIssue(item: Item, maxBatchBytes: number): RecordIssue {
  return {
    path: '',
    message: `record is ${utf8Length(item)} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`,
  };
}

/**
 * Returned for a record that only zod can judge while zod is not loaded (validate.ts loads it on
 * first need): nothing was read; load it, then offer the record again. Only an async input meets
 * it; sync inputs load zod before their first record, since they are read in synchronous steps.
 */
const SCHEMA_NEEDED: unique symbol = Symbol('schema needed');

/**
 * Validates one record: the batch item, or the issues that make it invalid. `asIs`: a valid record
 * that is its own wire form (see `inspectFinanceRecordFast`) goes into the batch itself, not a
 * copy; only for a caller whose records cannot change before the batch body is built (below).
 */
function prepare(
  input: unknown,
  index: number,
  maxBatchBytes: number,
  asIs: boolean,
): Item | RecordIssue[] | typeof SCHEMA_NEEDED {
  let record: FinanceRecord | undefined;
  let bound = 0;
  if (asIs) {
    const verdict = inspectFinanceRecordFast(input);
    if (verdict > 0) {
      record = input as FinanceRecord;
      bound = verdict;
    } else if (verdict < 0) {
      record = parseFinanceRecordFast(input);
    }
  } else {
    record = parseFinanceRecordFast(input);
  }
  if (record === undefined) {
    // The fast path has spoken: zod alone decides the rest (and reads each field once more, as zod).
    const result = validateWithSchema(input);
    if (result === undefined) return SCHEMA_NEEDED;
    if (!result.ok) return result.issues;
    record = result.record;
  }
  const item = batchItem(index, record, bound || jsonBytesUpperBound(record));
  return fitsAlone(item, maxBatchBytes) ? item : [tooLargeIssue(item, maxBatchBytes)];
}

/**
 * Only checks one record: its issues, or `undefined` when it is valid and fits in a request alone.
 * Allocates nothing for a valid record the fast path accepts (the first pass over an array).
 */
function check(input: unknown, index: number, maxBatchBytes: number): RecordIssue[] | undefined {
  const verdict = inspectFinanceRecordFast(input);
  if (verdict !== 0 && bodyBytesFor(1, Math.abs(verdict)) <= maxBatchBytes) return undefined;
  const prepared = loadedPrepare(input, index, maxBatchBytes, false);
  return Array.isArray(prepared) ? prepared : undefined;
}

/** `prepare` for sync inputs, which load zod before their first record. */
function loadedPrepare(input: unknown, index: number, maxBatchBytes: number, asIs: boolean): Item | RecordIssue[] {
  const prepared = prepare(input, index, maxBatchBytes, asIs);
  if (prepared === SCHEMA_NEEDED) throw new Error('push-api-client: zod must be loaded before a sync input is read');
  return prepared;
}

/**
 * At least the UTF-8 size of a record's JSON, without serializing it: a string of n code units
 * is at most 6n + 2 bytes as JSON (`\uXXXX` escapes), a number at most 25 characters, and a key
 * with its quotes, colon and comma at most 21.
 */
function jsonBytesUpperBound(record: FinanceRecord): number {
  let bytes = 2;
  for (const key in record) {
    const value = record[key as keyof FinanceRecord];
    bytes += 21 + (typeof value === 'string' ? 6 * value.length + 2 : 25);
  }
  return bytes;
}

export interface AssemblerOptions {
  /** Reading stops at the first invalid record (`onInvalid: 'throw'`). */
  stopAtInvalid: boolean;
  /**
   * Batches keep the input index of each record (someone wants them: `onBatchSettled`). Records
   * are never kept once the body is built, so they die young: records held by every batch in
   * flight lived long enough to be promoted, and filled V8's old generation with garbage.
   */
  keepIndexes: boolean;
  /**
   * Valid records may be sent as they are rather than copied: the input is an array, whose
   * records no caller code can replace or change between being validated and being serialized,
   * because a batch is read, validated and serialized in one synchronous step. An iterable runs
   * the caller's code between records (it may yield one object, changed each time), so its
   * records are copied.
   */
  sendAsIs: boolean;
}

/**
 * Fills batches one record at a time and says when one is complete. A complete batch is
 * serialized at once, in the same synchronous step that read and validated its records (a batch
 * full by count is handed over with its last record, not with the next one), so the body is what
 * was validated; a record carried into the next batch because the bytes limit was reached was
 * serialized when it was measured.
 */
export class BatchAssembler {
  readonly #builder: BatchBuilder<Item>;
  #nextBatch = 0;
  #nextRecord = 0;
  /** Send valid records as they are, for this batch: `sendAsIs`, and `Object.prototype` is clean. */
  #asIs: boolean;
  /** Set when `stopAtInvalid` met an invalid record: reading stops there. */
  firstInvalid: InvalidRecord | undefined;

  constructor(
    private readonly limits: BatchLimits,
    private readonly report: ReportBuilder,
    private readonly options: AssemblerOptions,
  ) {
    this.#builder = new BatchBuilder(limits);
    this.#asIs = options.sendAsIs && objectPrototypeIsClean();
  }

  /** Reads one input record; returns the batch it completed, if any, or `SCHEMA_NEEDED` (nothing read). */
  add(input: unknown): PendingBatch | undefined | typeof SCHEMA_NEEDED {
    const index = this.#nextRecord;
    const prepared = prepare(input, index, this.limits.maxBatchBytes, this.#asIs);
    if (prepared === SCHEMA_NEEDED) return SCHEMA_NEEDED;
    this.#nextRecord++;
    this.report.read();
    if (Array.isArray(prepared)) {
      const entry = this.report.addInvalid(index, prepared);
      if (this.options.stopAtInvalid) this.firstInvalid ??= entry;
      return undefined;
    }
    return this.addItem(prepared);
  }

  /** Reads one record that `prevalidate` validated already. */
  addPrepared(item: Item): PendingBatch | undefined {
    this.#nextRecord++;
    this.report.read();
    return this.addItem(item);
  }

  addItem(item: Item): PendingBatch | undefined {
    if (this.#builder.tryAdd(item) === 'added') {
      return this.#builder.count >= this.limits.batchSize ? this.#take() : undefined;
    }
    const full = this.#take();
    this.#builder.tryAdd(item);
    return full;
  }

  /** The last, partly filled batch. */
  flush(): PendingBatch | undefined {
    return this.#builder.count > 0 ? this.#take() : undefined;
  }

  #take(): PendingBatch {
    const items = this.#builder.take();
    const batch: PendingBatch = {
      index: this.#nextBatch++,
      firstRecord: items[0]?.index ?? -1,
      lastRecord: items[items.length - 1]?.index ?? -1,
      recordCount: items.length,
      body: buildBody(items),
      indexes: this.options.keepIndexes ? items.map((item) => item.index) : [],
    };
    // Checked once per batch: cheap, and no caller code runs while an array's batch is read.
    if (this.options.sendAsIs) this.#asIs = objectPrototypeIsClean();
    return batch;
  }
}

/** Reasons to stop reading: an abort, an error that every further batch would meet, a callback that threw. */
export type ShouldStop = () => boolean;

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
  #abort: { signal: AbortSignal; listener: () => void } | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;

  constructor(records: Iterable<unknown> | AsyncIterable<unknown>) {
    const openAsync = (records as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
    this.#iterator =
      typeof openAsync === 'function' ? openAsync.call(records) : (records as Iterable<unknown>)[Symbol.iterator]();
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
    this.#pending = read;
    const settled = (finished: boolean) => {
      if (this.#pending === read) this.#pending = undefined;
      if (finished) this.#finished = true;
    };
    if (!signal) {
      read.then(
        (result) => settled(result.done === true),
        () => settled(true),
      );
      return read;
    }
    if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
    if (this.#abort?.signal !== signal) {
      this.#stopListening();
      const listener = () => this.#rejectWaiting?.(abortErrorFrom(signal));
      signal.addEventListener('abort', listener, { once: true });
      this.#abort = { signal, listener };
    }
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.#rejectWaiting = reject;
      read.then(
        (result) => {
          settled(result.done === true);
          this.#rejectWaiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          settled(true);
          this.#rejectWaiting = undefined;
          reject(error);
        },
      );
    });
  }

  #stopListening(): void {
    this.#abort?.signal.removeEventListener('abort', this.#abort.listener);
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

export function* batchesFromIterable(
  input: InputCursor,
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
): Generator<PendingBatch, void, undefined> {
  for (let next = input.nextSync(); !next.done; next = input.nextSync()) {
    const batch = assembler.add(next.value);
    if (batch === SCHEMA_NEEDED) throw new Error('push-api-client: zod must be loaded before a sync input is read');
    if (batch) yield batch;
    if (assembler.firstInvalid || shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

/**
 * Async inputs are read one record at a time, each read raced against the signal. With
 * `onInvalid: 'throw'` reading stops at the first invalid record; records already read into the
 * unfinished batch are left to the caller to settle.
 */
export async function* batchesFromAsyncIterable(
  input: InputCursor,
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
  signal: AbortSignal | undefined,
): AsyncGenerator<PendingBatch, void, undefined> {
  for (let next = await input.nextAsync(signal); !next.done; next = await input.nextAsync(signal)) {
    let batch = assembler.add(next.value);
    if (batch === SCHEMA_NEEDED) {
      await loadRecordSchema();
      batch = assembler.add(next.value);
      if (batch === SCHEMA_NEEDED) throw new Error('push-api-client: zod did not load');
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
 * Validates a whole sync input before anything is sent (`onInvalid: 'throw'`), so that the error
 * lists every bad record. `keepItems`: keep the validated records for sending (each validated
 * once), for an iterable that cannot be read twice; an array is read again instead, so that only
 * the invalid entries are held.
 */
export function prevalidate(
  records: Iterable<unknown>,
  maxBatchBytes: number,
  keepItems: boolean,
): { items: Item[]; invalid: InvalidRecord[] } {
  const items: Item[] = [];
  const invalid: InvalidRecord[] = [];
  let index = 0;
  for (const input of records) {
    if (keepItems) {
      const prepared = loadedPrepare(input, index, maxBatchBytes, false);
      if (Array.isArray(prepared)) invalid.push({ index, issues: prepared });
      else items.push(prepared);
    } else {
      const issues = check(input, index, maxBatchBytes);
      if (issues) invalid.push({ index, issues });
    }
    index++;
  }
  return { items, invalid };
}
