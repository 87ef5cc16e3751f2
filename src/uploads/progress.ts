/** Progress of an upload call: per-attempt byte counts (see put-body.ts) feeding one monotonic total. */

import type { Logger } from '../http/public-types.js';
import { ignoreRejection } from '../internal/logger.js';
import type { UploadProgress } from './types.js';

/**
 * Totals for one `upload` call. Each file reports the bytes of its current attempt; the tracker
 * keeps the file's high-water mark, so a re-sent attempt does not move the totals backwards and
 * only counts again past the point the previous attempt reached.
 */
export class ProgressTracker {
  readonly #marks = new Map<string, number>();
  #bytes = 0;
  readonly #onProgress: ((progress: UploadProgress) => void) | undefined;
  readonly #logger: Logger;

  constructor(
    readonly totalBytes: number,
    onProgress: ((progress: UploadProgress) => void) | undefined,
    logger: Logger,
  ) {
    this.#onProgress = onProgress;
    this.#logger = logger;
  }

  /** Records that the current attempt of `file` has sent `attemptBytes` so far. */
  update(file: string, fileTotal: number, attemptBytes: number): void {
    const mark = this.#marks.get(file) ?? 0;
    if (attemptBytes <= mark) return;
    this.#marks.set(file, attemptBytes);
    this.#bytes += attemptBytes - mark;
    this.#emit({ file, fileBytes: attemptBytes, fileTotal, bytes: this.#bytes, totalBytes: this.totalBytes });
  }

  /** A file finished: all its bytes count, and an empty file gets its one event too. */
  complete(file: string, fileTotal: number): void {
    if (fileTotal === 0 && !this.#marks.has(file)) {
      this.#marks.set(file, 0);
      this.#emit({ file, fileBytes: 0, fileTotal, bytes: this.#bytes, totalBytes: this.totalBytes });
      return;
    }
    this.update(file, fileTotal, fileTotal);
  }

  #emit(progress: UploadProgress): void {
    if (this.#onProgress === undefined) return;
    // A broken progress bar must not fail an upload, nor, when it is async and rejects, become an
    // unhandled rejection that ends the process.
    const threw = (error: unknown) =>
      this.#logger.warn('push-api-client onProgress callback threw', {
        error: error instanceof Error ? error.message : String(error),
      });
    try {
      ignoreRejection(this.#onProgress(progress), threw);
    } catch (error) {
      threw(error);
    }
  }
}
