import { ConfigurationError } from '../errors.js';

/**
 * A run's patience with a service that pushes back (a 429, or a 503: unavailable) and accepts
 * nothing. Each request's retries are bounded on their own, but a run goes on to its next batch or
 * file: without a bound of the run's own, a service down for hours would meet every item of the
 * input in turn, each with its retries and their `Retry-After` waits. The patience begins at the
 * first push-back since the service last accepted an item, lasts `deadlineMs` for every item of
 * the run at once, and begins again with the next accepted one. Measured on the monotonic clock:
 * a wall clock stepped by NTP mid-run must not end or stretch it.
 */
/** Refuses a `rateLimitDeadlineMs` option that is not a number of milliseconds ≥ 0 (Infinity: no deadline). */
export function checkPatienceOption(deadlineMs: unknown): void {
  if (deadlineMs !== undefined && !(typeof deadlineMs === 'number' && deadlineMs >= 0 && !Number.isNaN(deadlineMs))) {
    throw new ConfigurationError('rateLimitDeadlineMs must be a number ≥ 0 (milliseconds)');
  }
}

export class PushBackPatience {
  readonly #deadlineMs: number;
  /** When the service first pushed back since it last accepted an item; undefined while it accepts. */
  #since: number | undefined;
  /** Items of the run being sent (a request on the wire, or waiting to be sent again). */
  #inFlight = 0;
  /** Since when no item of the run was being sent (it waited for its input, say). */
  #quietSince: number | undefined;

  constructor(deadlineMs: number) {
    this.#deadlineMs = deadlineMs;
  }

  /** The service pushed back: the patience begins now, unless it already had. */
  pushedBack(): void {
    this.#since ??= performance.now();
  }

  /**
   * An item starts being sent. After the run sent nothing for longer than the deadline (its input
   * was slow to come), the patience is forgotten: nothing says the service refused all that time.
   */
  itemStarted(): void {
    if (this.#inFlight++ === 0 && this.#quietSince !== undefined) {
      if (performance.now() - this.#quietSince > this.#deadlineMs) this.#since = undefined;
      this.#quietSince = undefined;
    }
  }

  /** An item settled (or was given up): with none left being sent, the run is quiet from now. */
  itemSettled(): void {
    if (--this.#inFlight === 0) this.#quietSince = performance.now();
  }

  /** The service accepted an item: the run moves, and its next push-back starts a new patience. */
  accepted(): void {
    this.#since = undefined;
  }

  /** Whether a wait of `delayMs`, starting now, would end within the patience (begun now if it had not). */
  allowsWait(delayMs: number): boolean {
    this.pushedBack();
    return performance.now() + delayMs < (this.#since as number) + this.#deadlineMs;
  }

  /**
   * Nothing was accepted for the whole deadline while the service pushed back: every further item
   * would meet the same answer, so the run stops at the next item that fails with one.
   */
  get runOut(): boolean {
    return this.#since !== undefined && performance.now() >= this.#since + this.#deadlineMs;
  }
}
