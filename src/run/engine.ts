import {
  type AbortError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  type PushError,
  TokenError,
} from '../errors.js';

/** What the engine pulls its work from: one iterator shared by every loop. */
export type WorkSource<T> = Iterator<T, void, undefined> | AsyncIterator<T, void, undefined>;

/** The window the engine's loops share: a slot is taken before an item is pulled, and given back once it settled. */
export interface WorkWindow {
  /** The most slots the window may ever have: how many loops run. */
  readonly max: number;
  /** Resolves with a slot; rejects with an AbortError when the signal fires. */
  acquire(signal?: AbortSignal): Promise<void>;
  release(): void;
  /** Wakes every loop waiting for a slot, so that it sees the run has stopped or run out. */
  wakeAll(): void;
}

/**
 * One run of `publish` or `upload`: loops pull from one shared source, with no queue (the shape
 * of aws lib-storage's `Upload`). A loop takes a slot of the window before it pulls an item and
 * gives it back once the item settled, so at most the window's current limit of items is in
 * hand, while that limit moves (concurrency-limiter.ts). The first stop ends every loop at its
 * next pull, and items in flight finish.
 */
export class RunEngine {
  /**
   * Why the run stopped before its source ran out, other than the caller's abort:
   * - `#stoppedBy`: an error every further item would meet (a refused connection or token, a 401,
   *   403 or 404, a failed address request, a failing rate budget), when it came first;
   * - `#thrown`: the first thing the caller's own code threw (the input, or an `onBatchSettled` /
   *   `onFileSettled`), even after the service stopped the run: the cause follows one order
   *   whatever the timing (`stopCause`), so a callback that throws while the run winds down
   *   must not vanish behind the service's error.
   */
  #stoppedBy: PushError | undefined;
  #thrown: { error: unknown } | undefined;
  /** The caller asked the run to end in order (`stopSignal`): no cause, since the caller knows. */
  #halted = false;
  #exhausted = false;
  readonly #signal: AbortSignal | undefined;
  readonly #onStoppedBy: ((error: PushError) => void) | undefined;
  readonly #onStop: (() => void) | undefined;

  /**
   * `onStoppedBy` is told the first `stopped-by` error once (the reports' `stoppedBy`); `onStop`
   * is told once of the first stop of either kind, so that work waiting on the run's behalf (an
   * address request asked for ahead) can be given up.
   */
  constructor(signal: AbortSignal | undefined, onStoppedBy?: (error: PushError) => void, onStop?: () => void) {
    this.#signal = signal;
    this.#onStoppedBy = onStoppedBy;
    this.#onStop = onStop;
  }

  /** True once no more items must be started: aborted, stopped, or halted. */
  readonly shouldStop = (): boolean =>
    this.#stoppedBy !== undefined || this.#thrown !== undefined || this.#halted || this.#signal?.aborted === true;

  /** Runs up to `window.max` loops over `source` until it runs out or the run stops. */
  async run<T>(source: WorkSource<T>, window: WorkWindow, work: (item: T) => Promise<void>): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!this.shouldStop() && !this.#exhausted) {
        try {
          await window.acquire(this.#signal);
        } catch {
          return; // aborted while waiting: the abort is the outcome
        }
        try {
          if (this.shouldStop() || this.#exhausted) return;
          let next: IteratorResult<T, void>;
          try {
            next = await source.next();
          } catch (error) {
            // The input threw, unless the read was cut short by the abort: then the abort is the outcome.
            if (!this.#signal?.aborted) this.interrupt(error);
            return;
          }
          if (next.done) {
            this.#exhausted = true;
            return;
          }
          await work(next.value);
        } finally {
          window.release();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: window.max }, loop));
    } finally {
      window.wakeAll();
    }
  }

  /** Stops the run with an error every further item would meet; the first one is kept. */
  stopBy(error: PushError): void {
    // The report's `stoppedBy` names the service's error only when it was what stopped the run.
    if (this.#stoppedBy !== undefined || this.#thrown !== undefined) return;
    this.#stoppedBy = error;
    this.#onStoppedBy?.(error);
    this.#onStop?.();
  }

  /**
   * Ends the run in order at the caller's request: no more items start, items in flight finish,
   * and work waiting on the run's behalf is given up (`onStop`).
   */
  halt(): void {
    if (this.#halted) return;
    const first = !this.shouldStop();
    this.#halted = true;
    if (first) this.#onStop?.();
  }

  /** Stops the run because the caller's code threw; the first one is kept, even after a `stopBy`. */
  interrupt(error: unknown): void {
    if (this.#thrown !== undefined) return;
    const first = this.#stoppedBy === undefined;
    this.#thrown = { error };
    if (first) this.#onStop?.();
  }

  /** The error that stopped the run early by the service (the report's `stoppedBy`), if any. */
  get stoppedBy(): PushError | undefined {
    return this.#stoppedBy;
  }

  /**
   * The error a stopped run rejects with, as its `cause`, or undefined when the run was not
   * stopped. One order for both operations: what the caller's code threw first (a bug or a
   * decision of theirs, which must not hide behind its consequences), then the caller's abort,
   * then the error the service stopped the run with.
   */
  stopCause(abortError: (signal: AbortSignal) => AbortError): unknown {
    if (this.#thrown !== undefined) return this.#thrown.error;
    if (this.#signal?.aborted) return abortError(this.#signal);
    return this.#stoppedBy;
  }
}

/**
 * Errors that every following request would meet too, so the run stops instead of hammering: a
 * connection that could not be made at all (DNS, TLS, nothing listening, after the transport's own
 * retries), a refused token, a 401, 403 or 404 on the app, a configuration error. A connection lost
 * after the request was written is not one of them: it concerns that request only.
 */
export function stopsTheRun(error: PushError): boolean {
  return (
    (error instanceof ConnectionError && !error.requestMaybeSent) ||
    error instanceof AuthenticationError ||
    error instanceof PermissionDeniedError ||
    error instanceof NotFoundError ||
    error instanceof TokenError ||
    error instanceof ConfigurationError
  );
}
