/** The emulator's clock: the caller's `now` plus an offset that `advance()` moves forward. */
export class Clock {
  #offsetMs = 0;
  readonly #base: () => number;

  constructor(base: () => number) {
    this.#base = base;
  }

  now(): number {
    return this.#base() + this.#offsetMs;
  }

  /** Moves time forward without waiting, so token and URL expiry can be tested instantly. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advanceTime needs a finite, non-negative number of ms');
    this.#offsetMs += ms;
  }

  reset(): void {
    this.#offsetMs = 0;
  }
}
