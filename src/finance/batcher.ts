/**
 * Chunking of checked records into request bodies, by count and by bytes. Pure: no I/O and no
 * validation. `BatchBuilder` is what `publish` fills (through `BatchAssembler`, below); the
 * chunking property test drives it through `publish` itself and measures the bodies as sent.
 *
 * A request body is `{"records":[` + the records' JSON joined by `,` + `]}`. A batch far under
 * `maxBatchBytes` is filled from each record's size bound, computed without serializing it, and its
 * body is one `JSON.stringify`, as a hand-written script would do. Only near the limit is each
 * record serialized and measured in UTF-8 bytes, so that the body as sent stays within it; such a
 * body is joined from the per-record strings, never stringified twice.
 *
 * A batch holds its records, and their input indexes when someone asked for them, in plain arrays:
 * no object per record beside the record itself. Publishing allocates little else per record, so
 * an object each (and the array of them) was a fifth of what a publish allocated.
 */
import { utf8ByteLength } from '../internal/text.js';
import type { PendingBatch } from './publisher.js';

const BODY_PREFIX = '{"records":[';
const BODY_SUFFIX = ']}';
/** Bytes of `{"records":[]}`: the body of an empty batch. */
export const EMPTY_BODY_BYTES = BODY_PREFIX.length + BODY_SUFFIX.length;

export interface BatchLimits {
  /** Most records in one request (the spec allows 1000). */
  batchSize: number;
  /** Most UTF-8 bytes in one request body, `{"records":[...]}` included. */
  maxBatchBytes: number;
}

declare const fitsAloneBrand: unique symbol;

/**
 * At least the UTF-8 size of a record's JSON, known to leave room for the record in a request body
 * on its own. Only `fitsByBound` and `sizeUp` make one, and a builder takes a record with nothing
 * else, so a record too large to be sent can never reach a batch: the caller gets its exact size
 * from `sizeUp` instead, and must report it.
 */
export type FittingSize = number & { readonly [fitsAloneBrand]: true };

/**
 * What `sizeUp` says: the record fits, by its bound or by its exact size (then `json` is its JSON,
 * serialized once, and `size` that text's UTF-8 bytes); or it is too large for any request.
 */
export type Sized = { fits: true; size: FittingSize; json: string | undefined } | { fits: false; bytes: number };

/**
 * - `added`: the record is in the batch;
 * - `full`: the batch cannot take it; send the batch and add the record to a new one.
 */
export type AddResult = 'added' | 'full';

/** Body size of a batch whose records together hold `recordBytes` bytes of JSON. */
export function bodyBytesFor(count: number, recordBytes: number): number {
  return EMPTY_BODY_BYTES + recordBytes + Math.max(0, count - 1);
}

/**
 * The common case of `sizeUp`, with nothing built: the bound as a fitting size when it alone shows
 * that the record fits in a request body, else undefined (ask `sizeUp`).
 */
export function fitsByBound(bound: number, maxBatchBytes: number): FittingSize | undefined {
  return bodyBytesFor(1, bound) <= maxBatchBytes ? (bound as FittingSize) : undefined;
}

/** Whether a record fits in a request body alone: by its size bound, or else serialized and measured exactly. */
export function sizeUp(record: unknown, bound: number, maxBatchBytes: number): Sized {
  const byBound = fitsByBound(bound, maxBatchBytes);
  if (byBound !== undefined) return { fits: true, size: byBound, json: undefined };
  const json = JSON.stringify(record);
  const bytes = utf8ByteLength(json);
  if (bodyBytesFor(1, bytes) > maxBatchBytes) return { fits: false, bytes };
  return { fits: true, size: bytes as FittingSize, json };
}

/** One batch, handed over by `BatchBuilder.take`. */
export interface TakenBatch<TRecord> {
  records: TRecord[];
  /** Each record's JSON where it was serialized to be measured (near a limit); undefined when none was. */
  jsons: (string | undefined)[] | undefined;
  /** Input index of the first and of the last record. */
  firstIndex: number;
  lastIndex: number;
  /** Input index of each record, when the builder keeps them; else empty. */
  indexes: number[];
}

/** The exact request body for a batch: one `JSON.stringify`, unless some of its records were serialized already. */
export function buildBody<TRecord>(records: readonly TRecord[], jsons?: readonly (string | undefined)[]): string {
  if (jsons === undefined) return JSON.stringify({ records });
  let body = BODY_PREFIX;
  for (let i = 0; i < records.length; i++) {
    if (i > 0) body += ',';
    body += jsons[i] ?? JSON.stringify(records[i]);
  }
  return body + BODY_SUFFIX;
}

/** One batch being filled. `tryAdd` reports instead of throwing, so callers decide what a full batch means. */
export class BatchBuilder<TRecord> {
  readonly #limits: BatchLimits;
  readonly #keepIndexes: boolean;
  #records: TRecord[] = [];
  #indexes: number[] = [];
  /** Made on the first record serialized (near a limit): most batches never need it. */
  #jsons: (string | undefined)[] | undefined;
  #firstIndex = -1;
  #lastIndex = -1;
  /** The records before this one are measured: their JSON is in `#jsons` and its exact bytes in `#measuredBytes`. */
  #measured = 0;
  #measuredBytes = 0;
  /** At least the UTF-8 bytes of the records from `#measured` on. */
  #boundBytes = 0;

