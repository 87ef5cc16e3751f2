/**
 * The PUT body of one file. In this order:
 * - the metered stream its bytes go through (`BodyMeter`, over a `ChunkReader`);
 * - the source contract every kind of input (a path, bytes, a Blob, a stream) is turned into
 *   (`UploadSource`, by `toUploadSource` in uploader.ts), and the size one PUT may carry;
 * - the shape that makes the runtime send Content-Length (`sizedBody`).
 */
import { AbortError, UploadError } from '../errors.js';
import type { RequestBody } from '../http/types.js';
import { raceSignal } from '../internal/waits.js';
import { MAX_UPLOAD_BYTES } from './limits.js';
import { asUploadError } from './storage-errors.js';

// ── The metered stream ───────────────────────────────────────────────────────────────────────────
// One web stream per attempt: read-ahead, bytes counted as the transport takes them, size held.

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
type ByteCounter = (bytes: number) => void;

/**
 * The one web stream a PUT body goes through: it pulls chunks from a source, reads one chunk ahead,
 * and holds the body to its declared size while counting the bytes the transport takes.
 *
 * Bytes count when the transport takes them, not when they are read: fetch takes the next chunk
 * once the socket has taken the last one, so progress (and the stall timeout it keeps alive)
 * follows the network rather than the disk, which is megabytes ahead on a slow link.
 *
 * Counts the bytes of one attempt and checks them against the declared size: Content-Length was
 * already sent, so a source that yields more or fewer bytes fails the attempt with a clear error.
 * That error (and the source's own, like a file that changed) is kept in `sourceError`, because
 * fetch reports it only as a generic network failure.
 */
export class BodyMeter {
  bytes = 0;
  sourceError: UploadError | undefined;
  /**
   * How long the body waited for the transport to ask for its next chunk: the time the link, not
   * the source, set the pace. A slow source (a caller's stream that trickles) adds nothing.
   */
  transportWaitMs = 0;
  readonly #readers = new Set<ChunkReader>();
  /** Sources being released after their body ended, awaited by `dispose`. */
  readonly #closing = new Set<Promise<void>>();

  readonly #name: string;
  readonly #size: number;
  readonly #onBytes: ByteCounter;

  constructor(name: string, size: number, onBytes: ByteCounter = () => undefined) {
    this.#name = name;
    this.#size = size;
    this.#onBytes = onBytes;
  }

  /**
   * The body stream. It holds no queue of its own (each chunk is handed over as the transport asks
   * for it) and reads the next chunk from the source while the transport writes the last one, so
   * disk and socket work overlap instead of taking turns, with one chunk in memory ahead.
   */
  stream(reader: ChunkReader): ReadableStream<Uint8Array> {
    this.#readers.add(reader);
    const close = (reason?: unknown) => {
      this.#readers.delete(reader);
      return reader.close(reason);
    };
    /** The next chunk, read while the transport writes the one before it. */
    let ahead: Promise<Uint8Array | undefined> | undefined;
    /** When the last chunk was handed over: from then until the next pull, the transport set the pace. */
    let handedAt: number | undefined;
    const readAhead = () => {
      ahead = reader.read();
      // Awaited by the next pull; a failure with nobody asking again is not an unhandled rejection.
      ahead.catch(() => undefined);
    };
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          if (handedAt !== undefined) this.transportWaitMs += performance.now() - handedAt;
          let chunk: Uint8Array | undefined;
          try {
            chunk = await (ahead ?? reader.read());
          } catch (error) {
            if (error instanceof UploadError) this.sourceError = error;
            await close(error).catch(() => undefined);
            throw error;
          } finally {
            ahead = undefined;
          }
          if (chunk === undefined) {
            await close();
            if (this.bytes !== this.#size) controller.error(this.#mismatch('fewer'));
            else controller.close();
            return;
          }
          this.bytes += chunk.byteLength;
          if (this.bytes > this.#size) {
            await close().catch(() => undefined);
            controller.error(this.#mismatch('more'));
            return;
          }
          controller.enqueue(chunk);
          handedAt = performance.now();
          this.#onBytes(this.bytes);
          if (this.bytes === this.#size && reader.atEnd?.() === true) {
            controller.close();
            // The file is closed after the body has ended, not before it.
            const closing = close().catch(() => undefined);
            this.#closing.add(closing);
            await closing;
            this.#closing.delete(closing);
            return;
          }
          readAhead();
        },
        // A read still on its way is not waited for (a source may never answer it): releasing the
        // source ends it, and its failure is already caught.
        cancel: close,
      },
      { highWaterMark: 0 },
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
    const got = direction === 'more' ? `more than ${this.#size}` : `only ${this.bytes}`;
    this.sourceError = new UploadError(
      this.#name,
      `File ${JSON.stringify(this.#name)} yielded ${got} bytes, but its declared size is ${this.#size}.`,
    );
    return this.sourceError;
  }
}

