/**
 * The one web stream a PUT body goes through: it pulls chunks from a source, reads a little ahead,
 * and holds the body to its declared size while counting the bytes it hands to the transport.
 */
import { UploadError } from '../errors.js';
import { READ_AHEAD_BYTES } from './limits.js';

/** Where the bytes of one attempt come from: the next chunk on each call, `undefined` at the end. */
export interface ChunkReader {
  read(): Promise<Uint8Array | undefined>;
  /**
   * True when the source knows it has no bytes left, without another `read`. The body then ends
   * with its last chunk: an HTTP/1.1 connection whose answer arrives before the request body has
   * ended is not reused, and the storage host answers as soon as it has `Content-Length` bytes.
   */
  atEnd?(): boolean;
  /** Releases the source (a file descriptor, a caller's stream). Safe to call more than once. */
  close(reason?: unknown): Promise<void>;
}

/** Told of every chunk handed to the transport, with the running total of the attempt. */
export type ByteCounter = (bytes: number) => void;

/**
 * Counts the bytes of one attempt and checks them against the declared size: Content-Length was
 * already sent, so a source that yields more or fewer bytes fails the attempt with a clear error.
 * That error (and the source's own, like a file that changed) is kept in `sourceError`, because
 * fetch reports it only as a generic network failure.
 */
export class BodyMeter {
  bytes = 0;
  sourceError: UploadError | undefined;
  readonly #readers = new Set<ChunkReader>();
  /** Sources being released after their body ended, awaited by `dispose`. */
  readonly #closing = new Set<Promise<void>>();

  constructor(
    private readonly name: string,
    private readonly size: number,
    private readonly onBytes: ByteCounter = () => undefined,
  ) {}

  /**
   * The body stream. A byte-length high-water mark makes the stream read the next chunks while
   * the transport is still writing the previous one, so disk and socket work overlap instead of
   * taking turns; it also bounds what is held in memory.
   */
  stream(reader: ChunkReader): ReadableStream<Uint8Array> {
    this.#readers.add(reader);
    const close = (reason?: unknown) => {
      this.#readers.delete(reader);
      return reader.close(reason);
    };
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          let chunk: Uint8Array | undefined;
          try {
            chunk = await reader.read();
          } catch (error) {
            if (error instanceof UploadError) this.sourceError = error;
            await close(error).catch(() => undefined);
            throw error;
          }
          if (chunk === undefined) {
            await close();
            if (this.bytes !== this.size) controller.error(this.#mismatch('fewer'));
            else controller.close();
            return;
          }
          this.bytes += chunk.byteLength;
          if (this.bytes > this.size) {
            await close().catch(() => undefined);
            controller.error(this.#mismatch('more'));
            return;
          }
          controller.enqueue(chunk);
          this.onBytes(this.bytes);
          if (this.bytes === this.size && reader.atEnd?.() === true) {
            controller.close();
            // The file is closed after the body has ended, not before it.
            const closing = close().catch(() => undefined);
            this.#closing.add(closing);
            await closing;
            this.#closing.delete(closing);
          }
        },
        cancel: close,
      },
      { highWaterMark: READ_AHEAD_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  /**
   * Releases any source the transport left open. fetch cancels its body when it aborts, but not
   * always when the connection fails before the body is read, and the stream may have read ahead.
   */
  async dispose(): Promise<void> {
    const readers = [...this.#readers];
    this.#readers.clear();
    await Promise.all([...readers.map((reader) => reader.close().catch(() => undefined)), ...this.#closing]);
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
