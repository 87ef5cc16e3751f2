import { AbortError, PushError } from '../errors.js';
import { abortErrorFrom, onAbort } from '../internal/waits.js';
import type { RateBudget } from './rate-budget.js';

/**
 * A rate budget as a publish run uses it: a user's budget (one backed by Redis, say) may throw,
 * reject, or never settle, and none of that may lose a record or hang the run.
 * - `acquire` settles when the signal fires, whatever the budget does; a slot it grants after
 *   that is given back at once. A rejection without an abort is a `PushError` naming the budget.
 * - `release`, `onSuccess` and `onRateLimited` never throw: a failure goes to `onFailure`, which
 *   stops the run, and the outcome of the request that caused the call stands.
 */
export class GuardedBudget implements RateBudget {
  readonly #budget: RateBudget;
  readonly #onFailure: (error: PushError) => void;

  constructor(budget: RateBudget, onFailure: (error: PushError) => void) {
    this.#budget = budget;
    this.#onFailure = onFailure;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortErrorFrom(signal));
    let granted: Promise<void>;
    try {
      granted = Promise.resolve(this.#budget.acquire(signal));
    } catch (error) {
      granted = Promise.reject(error);
    }
    // An abort wins over whatever the budget rejected with; any other rejection names the budget.
    const failure = (error: unknown): Error =>
      signal?.aborted ? abortErrorFrom(signal) : error instanceof AbortError ? error : budgetError('acquire', error);
    if (!signal) {
      return granted.catch((error: unknown) => {
        throw failure(error);
      });
    }
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const stopListening = onAbort(signal, () => {
        settled = true;
        reject(abortErrorFrom(signal));
      });
      granted.then(
        () => {
          stopListening();
          // Granted after the abort: nobody will send with this slot.
          if (settled) this.release();
          else resolve();
          settled = true;
        },
        (error: unknown) => {
          stopListening();
          if (!settled) reject(failure(error));
          settled = true;
        },
      );
    });
  }

  release(): void {
    this.#call('release', () => this.#budget.release());
  }

  onSuccess(): void {
    this.#call('onSuccess', () => this.#budget.onSuccess());
  }

  onRateLimited(retryAfterMs: number | undefined, willRetry?: boolean): void {
    this.#call('onRateLimited', () => this.#budget.onRateLimited(retryAfterMs, willRetry));
  }

  #call(method: string, run: () => void): void {
    try {
      run();
    } catch (error) {
      this.#onFailure(budgetError(method, error));
    }
  }
}

function budgetError(method: string, error: unknown): PushError {
  const message = error instanceof Error ? error.message : String(error);
  return new PushError(`the rateBudget's ${method}() failed: ${message}`, { cause: error });
}
