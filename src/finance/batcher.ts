/**
 * Chunking of serialized records into request bodies, by count and by bytes. Pure: no I/O and no
 * validation. `BatchBuilder` is what `publish` fills (through `BatchAssembler`, below); the
 * chunking property test drives it through `publish` itself and measures the bodies as sent.
 *
 * A request body is `{"records":[` + the records' JSON joined by `,` + `]}`. A batch far under
 * `maxBatchBytes` is filled from each record's size bound, computed without serializing it, and its
 * body is one `JSON.stringify`, as a hand-written script would do. Only near the limit is each
 * record serialized and measured in UTF-8 bytes, so that the body as sent stays within it; such a
 * body is joined from the per-record strings, never stringified twice.
 */
import { utf8ByteLength } from '../internal/text.js';
import type { Item } from './batch-source.js';
import type { PendingBatch } from './publisher.js';

const BODY_PREFIX = '{"records":[';
const BODY_SUFFIX = ']}';
/** Bytes of `{"records":[]}`: the body of an empty batch. */
export const EMPTY_BODY_BYTES = BODY_PREFIX.length + BODY_SUFFIX.length;

/**
 * One record on its way into a batch. Serializing and measuring every record costs as much as
 * sending it (per-record strings held until their batch settles also triple the garbage), so a
 * record carries a cheap upper bound of its JSON size, and is serialized only when that bound
 * comes near a limit.
 */
export interface BatchItem<TRecord = unknown> {
  /** Input index. */
  index: number;
  /** Wire form. */
  record: TRecord;
  /** At least the UTF-8 size of the record's JSON. */
  bound: number;
  /** The record's JSON, once serialized (see {@link utf8Length}). */
  json?: string;
  /** The exact UTF-8 length of `json`, once measured. */
  bytes?: number;
}

export interface BatchLimits {
  /** Most records in one request (the spec allows 1000). */
  batchSize: number;
  /** Most UTF-8 bytes in one request body, `{"records":[...]}` included. */
  maxBatchBytes: number;
}

declare const fitsAloneBrand: unique symbol;

/**
 * A batch item known to fit in a request body on its own. Only `sizeUp` and `fittingByBound`
 * make one, and a builder takes nothing else, so an item too large to be sent can never reach a
 * batch: the caller gets it back from `sizeUp` instead, and must report it.
 */
export type FittingItem<TRecord = unknown> = BatchItem<TRecord> & { readonly [fitsAloneBrand]: true };

/** What `sizeUp` says: the item, branded as fitting; or its exact size, too large for any request. */
export type Sized<TRecord> = { fits: true; item: FittingItem<TRecord> } | { fits: false; bytes: number };

/**
 * - `added`: the item is in the batch;
 * - `full`: the batch cannot take it; send the batch and add the item to a new one.
 */
export type AddResult = 'added' | 'full';

/** A batch item whose size bound the caller knows (see `recordJsonBound`, batch-source.ts). */
export function batchItem<TRecord>(index: number, record: TRecord, bound: number): BatchItem<TRecord> {
  return { index, record, bound, json: undefined, bytes: undefined };
}

/**
 * A batch item serialized at once; its bound is 3 bytes per UTF-16 code unit, the most UTF-8
 * takes (a surrogate pair, 2 units, is 4 bytes).
 */
export function serializeRecord<TRecord>(index: number, record: TRecord): BatchItem<TRecord> {
  const json = JSON.stringify(record);
  return { index, record, bound: json.length * 3, json, bytes: undefined };
}

/** The exact UTF-8 length of an item's JSON, serialized and measured once. */
export function utf8Length(item: BatchItem): number {
  if (item.bytes === undefined) {
    item.json ??= JSON.stringify(item.record);
    item.bytes = utf8ByteLength(item.json);
  }
  return item.bytes;
}

/** At least the UTF-8 length of an item's JSON: exact once measured. */
function utf8UpperBound(item: BatchItem): number {
  return item.bytes ?? item.bound;
}

/** Body size of a batch whose items together hold `itemBytes` bytes of JSON. */
export function bodyBytesFor(count: number, itemBytes: number): number {
  return EMPTY_BODY_BYTES + itemBytes + Math.max(0, count - 1);
}

/** Whether one item alone fits in a request body: by its bound, or else measured exactly. */
export function sizeUp<TRecord>(item: BatchItem<TRecord>, maxBatchBytes: number): Sized<TRecord> {
  if (bodyBytesFor(1, utf8UpperBound(item)) <= maxBatchBytes || bodyBytesFor(1, utf8Length(item)) <= maxBatchBytes) {
    return { fits: true, item: item as FittingItem<TRecord> };
  }
  return { fits: false, bytes: utf8Length(item) };
}

