/**
 * Chunking of serialized records into request bodies, by count and by bytes. Pure: no I/O and no
 * validation. `BatchBuilder` is what `publish` fills (through `BatchAssembler`, source.ts); the
 * chunking property test drives it through `publish` itself and measures the bodies as sent.
 *
 * A request body is `{"records":[` + the records' JSON joined by `,` + `]}`. Its size is known
 * exactly from each record's UTF-8 length, so the body is built once, from the per-record strings,
 * and never stringified twice.
 */

export const BODY_PREFIX = '{"records":[';
export const BODY_SUFFIX = ']}';
/** Bytes of `{"records":[]}`: the body of an empty batch. */
export const EMPTY_BODY_BYTES = BODY_PREFIX.length + BODY_SUFFIX.length;

/** Anything that knows its serialized size in UTF-8 bytes. */
export interface Sized {
  bytes: number;
}

/** A record serialized once: its input index, wire form, JSON text and that text's UTF-8 length. */
export interface SerializedRecord<TRecord = unknown> extends Sized {
  index: number;
  record: TRecord;
  json: string;
}

export interface BatchLimits {
  /** Most records in one request (the spec allows 1000). */
  batchSize: number;
  /** Most UTF-8 bytes in one request body, `{"records":[...]}` included. */
  maxBatchBytes: number;
}

/**
 * - `added`: the item is in the batch;
 * - `full`: the batch cannot take it; send the batch and add the item to a new one;
 * - `too-large`: even alone the item exceeds `maxBatchBytes`; it can never be sent.
 */
export type AddResult = 'added' | 'full' | 'too-large';

/** Serializes one record and measures it, the only per-record JSON work of a publish. */
export function serializeRecord<TRecord>(index: number, record: TRecord): SerializedRecord<TRecord> {
  const json = JSON.stringify(record);
  return { index, record, json, bytes: Buffer.byteLength(json, 'utf8') };
}

/** Body size of a batch whose items together hold `itemBytes` bytes of JSON. */
export function bodyBytesFor(count: number, itemBytes: number): number {
  return EMPTY_BODY_BYTES + itemBytes + Math.max(0, count - 1);
}

/** Whether one item alone fits in a request body. */
export function fitsAlone(item: Sized, maxBatchBytes: number): boolean {
  return bodyBytesFor(1, item.bytes) <= maxBatchBytes;
}

/** The exact request body for a batch. */
export function buildBody(items: readonly { json: string }[]): string {
  let body = BODY_PREFIX;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) body += ',';
    body += (items[i] as { json: string }).json;
  }
  return body + BODY_SUFFIX;
}

/** One batch being filled. `tryAdd` reports instead of throwing, so callers decide what a full batch means. */
export class BatchBuilder<T extends Sized> {
  #items: T[] = [];
  #itemBytes = 0;

  constructor(private readonly limits: BatchLimits) {}

  get count(): number {
    return this.#items.length;
  }

  /** UTF-8 size of the body this batch would be sent as. */
  get bodyBytes(): number {
    return bodyBytesFor(this.#items.length, this.#itemBytes);
  }

  tryAdd(item: T): AddResult {
    if (!fitsAlone(item, this.limits.maxBatchBytes)) return 'too-large';
    const count = this.#items.length;
    if (count >= this.limits.batchSize) return 'full';
    if (bodyBytesFor(count + 1, this.#itemBytes + item.bytes) > this.limits.maxBatchBytes) return 'full';
    this.#items.push(item);
    this.#itemBytes += item.bytes;
    return 'added';
  }

  /** Hands over the items and starts an empty batch. */
  take(): T[] {
    const items = this.#items;
    this.#items = [];
    this.#itemBytes = 0;
    return items;
  }
}