// ── The source contract ──────────────────────────────────────────────────────────────────────────
// What every kind of upload input becomes, and the size one PUT may carry.

/** One file, ready to be sent: what every kind of upload input becomes (a name, a size, and a way to stream its bytes). */
export interface UploadSource {
  name: string;
  size: number;
  /** Whether `open` may be called again (for a retry or a re-signed address). False for streams. */
  reopenable: boolean;
  /**
   * A fresh stream of the content, counted and held to `size` by `meter` (a plain one by default).
   * A one-shot stream throws on the second call.
   */
  open(meter?: BodyMeter): ReadableStream<Uint8Array>;
  /**
   * Closes a caller's stream that `open` never read (its file did not start: the run stopped, or
   * another input was refused), so that its file descriptor or socket is not held past the call.
   * Does nothing once opened, and for inputs the upload opens itself.
   */
  discard?(): void;
}

/** Refuses sizes the service cannot take in one PUT. */
export function assertUploadableSize(name: string, size: number): void {
  if (size > MAX_UPLOAD_BYTES) {
    throw new UploadError(
      name,
      `File ${JSON.stringify(name)} is ${size} bytes; the limit for one upload is ${MAX_UPLOAD_BYTES} bytes (5 GiB).`,
    );
  }
}

/** The metered stream of one attempt over `reader`. */
export function bodyStream(
  name: string,
  size: number,
  meter: BodyMeter | undefined,
  reader: ChunkReader,
): ReadableStream<Uint8Array> {
  return (meter ?? new BodyMeter(name, size)).stream(reader);
}

// ── The sized PUT body ───────────────────────────────────────────────────────────────────────────
// The PUT body of one attempt, in the shape that makes the runtime itself send Content-Length:
// storage hosts refuse a chunked PUT (411/501), and some runtimes drop a Content-Length header
// set by hand on a stream body (Deno and workerd send it chunked). Whatever the shape, the bytes
// come from the attempt's metered stream, so progress, the stall timeout and the size checks work
// the same everywhere.

/**
 * A Blob that has no bytes of its own: its size is the declared one, and its content is the
 * stream it is given. Runtimes that implement fetch's body extraction in JavaScript (Node's
 * undici, Deno, edge-runtime) take a Blob body's length from `size` and its bytes from `stream()`,
 * so the body keeps a known length while being read chunk by chunk from disk or memory.
 */
class StreamedBlob extends Blob {
  readonly #size: number;
  readonly #stream: ReadableStream<Uint8Array>;

  constructor(size: number, stream: ReadableStream<Uint8Array>) {
    super([]);
    this.#size = size;
    this.#stream = stream;
  }

  override get size(): number {
    return this.#size;
  }

  override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
    // One attempt, one read: a second reader gets the stream's "locked" error.
    return this.#stream as ReadableStream<Uint8Array<ArrayBuffer>>;
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return new Response(this.stream()).arrayBuffer();
  }

  override text(): Promise<string> {
    return new Response(this.stream()).text();
  }

  override slice(): Blob {
    throw new TypeError('An upload body cannot be sliced');
  }
}

let blobsReadThroughStream: boolean | undefined;