/**
 * The common case of `sizeUp`, with nothing built but the item: a fitting item when the record's
 * size bound alone shows that it fits in a request body, else undefined (ask `sizeUp`).
 */
export function fittingByBound<TRecord>(
  index: number,
  record: TRecord,
  bound: number,
  maxBatchBytes: number,
): FittingItem<TRecord> | undefined {
  if (bodyBytesFor(1, bound) > maxBatchBytes) return undefined;
  return batchItem(index, record, bound) as FittingItem<TRecord>;
}

/** The exact request body for a batch: one `JSON.stringify`, unless its records were serialized already. */
export function buildBody(items: readonly BatchItem[]): string {
  if (!items.some((item) => item.json !== undefined)) {
    return JSON.stringify({ records: items.map((item) => item.record) });
  }
  let body = BODY_PREFIX;
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as BatchItem;
    if (i > 0) body += ',';
    body += item.json ?? JSON.stringify(item.record);
  }
  return body + BODY_SUFFIX;
}

/** One batch being filled. `tryAdd` reports instead of throwing, so callers decide what a full batch means. */
export class BatchBuilder<TRecord> {
  #items: FittingItem<TRecord>[] = [];
  /** At least the UTF-8 bytes of the items' JSON; exact once `#exact` is set. */
  #itemBytes = 0;
  /** Every item is measured, so `#itemBytes` is exact. */
  #exact = true;

  readonly #limits: BatchLimits;

  constructor(limits: BatchLimits) {
    this.#limits = limits;
  }

  get count(): number {
    return this.#items.length;
  }

  /** UTF-8 size of the body this batch would be sent as. */
  get bodyBytes(): number {
    this.#measure();
    return bodyBytesFor(this.#items.length, this.#itemBytes);
  }

  /** Adds the item, or says `full`; an empty batch always takes a fitting item. */
  tryAdd(item: FittingItem<TRecord>): AddResult {
    const { batchSize, maxBatchBytes } = this.#limits;
    const count = this.#items.length;
    if (count >= batchSize) return 'full';
    const upper = utf8UpperBound(item);
    if (bodyBytesFor(count + 1, this.#itemBytes + upper) <= maxBatchBytes) {
      this.#push(item, upper);
      return 'added';
    }
    // Near the limit by the bound: count exactly (once per item) before calling the batch full.
    this.#measure();
    const bytes = utf8Length(item);
    if (bodyBytesFor(count + 1, this.#itemBytes + bytes) > maxBatchBytes) return 'full';
    this.#push(item, bytes);
    return 'added';
  }

  /** Hands over the items and starts an empty batch. */
  take(): FittingItem<TRecord>[] {
    const items = this.#items;
    this.#items = [];
    this.#itemBytes = 0;
    this.#exact = true;
    return items;
  }

  #push(item: FittingItem<TRecord>, bytes: number): void {
    this.#items.push(item);
    this.#itemBytes += bytes;
    if (item.bytes === undefined) this.#exact = false;
  }

  #measure(): void {
    if (this.#exact) return;
    let total = 0;
    for (const item of this.#items) total += utf8Length(item);
    this.#itemBytes = total;
    this.#exact = true;
  }
}

export interface AssemblerOptions {
  /**
   * Batches keep the input index of each record (someone wants them: `onBatchSending`, `onBatchSettled`). Records
   * are never kept once the body is built, so they die young: records held by every batch in
   * flight lived long enough to be promoted, and filled V8's old generation with garbage.
   */
  keepIndexes: boolean;
}

/**
 * Fills batches by count and bytes (`BatchBuilder`, above) with records already checked and sized
 * up (batch-source.ts), and hands each batch over, serialized, as soon as it is complete. What is sent
 * is the wire record made by the check, never the input object itself, so nothing the caller's
 * code does after the check (a getter, a Proxy, a later change to the object) reaches the body.
 */
export class BatchAssembler {
  readonly #builder: BatchBuilder<Item['record']>;
  readonly #limits: BatchLimits;
  readonly #options: AssemblerOptions;
  #nextBatch = 0;

  constructor(limits: BatchLimits, options: AssemblerOptions) {
    this.#builder = new BatchBuilder(limits);
    this.#limits = limits;
    this.#options = options;
  }

  /** Adds one checked record: the batch it completed, if any. */
  add(item: Item): PendingBatch | undefined {
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

  /** The last, partly filled batch. */
  flush(): PendingBatch | undefined {
    return this.#builder.count > 0 ? this.#take() : undefined;
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
