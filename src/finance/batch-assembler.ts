import type { InvalidRecord, RecordIssue } from '../errors.js';
import {
  BatchBuilder,
  type BatchLimits,
  batchItem,
  buildBody,
  type FittingItem,
  fittingByBound,
  sizeUp,
} from './batcher.js';
import { recordJsonBound } from './json-bound.js';
import { parseFinanceRecordFast } from './record-fast-path.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import type { FinanceRecord } from './schema.js';
import { checkRecord, checkWithSchema, type RecordCheck } from './validate.js';

/**
 * Turns input records into batches: check each record (validate.ts), size it up, and fill
 * batches by count and bytes (batcher.ts). What is sent is the record's wire form made by the
 * check, never the input object itself, so nothing the caller's code does after the check (a
 * getter, a Proxy, a later change to the object) reaches the request body.
 */

export type Item = FittingItem<FinanceRecord>;

/** A record made ready for a batch: an item that fits in a request alone, or why it cannot be sent. */
export type PreparedRecord = { ok: true; item: Item } | { ok: false; issues: RecordIssue[] } | 'needs-schema';

/** Checks and sizes up one record; `'needs-schema'` as in `checkRecord` (nothing was decided). */
export function prepareRecord(input: unknown, index: number, maxBatchBytes: number): PreparedRecord {
  return prepareChecked(checkRecord(input), index, maxBatchBytes);
}

function prepareChecked(check: RecordCheck, index: number, maxBatchBytes: number): PreparedRecord {
  if (check === 'needs-schema' || !check.ok) return check;
  const sized = sizeUp(batchItem(index, check.record, check.bound), maxBatchBytes);
  if (sized.fits) return { ok: true, item: sized.item };
  // Reported invalid, never dropped: no request can carry it.
  const message = `record is ${sized.bytes} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`;
  return { ok: false, issues: [{ path: '', message }] };
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
}

/** Fills batches one record at a time and hands each over, serialized, as soon as it is complete. */
export class BatchAssembler {
  readonly #builder: BatchBuilder<FinanceRecord>;
  readonly #limits: BatchLimits;
  readonly #report: ReportBuilder;
  readonly #options: AssemblerOptions;
  #nextBatch = 0;
  #nextRecord = 0;
  /** Set when `stopAtInvalid` met an invalid record: reading stops there. */
  firstInvalid: InvalidRecord | undefined;

  constructor(limits: BatchLimits, report: ReportBuilder, options: AssemblerOptions) {
    this.#builder = new BatchBuilder(limits);
    this.#limits = limits;
    this.#report = report;
    this.#options = options;
  }

  /**
   * Reads one input record: the batch it completed, if any. `'needs-schema'`: the record was not
   * read (see `checkRecord`); load the schema, then offer the same record again.
   */
  add(input: unknown): PendingBatch | undefined | 'needs-schema' {
    const index = this.#nextRecord;
    const { maxBatchBytes } = this.#limits;
    // Most records are accepted by the fast path and far from any size limit: nothing is built for
    // them but the wire record and its batch item (this runs once per record). A record near the
    // limit is measured; any other goes to zod, which explains a refusal.
    const fast = parseFinanceRecordFast(input);
    let prepared: PreparedRecord;
    if (fast !== undefined) {
      const bound = recordJsonBound(fast);
      const item = fittingByBound(index, fast, bound, maxBatchBytes);
      if (item) {
        this.#nextRecord++;
        this.#report.read();
        return this.#addItem(item);
      }
      prepared = prepareChecked({ ok: true, record: fast, bound }, index, maxBatchBytes);
    } else {
      prepared = prepareChecked(checkWithSchema(input), index, maxBatchBytes);
    }
    if (prepared === 'needs-schema') return prepared;
    this.#nextRecord++;
    this.#report.read();
    if (prepared.ok) return this.#addItem(prepared.item);
    const entry = this.#report.addInvalid(index, prepared.issues);
    if (this.#options.stopAtInvalid) this.firstInvalid ??= entry;
    return undefined;
  }

  /** Reads one record that `prevalidate` prepared already. */
  addPrepared(item: Item): PendingBatch | undefined {
    this.#nextRecord++;
    this.#report.read();
    return this.#addItem(item);
  }

  /** The last, partly filled batch. */
  flush(): PendingBatch | undefined {
    return this.#builder.count > 0 ? this.#take() : undefined;
  }

  #addItem(item: Item): PendingBatch | undefined {
    const result = this.#builder.tryAdd(item);
    switch (result) {
      case 'added':
        return this.#builder.count >= this.#limits.batchSize ? this.#take() : undefined;
      case 'full': {
        const full = this.#take();
        // An empty batch always takes an item that fits alone; anything else would lose it.
        if (this.#builder.tryAdd(item) !== 'added') throw new Error('push-api-client: an empty batch refused a record');
        return full;
      }
      default:
        return unreachable(result);
    }
  }

  #take(): PendingBatch {
    const items = this.#builder.take();
    return {
      index: this.#nextBatch++,
      firstRecord: items[0]?.index ?? -1,
      lastRecord: items[items.length - 1]?.index ?? -1,
      recordCount: items.length,
      body: buildBody(items),
      indexes: this.#options.keepIndexes ? items.map((item) => item.index) : [],
    };
  }
}

/** A case the type system says cannot happen: a new `AddResult` must be handled above before this compiles. */
function unreachable(value: never): never {
  throw new Error(`push-api-client: unexpected batch result ${String(value)}`);
}
