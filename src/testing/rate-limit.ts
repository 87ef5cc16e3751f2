/**
 * A fixed-window rate limit on the data API, on the emulator clock. The spec gives no values, so
 * they are whatever the test sets. One window is shared by all clients.
 */
import type { RateLimit } from './options.js';

export class RateLimiter {
  #limit: RateLimit | undefined;
  #windowStart = 0;
  #count = 0;

  constructor(limit: RateLimit | undefined) {
    this.set(limit);
  }

  set(limit: RateLimit | undefined): void {
    if (limit && !(Number.isInteger(limit.requests) && limit.requests >= 0 && limit.windowMs > 0)) {
      throw new RangeError('rateLimit needs a non-negative integer of requests and a positive windowMs');
    }
    this.#limit = limit ? { ...limit } : undefined;
    this.#windowStart = Number.NEGATIVE_INFINITY;
    this.#count = 0;
  }

  get limit(): RateLimit | undefined {
    return this.#limit ? { ...this.#limit } : undefined;
  }

  /** Counts one request; returns the seconds to wait when it is over the limit. */
  take(now: number): number | undefined {
    const limit = this.#limit;
    if (!limit) return undefined;
    if (now >= this.#windowStart + limit.windowMs) {
      this.#windowStart = now;
      this.#count = 0;
    }
    if (this.#count >= limit.requests) {
      return Math.max(1, Math.ceil((this.#windowStart + limit.windowMs - now) / 1000));
    }
    this.#count += 1;
    return undefined;
  }
}