  /** `keepIndexes`: hand over each record's input index with the batch (`TakenBatch.indexes`). */
  constructor(limits: BatchLimits, keepIndexes = false) {
    this.#limits = limits;
    this.#keepIndexes = keepIndexes;
  }

  get count(): number {
    return this.#records.length;
  }

  /** UTF-8 size of the body this batch would be sent as. */
  get bodyBytes(): number {
    this.#measure();
    return bodyBytesFor(this.#records.length, this.#measuredBytes);
  }

  /**
   * Adds record `index` of the input, or says `full`; an empty batch always takes a record. `json`:
   * the record's JSON when `sizeUp` serialized it, `size` then being its exact UTF-8 bytes.
   */
  tryAdd(index: number, record: TRecord, size: FittingSize, json?: string): AddResult {
    const { batchSize, maxBatchBytes } = this.#limits;
    const count = this.#records.length;
    if (count >= batchSize) return 'full';
    if (bodyBytesFor(count + 1, this.#measuredBytes + this.#boundBytes + size) <= maxBatchBytes) {
      this.#boundBytes += size;
      this.#push(index, record, json);
      return 'added';
    }
    // Near the limit by the bounds: count exactly (each record once) before calling the batch full.
    this.#measure();
    const text = json ?? JSON.stringify(record);
    const bytes = json === undefined ? utf8ByteLength(text) : size;
    if (bodyBytesFor(count + 1, this.#measuredBytes + bytes) > maxBatchBytes) return 'full';
    this.#push(index, record, text);
    this.#measured++;
    this.#measuredBytes += bytes;
    return 'added';
  }

  /** Hands over the batch and starts an empty one. */
  take(): TakenBatch<TRecord> {
    const taken: TakenBatch<TRecord> = {
      records: this.#records,
      jsons: this.#jsons,
      firstIndex: this.#firstIndex,
      lastIndex: this.#lastIndex,
      indexes: this.#keepIndexes ? this.#indexes : [],
    };
    this.#records = [];
    if (this.#keepIndexes) this.#indexes = [];
    this.#jsons = undefined;
    this.#firstIndex = -1;
    this.#lastIndex = -1;
    this.#measured = 0;
    this.#measuredBytes = 0;
    this.#boundBytes = 0;
    return taken;
  }

  #push(index: number, record: TRecord, json: string | undefined): void {
    const count = this.#records.length;
    this.#records.push(record);
    if (json !== undefined) this.#jsonsMade()[count] = json;
    if (count === 0) this.#firstIndex = index;
    this.#lastIndex = index;
    if (this.#keepIndexes) this.#indexes.push(index);
  }

  #measure(): void {
    const records = this.#records;
    if (this.#measured === records.length) return;
    const jsons = this.#jsonsMade();
    let bytes = this.#measuredBytes;
    for (let i = this.#measured; i < records.length; i++) {
      const json = jsons[i] ?? JSON.stringify(records[i]);
      jsons[i] = json;
      bytes += utf8ByteLength(json);
    }
    this.#measuredBytes = bytes;
    this.#measured = records.length;
    this.#boundBytes = 0;
  }

  #jsonsMade(): (string | undefined)[] {
    this.#jsons ??= [];
    return this.#jsons;
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
export class BatchAssembler<TRecord = unknown> {
  readonly #builder: BatchBuilder<TRecord>;
  readonly #batchSize: number;
  #nextBatch = 0;

  constructor(limits: BatchLimits, options: AssemblerOptions) {
    this.#builder = new BatchBuilder(limits, options.keepIndexes);
    this.#batchSize = limits.batchSize;
  }

  /** Adds record `index` of the input, checked and sized up: the batch it completed, if any. */
  add(index: number, record: TRecord, size: FittingSize, json?: string): PendingBatch | undefined {
    const result = this.#builder.tryAdd(index, record, size, json);
    switch (result) {
      case 'added':
        return this.#builder.count >= this.#batchSize ? this.#take() : undefined;
      case 'full': {
        const full = this.#take();
        // An empty batch always takes a record that fits alone; anything else would lose it.
        if (this.#builder.tryAdd(index, record, size, json) !== 'added') {
          throw new Error('push-api-client: an empty batch refused a record');
        }
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
    const batch = this.#builder.take();
    return {
      index: this.#nextBatch++,
      firstRecord: batch.firstIndex,
      lastRecord: batch.lastIndex,
      recordCount: batch.records.length,
      body: buildBody(batch.records, batch.jsons),
      indexes: batch.indexes,
    };
  }
}

/** A case the type system says cannot happen: a new `AddResult` must be handled above before this compiles. */
function unreachable(value: never): never {
  throw new Error(`push-api-client: unexpected batch result ${String(value)}`);
}
