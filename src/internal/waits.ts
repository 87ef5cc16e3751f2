/**
 * Waiting, the three ways the package does it: abort listeners that never leak (`onAbort`),
 * abortable delays (`delay`, `raceSignal`), and one event-loop turn (`nextTurn`).
 */
import { AbortError } from '../errors.js';

/**
 * Listening to a caller's AbortSignal without growing it. A service passes one shutdown signal to
 * every call for days. Each call's listener must go when the call settles, and many calls in
 * flight must not pile listeners on the signal: Node warns past 10 (MaxListenersExceededWarning)
 * and `AbortSignal.any` keeps every combined signal reachable from a long-lived source
 * (nodejs/node#55351, #54614). So the package adds at most one listener per signal, which calls
 * the callbacks registered here, and removes it when the last callback is unregistered.
 */

interface Fanout {
  readonly callbacks: Set<() => void>;
  readonly listener: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

function fanoutOf(signal: AbortSignal): Fanout {
  const existing = fanouts.get(signal);
  if (existing) return existing;
  const callbacks = new Set<() => void>();
  const listener = () => {
    fanouts.delete(signal);
    const due = [...callbacks];
    callbacks.clear();
    let failure: { error: unknown } | undefined;
    for (const callback of due) {
      try {
        callback();
      } catch (error) {
        failure ??= { error };
      }
    }
    // One throwing callback must not keep the others from hearing of the abort.
    if (failure) throw failure.error;
  };
  const fanout = { callbacks, listener };
  fanouts.set(signal, fanout);
  signal.addEventListener('abort', listener, { once: true });
  return fanout;
}

/**
 * Calls `callback` once when `signal` aborts (at once when it already has); returns the function
 * that unregisters it. Call that when the waiting is over, whichever way it ended.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  const fanout = fanoutOf(signal);
  // A wrapper, so that one function registered twice is two registrations.
  const entry = () => callback();
  fanout.callbacks.add(entry);
  return () => {
    if (!fanout.callbacks.delete(entry) || fanout.callbacks.size > 0) return;
    signal.removeEventListener('abort', fanout.listener);
    if (fanouts.get(signal) === fanout) fanouts.delete(signal);
  };
}

/**
 * Callers parked until something they wait for may have changed (a slot given back, a window
 * grown): each woken caller looks again, so a wake-up is a hint, never a grant.
 */
export class WakeList {
  readonly #waiters = new Set<() => void>();

  /** Resolves at the next `wakeAll`; rejects with AbortError when the signal fires first. */
  wait(signal: AbortSignal | undefined): Promise<void> {
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

  wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

/** Waits `ms`, or rejects with AbortError as soon as the signal fires; removes its listener either way. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortErrorFrom(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stopListening();
      resolve();
    }, ms);
    const stopListening = signal
      ? onAbort(signal, () => {
          clearTimeout(timer);
          reject(abortErrorFrom(signal));
        })
      : () => {};
  });
}

/**
 * A signal that fires when `first` (the caller's, which may live for days) or `second` fires,
 * through the listeners of `onAbort`: `release` removes them once the waiting is over.
 */
export function eitherSignal(
  first: AbortSignal | undefined,
  second: AbortSignal,
): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const stopFirst = first ? onAbort(first, () => controller.abort(first.reason)) : () => {};
  const stopSecond = onAbort(second, () => controller.abort(second.reason));
  return {
    signal: controller.signal,
    release: () => {
      stopFirst();
      stopSecond();
    },
  };
}

/**
 * Settles with the promise, or rejects with AbortError when the signal fires first. The promise
 * itself keeps running: it may be shared with other callers (the single-flight token refresh).
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
  return new Promise<T>((resolve, reject) => {
    const stopListening = onAbort(signal, () => reject(abortErrorFrom(signal)));
    promise.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}

export function abortErrorFrom(signal: AbortSignal | undefined): AbortError {
  return new AbortError('The operation was aborted by the caller', { cause: signal?.reason });
}

/**
 * One turn of the event loop, for code that must let the runtime finish its own callbacks first.
 * Node's fetch (undici) hands a keep-alive connection back to its pool in a `setImmediate` after
 * the response has ended; a request sent before that finds every connection busy and opens
 * another. Runtimes without `setImmediate` (workers, edge) go on at once.
 *
 * A turn is not a timer, so a test suite's fake clock must not hold it: vitest and Jest replace
 * `setImmediate` with one that waits for the test to advance the clock, and a request waiting on it
 * would hang. Nor may a real turn stand in for it while a fake clock is installed: an async advance
 * (`vi.advanceTimersByTimeAsync`) lets one real turn pass before it moves the clock, so a request
 * sent a turn later (a retried publish's first data request, after its token) meets its 503 after
 * the advance, and the backoff timer it starts is never reached. So the turn is skipped while the
 * global `setImmediate` is a fake (the one cost: a test's data request may open a connection of
 * its own); otherwise the runtime's own function, kept from when this module loaded, is used, or
 * the current one; with no real one the turn is skipped.
 */
type SetImmediate = (callback: () => void) => unknown;

/**
 * sinon's fake-timers (behind vitest's and Jest's fake timers) mark their functions with `clock`;
 * Jest's legacy ones are mocks; `node:test`'s mock timers install a bound private method.
 */
function isFake(candidate: { name?: unknown }): boolean {
  return 'clock' in candidate || '_isMockFunction' in candidate || candidate.name === 'bound #setImmediate';
}

function realSetImmediate(candidate: unknown): SetImmediate | undefined {
  return typeof candidate === 'function' && !isFake(candidate) ? (candidate as SetImmediate) : undefined;
}

const atLoad = realSetImmediate((globalThis as { setImmediate?: unknown }).setImmediate);

export function nextTurn(): Promise<void> | undefined {
  const current = (globalThis as { setImmediate?: unknown }).setImmediate;
  if (typeof current === 'function' && isFake(current)) return undefined;
  const setImmediate = atLoad ?? realSetImmediate(current);
  if (setImmediate === undefined) return undefined;
  return new Promise((resolve) => {
    setImmediate(resolve);
  });
}