/**
 * Whether this runtime reads a Blob body through its `stream()` method, tried once on a Request
 * (which extracts its body as fetch does). Bun and workerd read a Blob's own bytes natively, so a
 * StreamedBlob would go out empty there.
 */
function readsBlobsThroughStream(): boolean {
  if (blobsReadThroughStream === undefined) {
    let called = false;
    class Probe extends Blob {
      override stream(): ReadableStream<Uint8Array<ArrayBuffer>> {
        called = true;
        return super.stream();
      }
    }
    try {
      new Request('http://probe.invalid/', { method: 'PUT', body: new Probe(['x']) });
    } catch {
      // A runtime that refuses the probe is not one that reads through stream().
    }
    blobsReadThroughStream = called;
  }
  return blobsReadThroughStream;
}

/**
 * Whether an upload's PUT sets Content-Length by hand. Everywhere, the body is shaped so that the
 * runtime sends it (`sizedBody`), and the header is set as well so that msw handlers see it, except
 * on Node 20 and 22 with a Blob body: their fetch adds its own Content-Length to one set by hand,
 * which the npm undici's dispatcher (installed by any process that imports undici before its
 * first fetch, for a proxy say) refuses as invalid, failing every upload (Node 24's does not).
 * There, msw handlers see no Content-Length header; the emulator judges the body's length as the
 * runtime would send it.
 */
export function putSetsContentLength(): boolean {
  if (!readsBlobsThroughStream()) return true;
  const node = (globalThis as { process?: { versions?: { node?: string; bun?: string; deno?: string } } }).process
    ?.versions;
  if (node?.node === undefined || node.bun !== undefined || node.deno !== undefined) return true;
  return Number(node.node.split('.')[0]) >= 24;
}

/**
 * Reads an empty file's source to its end before its PUT, whose body is then no bytes: every
 * runtime sends that with `Content-Length: 0`, where Deno sends an empty Blob (and any stream)
 * chunked, which storage hosts refuse. Reading first keeps a file that changed from being stored: a
 * source that yields bytes after all fails its size check before anything is sent. Bounded as an
 * attempt is: a source that never ends fails after `timeoutMs`, and `signal` ends the read at once.
 * Resolves with why the file cannot be sent, or undefined once its source ended empty.
 */
export async function readEmptySource(
  source: UploadSource,
  meter: BodyMeter,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<UploadError | AbortError | undefined> {
  const reader = source.open(meter).getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), timeoutMs);
  });
  const drained = (async () => {
    while (!(await reader.read()).done) {
      // The meter fails the stream on its first byte: an empty file yields none.
    }
    return 'ended' as const;
  })();
  // Raced below: a failure after the race was lost is nobody's to handle.
  drained.catch(() => undefined);
  try {
    const outcome = await raceSignal(Promise.race([drained, timedOut]), signal);
    if (outcome === 'ended') return undefined;
    return new UploadError(
      source.name,
      `Upload of ${JSON.stringify(source.name)} failed: its source, declared empty, did not end within ${timeoutMs} ms.`,
    );
  } catch (error) {
    if (error instanceof AbortError) return error;
    return meter.sourceError ?? asUploadError(source.name, error);
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => undefined);
  }
}

/** workerd's stream that declares its length, so that a stream body is sent with Content-Length. */
type FixedLengthStreamConstructor = new (length: number) => TransformStream<Uint8Array, Uint8Array>;

/**
 * The body for the `size` bytes of `stream`:
 * - a StreamedBlob where Blob bodies are read through `stream()` (Node, Deno, edge-runtime);
 * - the stream through workerd's `FixedLengthStream` where it exists (Cloudflare Workers);
 * - else the stream itself, with the Content-Length header the caller sets (Bun keeps it).
 */
export function sizedBody(size: number, stream: ReadableStream<Uint8Array>): RequestBody {
  if (readsBlobsThroughStream()) return new StreamedBlob(size, stream);
  const FixedLengthStream = (globalThis as { FixedLengthStream?: FixedLengthStreamConstructor }).FixedLengthStream;
  if (FixedLengthStream !== undefined) return stream.pipeThrough(new FixedLengthStream(size));
  return stream;
}
