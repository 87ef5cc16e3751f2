import { BatchBuilder, type BatchLimits, buildBody } from './batcher.js';
import type { PendingBatch } from './report.js';
import type { Item } from './validate.js';

/**
 * Fills batches by count and bytes (batcher.ts) with records already checked and sized up
 * (validate.ts), and hands each batch over, serialized, as soon as it is complete. What is sent
 * is the wire record made by the check, never the input object itself, so nothing the caller's
 * code does after the check (a getter, a Proxy, a later change to the object) reaches the body.
 */

export interface AssemblerOptions {
  /**
   * Batches keep the input index of each record (someone wants them: `onBatchSending`, `onBatchSettled`). Records
   * are never kept once the body is built, so they die young: records held by every batch in
   * flight lived long enough to be promoted, and filled V8's old generation with garbage.
   */
  keepIndexes: boolean;
}

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
