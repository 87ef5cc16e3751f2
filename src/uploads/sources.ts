/** Turns each `UploadInput` into an `UploadSource`: a name, a size, and a way to open its bytes. */
import { type FileHandle, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { UploadError } from '../errors.js';
import { BodyMeter, type ChunkReader } from './body-stream.js';
import { FILE_CHUNK_BYTES, MAX_UPLOAD_BYTES, MEMORY_CHUNK_BYTES } from './limits.js';
import type { UploadInput, UploadStreamInput } from './types.js';

/** One file, ready to be sent. */
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
}

/**
 * Normalises one input. Paths are checked here (they must be readable regular files), so that
 * problems surface before any request; their bytes are read only when `open` is streamed.
 */
export async function toUploadSource(input: UploadInput): Promise<UploadSource> {
  if (typeof input === 'string') return fromPath(path.basename(input), input);
  if (input === null || typeof input !== 'object') {
    throw new UploadError(
      '',
      `Invalid upload input: expected a path or an object, got ${input === null ? 'null' : typeof input}.`,
    );
  }
  if ('path' in input && typeof input.path === 'string')
    return fromPath(input.name ?? path.basename(input.path), input.path);
  if ('data' in input) return fromData(input.name, input.data);
  if ('stream' in input) return fromStream(input);
  const name = typeof (input as { name?: unknown }).name === 'string' ? (input as { name: string }).name : '';
  throw new UploadError(
    name,
    `Invalid upload input ${JSON.stringify(name)}: give one of "path", "data" or "stream" (with "size").`,
  );
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

async function fromPath(name: string, filePath: string): Promise<UploadSource> {
  let size: number;
  try {
    const stats = await stat(filePath);
    if (!stats.isFile()) throw new Error('not a regular file');
    size = stats.size;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UploadError(name, `Cannot read ${JSON.stringify(filePath)} for file ${JSON.stringify(name)}: ${reason}`, {
      cause: error,
    });
  }
  assertUploadableSize(name, size);
  return {
    name,
    size,
    reopenable: true,
    open: (meter) => bodyStream(name, size, meter, fileReader(name, filePath, size)),
  };
}

/**
 * Reads a file in chunks on demand (backpressure kept), so memory stays flat for any size.
 * Not `fs.openAsBlob`: on Node 20 it reports at most 2 GiB for larger files, and its stream was
 * slower through fetch than these reads.
 * The size is checked again on open: a file that changed since it was listed is refused, not half-sent.
 */
function fileReader(name: string, filePath: string, size: number): ChunkReader {
  let handle: FileHandle | undefined;
  let closed = false;
  let position = 0;
  const changed = () =>
    new UploadError(
      name,
      `File ${JSON.stringify(filePath)} changed size while being uploaded as ${JSON.stringify(name)}.`,
    );
  const close = async () => {
    closed = true;
    const open = handle;
    handle = undefined;
    await open?.close();
  };
  const openChecked = async (): Promise<FileHandle> => {
    const opened = await open(filePath, 'r');
    // Cancelled while opening: nobody else will close it.
    if (closed) {
      await opened.close();
      throw new UploadError(name, `The upload of ${JSON.stringify(name)} was cancelled.`);
    }
    handle = opened;
    if ((await opened.stat()).size !== size) throw changed();
    return opened;
  };
  return {
    async read() {
      const file = handle ?? (await openChecked());
      const length = Math.min(FILE_CHUNK_BYTES, size - position);
      if (length === 0) return undefined;
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await file.read(buffer, 0, length, position);
      if (bytesRead === 0) throw changed();
      position += bytesRead;
      return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
    },
    close,
  };
}

function fromData(name: string, data: string | Uint8Array | Blob): UploadSource {
  if (data instanceof Blob) {
    assertUploadableSize(name, data.size);
    return {
      name,
      size: data.size,
      reopenable: true,
      open: (meter) => bodyStream(name, data.size, meter, iteratorReader(name, toAsyncIterator(data.stream()))),
    };
  }
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  if (!(bytes instanceof Uint8Array)) {
    throw new UploadError(
      name,
      `Invalid data for file ${JSON.stringify(name)}: expected a string, Uint8Array, Buffer or Blob.`,
    );
  }
  assertUploadableSize(name, bytes.byteLength);
  const size = bytes.byteLength;
  return { name, size, reopenable: true, open: (meter) => bodyStream(name, size, meter, sliceReader(bytes)) };
}

function fromStream(input: UploadStreamInput): UploadSource {
  const { name, size } = input;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
    throw new UploadError(
      name,
      `File ${JSON.stringify(name)} needs a declared "size" (a whole number of bytes) to be sent with Content-Length.`,
    );
  }
  if (!isStreamLike(input.stream)) {
    throw new UploadError(
      name,
      `The "stream" of file ${JSON.stringify(name)} must be a Node Readable, a web ReadableStream or an async iterable of bytes.`,
    );
  }
  assertUploadableSize(name, size);
  let opened = false;
  return {
    name,
    size,
    reopenable: false,
    open: (meter) => {
      if (opened)
        throw new UploadError(
          name,
          `The stream of file ${JSON.stringify(name)} was already read; it cannot be sent again.`,
        );
      opened = true;
      return bodyStream(name, size, meter, iteratorReader(name, toAsyncIterator(input.stream)));
    },
  };
}

function bodyStream(
  name: string,
  size: number,
  meter: BodyMeter | undefined,
  reader: ChunkReader,
): ReadableStream<Uint8Array> {
  return (meter ?? new BodyMeter(name, size)).stream(reader);
}

/** Hands out in-memory bytes in slices (views, not copies), so progress advances as they are sent. */
function sliceReader(bytes: Uint8Array): ChunkReader {
  let offset = 0;
  return {
    read: async () => {
      if (offset >= bytes.byteLength) return undefined;
      const end = Math.min(offset + MEMORY_CHUNK_BYTES, bytes.byteLength);
      const slice = bytes.subarray(offset, end);
      offset = end;
      return slice;
    },
    close: async () => undefined,
  };
}

type AnyStream = UploadStreamInput['stream'];

/** Reads a Node stream, async iterable or web stream on demand (backpressure kept), chunk by chunk. */
function iteratorReader(name: string, iterator: AsyncIterator<unknown>): ChunkReader {
  let done = false;
  return {
    async read() {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        return undefined;
      }
      const chunk: unknown = next.value;
      if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
      if (chunk instanceof Uint8Array) return chunk;
      throw new UploadError(name, `The stream of file ${JSON.stringify(name)} yielded a ${typeof chunk}, not bytes.`);
    },
    async close(reason) {
      if (done) return;
      done = true;
      // Lets a Node stream release its file descriptor or socket when the PUT is abandoned.
      await iterator.return?.(reason);
    },
  };
}

function isWebStream(stream: unknown): stream is ReadableStream<Uint8Array> {
  return typeof (stream as ReadableStream<Uint8Array> | null)?.getReader === 'function';
}

function isStreamLike(stream: unknown): stream is AnyStream {
  return isWebStream(stream) || (stream !== null && typeof stream === 'object' && Symbol.asyncIterator in stream);
}

function toAsyncIterator(stream: AnyStream): AsyncIterator<unknown> {
  if (isWebStream(stream)) {
    const reader = (stream as ReadableStream<Uint8Array>).getReader();
    return {
      next: async () => {
        const { done, value } = await reader.read();
        return done ? { done: true, value: undefined } : { done: false, value };
      },
      return: async (reason?: unknown) => {
        await reader.cancel(reason);
        return { done: true, value: undefined };
      },
    };
  }
  return (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
}
