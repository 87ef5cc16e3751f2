import type { InvalidRecord, RecordIssue } from '../errors.js';
import { BatchBuilder, type BatchLimits, fitsAlone, type SerializedRecord, serializeRecord } from './batcher.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import { type FinanceRecord, validateFinanceRecord } from './schema.js';

/**
 * Turns input records into batches: validate (one zod parse), serialize (one JSON.stringify),
 * measure, and fill batches by count and bytes. Records are pulled only when a worker asks for
 * the next batch, so the input is read no further ahead than the concurrency needs.
 */

type Serialized = SerializedRecord<FinanceRecord>;

/** A record that cannot be sent alone within `maxBatchBytes` is reported invalid, never dropped. */
function tooLargeIssue(item: Serialized, maxBatchBytes: number): RecordIssue {
  return {
    path: '',
    message: `record is ${item.bytes} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`,
  };
}

/** Validates and serializes one record: the serialized record, or the issues that make it invalid. */
function prepare(input: unknown, index: number, maxBatchBytes: number): Serialized | RecordIssue[] {
  const result = validateFinanceRecord(input);
  if (!result.ok) return result.issues;
  const item = serializeRecord(index, result.record);
  return fitsAlone(item, maxBatchBytes) ? item : [tooLargeIssue(item, maxBatchBytes)];
}

/** Fills batches one record at a time and says when one is complete. */
export class BatchAssembler {
  readonly #builder: BatchBuilder<Serialized>;
  #nextBatch = 0;
  #nextRecord = 0;
  /** Set when `stopAtInvalid` met an invalid record: reading stops there. */
  firstInvalid: InvalidRecord | undefined;

  constructor(
    private readonly limits: BatchLimits,
    private readonly report: ReportBuilder,
    private readonly stopAtInvalid: boolean,
  ) {
    this.#builder = new BatchBuilder(limits);
  }

  /** Reads one input record; returns the batch it completed, if any. */
  add(input: unknown): PendingBatch | undefined {
    const index = this.#nextRecord++;
    this.report.read();
    const prepared = prepare(input, index, this.limits.maxBatchBytes);
    if (Array.isArray(prepared)) {
      const entry = this.report.addInvalid(index, prepared);
      if (this.stopAtInvalid) this.firstInvalid ??= entry;
      return undefined;
    }
    return this.addSerialized(prepared);
  }

  /** Reads one record that `prevalidate` validated and serialized already. */
  addPrepared(item: Serialized): PendingBatch | undefined {
    this.#nextRecord++;
    this.report.read();
    return this.addSerialized(item);
  }

  addSerialized(item: Serialized): PendingBatch | undefined {
    if (this.#builder.tryAdd(item) === 'added') return undefined;
    const full = this.#take();
    this.#builder.tryAdd(item);
    return full;
  }

  /** The last, partly filled batch. */
  flush(): PendingBatch | undefined {
    return this.#builder.count > 0 ? this.#take() : undefined;
  }

  #take(): PendingBatch {
    return { index: this.#nextBatch++, items: this.#builder.take() };
  }
}

/** Reasons to stop reading: an abort, an error that every further batch would meet, a callback that threw. */
export type ShouldStop = () => boolean;

export function* batchesFromIterable(
  records: Iterable<unknown>,
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
): Generator<PendingBatch, void, undefined> {
  for (const input of records) {
    const batch = assembler.add(input);
    if (batch) yield batch;
    if (shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

/**
 * Async inputs are read one record at a time. With `onInvalid: 'throw'` reading stops at the first
 * invalid record; records already read into the unfinished batch are left to the caller to settle.
 */
export async function* batchesFromAsyncIterable(
  records: AsyncIterable<unknown>,
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
): AsyncGenerator<PendingBatch, void, undefined> {
  for await (const input of records) {
    const batch = assembler.add(input);
    if (batch) yield batch;
    if (assembler.firstInvalid || shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

export function* batchesFromPrepared(
  items: readonly Serialized[],
  assembler: BatchAssembler,
  shouldStop: ShouldStop,
): Generator<PendingBatch, void, undefined> {
  for (const item of items) {
    const batch = assembler.addPrepared(item);
    if (batch) yield batch;
    if (shouldStop()) return;
  }
  const last = assembler.flush();
  if (last) yield last;
}

/**
 * Validates a whole sync input before anything is sent (`onInvalid: 'throw'`), so that the error
 * lists every bad record. The serialized records are kept for sending: each is stringified once.
 */
export function prevalidate(
  records: Iterable<unknown>,
  maxBatchBytes: number,
): { items: Serialized[]; invalid: InvalidRecord[] } {
  const items: Serialized[] = [];
  const invalid: InvalidRecord[] = [];
  let index = 0;
  for (const input of records) {
    const prepared = prepare(input, index, maxBatchBytes);
    if (Array.isArray(prepared)) invalid.push({ index, issues: prepared });
    else items.push(prepared);
    index++;
  }
  return { items, invalid };
}
