import { onAbort } from '../internal/abort-listeners.js';
import { abortErrorFrom } from '../internal/delay.js';

/**
 * The caller's iterator, read one record at a time and closed exactly once however publishing
 * ends, so that a database cursor or a file handle behind it is released (as `for...of` does on
 * `break`). Reads are pulled by hand rather than with `for await`, so that an abort does not wait
 * for an input that is slow, or never yields.
 */
export class InputCursor {
  readonly #iterator: Iterator<unknown> | AsyncIterator<unknown>;
  /** Done, threw, or closed: nothing left to close. */
  #finished = false;
  /** An async read still running (left behind by an abort). */
  #pending: Promise<unknown> | undefined;
  /**
   * One abort listener serves every read (a listener added and removed per record cost as much
   * as the rest of reading it); it rejects the read that is waiting, if any. Removed by `close`.
   */
  #abort: { signal: AbortSignal; stopListening: () => void } | undefined;
  #rejectWaiting: ((error: unknown) => void) | undefined;

  /** An async iterable's iterator: reads are awaited (`nextAsync`); otherwise `nextSync`. */
  readonly isAsync: boolean;
  /** The input itself when it is an array, which may be read by index instead (nothing to close). */
  readonly array: readonly unknown[] | undefined;

  constructor(records: Iterable<unknown> | AsyncIterable<unknown>) {
    this.array = Array.isArray(records) ? records : undefined;
    const openAsync = (records as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
    this.isAsync = typeof openAsync === 'function';
    this.#iterator = this.isAsync
      ? (openAsync as () => AsyncIterator<unknown>).call(records)
      : (records as Iterable<unknown>)[Symbol.iterator]();
  }

  /** The next record of a sync input. */
  nextSync(): IteratorResult<unknown> {
    try {
      const result = (this.#iterator as Iterator<unknown>).next();
      if (result.done) this.#finished = true;
      return result;
    } catch (error) {
      this.#finished = true; // an iterator that threw is done (ECMA-262: no return() after a throw)
      throw error;
    }
  }

  /** The next record of an async input; rejects with AbortError as soon as the signal fires. */
  nextAsync(signal: AbortSignal | undefined): Promise<IteratorResult<unknown>> {
    let read: Promise<IteratorResult<unknown>>;
    try {
      read = Promise.resolve(this.#iterator.next());
    } catch (error) {
      this.#finished = true;
      return Promise.reject(error);
    }
    // Noted before anyone else awaits the read, so that the notes are up to date when they resume.
    this.#pending = read;
    read.then(this.#onRead, this.#onReadFailed);
    // Without a signal, the iterator's own promise: no promise of ours per record.
    if (!signal) return read;
    if (signal.aborted) return Promise.reject(abortErrorFrom(signal));
    if (this.#abort?.signal !== signal) {
      this.#stopListening();
      const stopListening = onAbort(signal, () => this.#rejectWaiting?.(abortErrorFrom(signal)));
      this.#abort = { signal, stopListening };
    }
    return new Promise<IteratorResult<unknown>>((resolve, reject) => {
      this.#rejectWaiting = reject;
      read.then(
        (result) => {
          this.#rejectWaiting = undefined;
          resolve(result);
        },
        (error: unknown) => {
          this.#rejectWaiting = undefined;
          reject(error);
        },
      );
    });
  }

  /*
   * What a read's end tells: nothing pending any more (one read at a time: reading stops at an
   * abort), and the input finished when it ended or threw. Made once, not per read.
   */
  readonly #onRead = (result: IteratorResult<unknown>): void => {
    this.#pending = undefined;
    if (result.done) this.#finished = true;
  };

  readonly #onReadFailed = (): void => {
    this.#pending = undefined;
    this.#finished = true;
  };

  #stopListening(): void {
    this.#abort?.stopListening();
    this.#abort = undefined;
  }

  /**
   * Calls the iterator's `return()` once, unless it finished by itself. When an abort left a read
   * pending, `return()` is called but not awaited: an async generator runs it only after that
   * read, which may never come, while a hand-written iterator may use it to cancel the read.
   * An error from `return()` goes to `onError`; it never replaces the outcome of the run.
   */
  async close(onError: (error: unknown) => void): Promise<void> {
    this.#stopListening();
    if (this.#finished) return;
    this.#finished = true;
    const iterator = this.#iterator as { return?: () => unknown };
    if (typeof iterator.return !== 'function') return;
    try {
      const closing = Promise.resolve(iterator.return());
      if (this.#pending) closing.catch(onError);
      else await closing;
    } catch (error) {
      onError(error);
    }
  }
}
