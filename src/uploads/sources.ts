/** Turns each `UploadInput` into an `UploadSource`: a name, a size, and a way to open its bytes. */
import { UploadError } from '../errors.js';
import { fileUploadSource } from './file-source.js';
import { MEMORY_CHUNK_BYTES } from './limits.js';
import type { ChunkReader } from './put-body.js';
import { assertUploadableSize, bodyStream, type UploadSource } from './put-body.js';
import type { UploadInput, UploadStreamInput } from './types.js';

/**
 * Normalises one input. Paths are checked here (they must be readable regular files), so that
 * problems surface before any request; their bytes are read only when `open` is streamed.
 */
export async function toUploadSource(input: UploadInput): Promise<UploadSource> {
  if (typeof input === 'string') return fileUploadSource(input);
  if (input === null || typeof input !== 'object') {
    throw new UploadError(
      '',
      `Invalid upload input: expected a path or an object, got ${input === null ? 'null' : typeof input}.`,
    );
  }
  if ('path' in input && typeof input.path === 'string') return fileUploadSource(input.path, input.name);
  if ('data' in input) return fromData(input.name, input.data);
  if ('stream' in input) return fromStream(input);
  const name = typeof (input as { name?: unknown }).name === 'string' ? (input as { name: string }).name : '';
  throw new UploadError(
    name,
    `Invalid upload input ${JSON.stringify(name)}: give one of "path", "data" or "stream" (with "size").`,
  );
}

function fromData(name: string, data: string | Uint8Array | Blob): UploadSource {
  if (data instanceof Blob) {
    assertUploadableSize(name, data.size);
    return {
      name,
      size: data.size,
      reopenable: true,
      open: (meter) =>
        bodyStream(name, data.size, meter, iteratorReader(name, toAsyncIterator(data.stream()), data.size)),
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
  if (!isStreamLike(input.stream)) {
    throw new UploadError(
      name,
      `The "stream" of file ${JSON.stringify(name)} must be a Node Readable, a web ReadableStream or an async iterable of bytes.`,
    );
  }
  try {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw new UploadError(
        name,
        `File ${JSON.stringify(name)} needs a declared "size" (a whole number of bytes) to be sent with Content-Length.`,
      );
    }
    assertUploadableSize(name, size);
  } catch (error) {
    // Refused, its stream is never read: it is closed, as those of the other inputs are.
    closeUnread(input.stream);
    throw error;
  }
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
    discard: () => {
      if (opened) return;
      opened = true;
      closeUnread(input.stream);
    },
  };
}

/**
 * Closes a stream nobody read: a Node stream is destroyed, a web stream cancelled, an async
 * iterable (a generator) returned. What closing it says (a rejected cancel, a generator's
 * complaint) is about a stream the upload no longer needs, so it is left out.
 */
function closeUnread(stream: AnyStream): void {
  try {
    if (isWebStream(stream)) {
      if (!stream.locked) stream.cancel().catch(() => undefined);
      return;
    }
    const destroy = (stream as { destroy?: unknown }).destroy;
    if (typeof destroy === 'function') {
      destroy.call(stream);
      return;
    }
    const result = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
    if (result !== undefined) Promise.resolve(result).catch(() => undefined);
  } catch {
    // A stream whose close throws is one the caller built oddly; the upload's own outcome stands.
  }
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
    atEnd: () => offset >= bytes.byteLength,
    close: async () => undefined,
  };
}

type AnyStream = UploadStreamInput['stream'];

/**
 * Reads a Node stream, async iterable or web stream on demand (backpressure kept), chunk by chunk.
 * `exactSize`: the iterator yields exactly this many bytes (a Blob's stream), so the body can end
 * with its last chunk; a caller's stream is read until it says it is done.
 */
function iteratorReader(name: string, iterator: AsyncIterator<unknown>, exactSize?: number): ChunkReader {
  let done = false;
  let reading = false;
  let bytes = 0;
  return {
    atEnd: () => bytes === exactSize,
    async read() {
      reading = true;
      let next: IteratorResult<unknown>;
      try {
        next = await iterator.next();
      } catch (error) {
        // Closed by the upload (an abort, a timeout): the stream's complaint is about that, not its own.
        if (done) throw error;
        throw streamFailed(name, error);
      } finally {
        reading = false;
      }
      if (next.done) {
        done = true;
        return undefined;
      }
      const chunk: unknown = next.value;
      const bytesOfChunk = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      if (bytesOfChunk instanceof Uint8Array) {
        bytes += bytesOfChunk.byteLength;
        return bytesOfChunk;
      }
      throw new UploadError(name, `The stream of file ${JSON.stringify(name)} yielded a ${typeof chunk}, not bytes.`);
    },
    async close(reason) {
      if (done) return;
      done = true;
      // Lets a Node stream release its file descriptor or socket when the PUT is abandoned.
      const closing = iterator.return?.(reason);
      // An async generator runs `return()` only after its pending `next()`; one that never yields
      // again would hold the upload forever, so the close goes on without it.
      if (reading) closing?.catch(() => undefined);
      else await closing;
    },
  };
}

/**
 * The caller's stream failed while it was read. fetch would report this as a bare "fetch failed"
 * with the caller's error buried in its causes, so the file's error names the source instead.
 */
function streamFailed(name: string, error: unknown): UploadError {
  const reason = error instanceof Error ? error.message : String(error);
  return new UploadError(name, `The stream of file ${JSON.stringify(name)} failed: ${reason}`, { cause: error });
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
  const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  const destroy = (stream as { destroy?: unknown }).destroy;
  if (typeof destroy !== 'function') return iterator;
  // A Node stream's iterator runs `return()` only once a pending `next()` settles, which never
  // happens while the stream stalls: an abort or a timeout would wait for it forever. Destroying
  // the stream settles that read, then the iterator closes as usual.
  return {
    next: () => iterator.next(),
    return: async (reason?: unknown) => {
      destroy.call(stream);
      return (await iterator.return?.(reason)) ?? { done: true, value: undefined };
    },
  };
}
