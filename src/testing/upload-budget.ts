/**
 * How many uploaded bytes the emulator holds in memory, across every file. Sizes and digests are
 * always kept; the bytes only while they fit, so that a test uploading gigabytes does not hold
 * gigabytes. In-flight PUTs reserve as they read, so concurrent uploads cannot overshoot together.
 */
export class UploadBudget {
  readonly #max: number;
  #held = 0;
  #filesWithoutBytes = 0;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  get maxBytes(): number {
    return this.#max;
  }

  get heldBytes(): number {
    return this.#held;
  }

  get filesWithoutBytes(): number {
    return this.#filesWithoutBytes;
  }

  /** Takes `bytes` from the budget; false (nothing taken) when they do not fit. */
  tryReserve(bytes: number): boolean {
    if (this.#held + bytes > this.#max) return false;
    this.#held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.#held -= bytes;
  }

  /** A stored file's bytes were dropped (`+1`) or a file without bytes was replaced (`-1`). */
  countFileWithoutBytes(change: 1 | -1): void {
    this.#filesWithoutBytes += change;
  }
}
