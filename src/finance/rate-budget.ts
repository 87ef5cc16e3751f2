/**
 * How a publish run paces its requests against the service's rate limit. Each worker calls
 * `acquire` before it sends a batch (and before each re-send after a 429) and `release` once that
 * request has settled; the budget hears of every accepted request and every 429. The default is an
 * in-process adaptive window (one per run); a budget shared between processes (such as the Redis
 * recipe in `examples/redis-rate-budget.ts`) lets a fleet publishing to one app share what each
 * process learned from 429s and `Retry-After`.
 *
 * `onSuccess` and `onRateLimited` are called synchronously on the request's path: a budget backed
 * by a remote store should start its writes there and handle their failures itself.
 */
export interface RateBudget {
  /**
   * Resolves when one more request may be sent: after any pause the service asked for, and
   * within what the budget allows. Rejects (with the signal's reason or an AbortError) when
   * `signal` fires.
   */
  acquire(signal?: AbortSignal): Promise<void>;
  /** The request `acquire` allowed has settled, whatever its outcome. Called once per `acquire`. */
  release(): void;
  /** The service accepted a request. */
  onSuccess(): void;
  /**
   * The service answered 429 (or 503): slow down. `retryAfterMs` is the service's `Retry-After`
   * (or the client's backoff delay when it sent none). `willRetry`: the transport re-sends the
   * request after that delay without calling `acquire` again (503 only).
   */
  onRateLimited(retryAfterMs: number | undefined, willRetry?: boolean): void;
}
