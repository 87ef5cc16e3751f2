import type { LearntWindow, WindowOutcome } from './concurrency-limiter.js';

/**
 * How long a client keeps what a run's window learnt. A service's capacity and the path to it
 * change over minutes; a run this long after the last one starts as against a service never seen.
 */
export const WINDOW_MEMORY_MS = 10 * 60_000;

interface Kept extends LearntWindow {
  at: number;
}

/**
 * What the last run of each operation learnt of its window, kept by one client for its next run,
 * as TCP keeps a path's metrics for the next connection to the same host: a process that publishes
 * every minute would otherwise climb from the start window every time, a round trip per doubling,
 * which over a long link is most of a small run.
 */
export class WindowMemory {
  readonly #kept = new Map<string, Kept>();
  readonly #now: () => number;
  readonly #keepMs: number;

  constructor(options: { now?: () => number; keepMs?: number } = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#keepMs = options.keepMs ?? WINDOW_MEMORY_MS;
  }

  /** Where the last run of `operation` left its window, if it ended recently enough. */
  recall(operation: string): LearntWindow | undefined {
    const kept = this.#kept.get(operation);
    if (kept === undefined) return undefined;
    if (this.#now() - kept.at > this.#keepMs) {
      this.#kept.delete(operation);
      return undefined;
    }
    return { limit: kept.limit, knee: kept.knee };
  }

  /**
   * Keeps what a finished run found (`ConcurrencyLimiter.outcome`), from a run whose window could
   * hold at most `max`. A run with nothing to go on leaves the memory as it was. One the service
   * pushed back on is kept whatever its size: a 429 or a queue is news about the service. A run
   * capped below what is kept (a short array) did not test that window: it only keeps it fresh.
   */
  remember(operation: string, outcome: WindowOutcome | undefined, max: number): void {
    if (outcome === undefined) return;
    const now = this.#now();
    const kept = this.#kept.get(operation);
    if (!outcome.pushedBack && kept !== undefined && max < kept.limit && now - kept.at <= this.#keepMs) {
      kept.at = now;
      return;
    }
    this.#kept.set(operation, { limit: outcome.limit, knee: outcome.knee, at: now });
  }
}
