/**
 * The request log, bounded twice: by entries (`maxRequestLog`) and by their estimated size
 * (`maxRequestLogBytes`), so that a flood of large requests cannot exhaust the emulator's memory.
 * The oldest entries go first.
 */
import { estimateEntryBytes } from './request-log.js';
import type { RequestLogEntry } from './state.js';

// Past a limit the log drops a tenth of it in one go: shifting on every request would make each
// one cost the whole log, while this keeps adding an entry amortised O(1).
const SLACK = 0.1;

export class BoundedRequestLog {
  /** Oldest first; up to a tenth more than `maxEntries` between two trims. */
  readonly #entries: RequestLogEntry[] = [];
  readonly #sizes: number[] = [];
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;

  constructor(maxEntries: number, maxBytes: number) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  /**
   * The entries a reader sees, oldest first: the newest `maxEntries`, as documented, whatever the
   * slack the amortised trim leaves in the array. Not a copy while no slack is held.
   */
  get entries(): readonly RequestLogEntry[] {
    const held = this.#entries;
    return held.length > this.#maxEntries ? held.slice(held.length - this.#maxEntries) : held;
  }

  /** The estimated size of the entries held, in bytes (see `estimateEntryBytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Adds an entry, then drops the oldest while a limit is passed. The newest entry is always kept. */
  add(entry: RequestLogEntry): void {
    const size = estimateEntryBytes(entry);
    this.#entries.push(entry);
    this.#sizes.push(size);
    this.#bytes += size;
    let drop = 0;
    if (this.#entries.length > this.#maxEntries * (1 + SLACK)) drop = this.#entries.length - this.#maxEntries;
    if (this.#bytes > this.#maxBytes) {
      let bytes = this.#bytes;
      for (let i = 0; i < drop; i++) bytes -= this.#sizes[i] as number;
      while (bytes > this.#maxBytes * (1 - SLACK) && drop < this.#entries.length - 1) {
        bytes -= this.#sizes[drop] as number;
        drop += 1;
      }
    }
    if (drop > 0) this.#dropOldest(drop);
  }

  clear(): void {
    this.#entries.length = 0;
    this.#sizes.length = 0;
    this.#bytes = 0;
  }

  #dropOldest(count: number): void {
    this.#entries.splice(0, count);
    for (const size of this.#sizes.splice(0, count)) this.#bytes -= size;
  }
}
