/** Byte counting for uploads: per-attempt meters feeding one monotonic progress tracker. */
import { UploadError } from '../errors.js';
import type { Logger } from '../http/types.js';
import type { UploadProgress } from './types.js';

/**
 * Totals for one `upload` call. Each file reports the bytes of its current attempt; the tracker
 * keeps the file's high-water mark, so a re-sent attempt does not move the totals backwards and
 * only counts again past the point the previous attempt reached.
 */
export class ProgressTracker {
  readonly #marks = new Map<string, number>();
  #bytes = 0;

  constructor(
    readonly totalBytes: number,
    private readonly onProgress: ((progress: UploadProgress) => void) | undefined,
    private readonly logger: Logger,
  ) {}

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
    if (this.onProgress === undefined) return;
    try {
      this.onProgress(progress);
    } catch (error) {
      // A broken progress bar must not fail an upload.
      this.logger.warn('push-api-client onProgress callback threw', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/**
 * Counts bytes as the transport pulls them and holds the stream to its declared size: Content-Length
 * was already sent, so a stream that yields more or fewer bytes fails the attempt with a clear error.
 * Such errors (and the source's own, like a file that changed) are kept in `sourceError`, because
 * fetch reports them only as a generic network failure.
 */
export class MeteredBody {
  bytes = 0;
  sourceError: UploadError | undefined;

  constructor(
    private readonly name: string,
    private readonly size: number,
    private readonly onBytes: (bytes: number) => void,
  ) {}

  wrap(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (error instanceof UploadError) this.sourceError = error;
          throw error;
        }
        const { done, value } = chunk;
        if (done) {
          if (this.bytes !== this.size) controller.error(this.#mismatch('fewer'));
          else controller.close();
          return;
        }
        this.bytes += value.byteLength;
        if (this.bytes > this.size) {
          await reader.cancel().catch(() => undefined);
          controller.error(this.#mismatch('more'));
          return;
        }
        controller.enqueue(value);
        this.onBytes(this.bytes);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  #mismatch(direction: 'more' | 'fewer'): UploadError {
    const got = direction === 'more' ? `more than ${this.size}` : `only ${this.bytes}`;
    this.sourceError = new UploadError(
      this.name,
      `File ${JSON.stringify(this.name)} yielded ${got} bytes, but its declared size is ${this.size}.`,
    );
    return this.sourceError;
  }
}
