import { onAbort } from '../internal/abort-listeners.js';
import { abortErrorFrom, delay } from '../internal/delay.js';
import type { RateBudget } from './rate-budget.js';

/**
 * The publisher's in-flight window, adapted to the service's rate limit (AIMD, as TCP does for
 * congestion), plus what the last rate-limit period taught about the service's budget:
 * - the window starts at the configured concurrency;
 * - a 429 (or 503) halves it, down to 1, and pauses every sender until the `Retry-After`
 *   deadline, so that nobody keeps knocking while the service has said "wait". 429s answering
 *   requests sent before the pause belong to the same event and change nothing more;
 * - each success grows it by `1 / window` (one slot per window's worth of successes), back up to
 *   the configured concurrency;
 * - budget: the requests accepted between two pauses are what the service allows per period.
 *   In the next period no more requests are put in flight than that budget has left (at least
 *   one). Requests in flight when a budget runs out each earn a 429, so this keeps the 429s of a
 *   period to about one, while the budget itself is still sent at full concurrency. A period
 *   that passes without a 429 forgets the budget.
 *
 * With `adaptive: false` the window stays at the concurrency and there is no pause: the baseline.
 */
export interface AdaptiveLimitOptions {
  /** The most requests in flight, and where the window starts. */
  max: number;
  /** `false`: a fixed window and no pause. @default true */
  adaptive?: boolean;
  /** Shortest rate-limit period assumed when forgetting a learned budget. @default 1000 */
  minPeriodMs?: number;
  /** Clock in ms, injectable for tests. @default Date.now */
  now?: () => number;
}

export class AdaptiveLimit implements RateBudget {
  readonly max: number;
  readonly adaptive: boolean;
  #window: number;
  #inFlight = 0;
  #pausedUntil = 0;
  /** Requests the service accepted in the last period between two pauses; undefined when unknown. */
  #budget: number | undefined;
  #budgetUntil = 0;
  #acceptedInPeriod = 0;
  #startedInPeriod = 0;
  readonly #minPeriodMs: number;
  readonly #now: () => number;
  /** Senders waiting for a free slot; at most one per worker, so bounded by the concurrency. */
  #waiters = new Set<() => void>();

  constructor(options: AdaptiveLimitOptions) {
    this.max = Math.max(1, Math.floor(options.max));
    this.adaptive = options.adaptive ?? true;
    this.#window = this.max;
    this.#minPeriodMs = options.minPeriodMs ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /** The AIMD window: how many requests may be in flight, before the budget is applied. */
  get window(): number {
    return Math.floor(this.#window);
  }

  /** The learned per-period budget, when a 429 has taught one and it is still current. */
  get budget(): number | undefined {
    return this.#budget !== undefined && this.#now() < this.#budgetUntil ? this.#budget : undefined;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Milliseconds until senders may start again; 0 when not paused. */
  get pauseRemainingMs(): number {
    return Math.max(0, this.#pausedUntil - this.#now());
  }

  /** How many requests may be in flight right now. */
  get limit(): number {
    const budget = this.budget;
    if (budget === undefined) return this.window;
    return Math.max(1, Math.min(this.window, budget - this.#startedInPeriod + this.#inFlight));
  }

  /** Waits for a slot (and for the end of any pause). Rejects with AbortError when the signal fires. */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      const pause = this.pauseRemainingMs;
      if (pause > 0) {
        await delay(pause, signal);
        continue;
      }
      if (this.#inFlight < this.limit) {
        this.#inFlight++;
        this.#startedInPeriod++;
        return;
      }
      await this.#waitForRelease(signal);
    }
  }

  /** Gives a slot back, whatever the outcome of its request. */
  release(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    this.#wakeAll();
  }

  /** A request was accepted: count it against the period, and grow the window additively. */
  onSuccess(): void {
    if (!this.adaptive) return;
    this.#acceptedInPeriod++;
    if (this.#window < this.max) this.#window = Math.min(this.max, this.#window + 1 / Math.floor(this.#window));
    this.#wakeAll();
  }

  /**
   * The service said "too many requests". The first 429 of an event halves the window, takes the
   * requests accepted since the last pause as the budget, and pauses every sender for
   * `retryAfterMs` (the server's Retry-After, or the client's backoff delay when it sent none).
   * `willRetry`: the request is re-sent when the pause ends, so it counts against the next period.
   */
  onRateLimited(retryAfterMs: number | undefined, willRetry = false): void {
    if (!this.adaptive) return;
    const now = this.#now();
    const waitMs = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? Math.max(0, retryAfterMs) : 0;
    if (now >= this.#pausedUntil) {
      // A new event: requests sent before it was noticed may still answer 429; those join it.
      this.#window = Math.max(1, Math.floor(this.#window / 2));
      if (this.#acceptedInPeriod > 0) this.#budget = this.#acceptedInPeriod;
      this.#acceptedInPeriod = 0;
      this.#startedInPeriod = 0;
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, now + waitMs);
    this.#budgetUntil = this.#pausedUntil + 2 * Math.max(this.#minPeriodMs, waitMs);
    if (willRetry) this.#startedInPeriod++;
  }

  #waitForRelease(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        this.#waiters.delete(wake);
        stopListening();
        resolve();
      };
      this.#waiters.add(wake);
      const stopListening = signal
        ? onAbort(signal, () => {
            this.#waiters.delete(wake);
            reject(abortErrorFrom(signal));
          })
        : () => {};
    });
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
