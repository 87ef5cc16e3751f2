import { AbortError } from '../errors.js';
import { onAbort } from './abort-listeners.js';

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
