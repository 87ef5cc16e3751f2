/**
 * Finance records per app, kept compact: each accepted batch is stored as the JSON text of its
 * records and parsed again only when a test reads it. A million small objects would cost the
 * garbage collector far more than a thousand strings during a benchmark.
 */

/** A finance record as the spec's property table defines it. */
export interface FinanceRecord {
  created: number;
  amount: number;
  currency: string;
  identifier: string;
  type: 'expense' | 'invoice';
  vendor: string;
  name?: string;
  category?: string;
  description?: string;
  transactionNumber?: string;
}

/** One accepted finance request. */
export interface FinanceDelivery {
  /** The `x-request-id` the emulator answered that request with. */
  requestId: string;
  /** Emulator clock (ms) when it was accepted. */
  receivedAt: number;
  /** Index of its first record in the app's record list. */
  firstIndex: number;
  count: number;
  /** Its records, in order (empty when the emulator runs with `keepRecords: false`). */
  readonly records: FinanceRecord[];
}

/** One stored batch as kept: its records still as JSON text, so a reader can skip it unparsed. */
export interface StoredDelivery {
  requestId: string;
  receivedAt: number;
  firstIndex: number;
  count: number;
  json: string | undefined;
}

export class FinanceStore {
  readonly #deliveries: StoredDelivery[] = [];
  #count = 0;
  #cache: FinanceRecord[] | undefined;

  add(requestId: string, receivedAt: number, records: readonly FinanceRecord[], keep: boolean): void {
    this.#deliveries.push({
      requestId,
      receivedAt,
      firstIndex: this.#count,
      count: records.length,
      json: keep ? JSON.stringify(records) : undefined,
    });
    this.#count += records.length;
    this.#cache = undefined;
  }

  get count(): number {
    return this.#count;
  }

  /** Every record in arrival order; parsed once and cached until the next delivery. */
  records(): FinanceRecord[] {
    if (!this.#cache) {
      const all: FinanceRecord[] = [];
      for (const delivery of this.#deliveries) {
        if (delivery.json) for (const record of JSON.parse(delivery.json) as FinanceRecord[]) all.push(record);
      }
      this.#cache = all;
    }
    return this.#cache;
  }

  deliveries(): FinanceDelivery[] {
    return this.#deliveries.map((stored) => ({
      requestId: stored.requestId,
      receivedAt: stored.receivedAt,
      firstIndex: stored.firstIndex,
      count: stored.count,
      get records(): FinanceRecord[] {
        return stored.json ? (JSON.parse(stored.json) as FinanceRecord[]) : [];
      },
    }));
  }

  /**
   * The batches holding records below `before`, newest first, found by binary search: a reader pages
   * or scans back from there without parsing the batches it does not reach.
   */
  *batchesBefore(before: number): Generator<StoredDelivery> {
    const start = this.#batchIndexOf(Math.min(before, this.#count) - 1);
    for (let i = start; i >= 0; i--) yield this.#deliveries[i]!;
  }

  /** The request that delivered the record at `index`, found by binary search over the batches. */
  deliveryOf(index: number): string | undefined {
    const found = this.#batchIndexOf(index);
    return found >= 0 && index >= 0 ? this.#deliveries[found]!.requestId : undefined;
  }

  /** Position of the batch holding record `index`; -1 when there is none. */
  #batchIndexOf(index: number): number {
    if (index < 0) return -1;
    let low = 0;
    let high = this.#deliveries.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const delivery = this.#deliveries[middle]!;
      if (index < delivery.firstIndex) high = middle - 1;
      else if (index >= delivery.firstIndex + delivery.count) low = middle + 1;
      else return middle;
    }
    return -1;
  }
}
