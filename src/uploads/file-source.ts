/**
 * Uploads from a path on disk. Node's file system (also offered by Bun and Deno) is needed, so this
 * file has a twin, file-source.web.ts, that the build for workers and edge runtimes uses instead.
 */
import { constants } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { UploadError } from '../errors.js';
import { FILE_CHUNK_BYTES } from './limits.js';
import type { ChunkReader } from './put-body.js';
import { assertUploadableSize, bodyStream, type UploadSource } from './put-body.js';

/**
 * A file to upload, named by `name` or the path's basename. The path is checked here (a readable
 * regular file), so that problems surface before any request; its bytes are read only when the
 * body is streamed.
 */
export async function fileUploadSource(filePath: string, name = path.basename(filePath)): Promise<UploadSource> {
  let listed: ListedFile;
  try {
    const stats = await stat(filePath);
    if (!stats.isFile()) throw new Error('not a regular file');
    listed = { size: stats.size, mtimeMs: stats.mtimeMs, dev: stats.dev, ino: stats.ino };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UploadError(name, `Cannot read ${JSON.stringify(filePath)} for file ${JSON.stringify(name)}: ${reason}`, {
      cause: error,
    });
  }
  const { size } = listed;
  assertUploadableSize(name, size);
  return {
    name,
    size,
    reopenable: true,
    open: (meter) => bodyStream(name, size, meter, fileReader(name, filePath, listed)),
  };
}

/** What the listing saw of a file: what it must still be when its bytes are sent. */
interface ListedFile {
  size: number;
  mtimeMs: number;
  dev: number;
  ino: number;
}

/**
 * Opening never waits: a path swapped for a FIFO (or a device) after the listing would otherwise
 * block one of the runtime's few file-system threads until a writer came, and with it every file
 * and DNS operation of the process. Without a writer the open succeeds, and the checks below
 * refuse what it opened. Windows has no such flag, and no FIFOs at a path.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

// ── Reads, a few at a time ───────────────────────────────────────────────────────────────────────

/**
 * Node reads files on libuv's thread pool, 4 threads unless the process raised UV_THREADPOOL_SIZE,
 * shared with zlib, crypto and DNS lookups. Twice that many reads keep every thread busy with one
 * more queued behind it, and leave uploads a share of the pool when other work fills it too.
 */
export const DISK_READS_AT_ONCE = 8;

/**
 * Admits a few file reads at a time, first come first served: one instance per loaded copy of the
 * package (per thread, then). An upload run starts dozens of PUTs at once, and each body's first
 * pull reads a chunk: sent to the thread pool together, those reads waited there 30–50 ms, each
 * with its 1 MiB buffer already allocated, long enough for V8 to move the buffers to the old
 * generation and collect them only in full collections. Waiting here instead, a read takes its
 * buffer when it is about to be served (the measurements are in bench/README.md). Bun and Deno read
 * on pools of their own; a few reads at a time keep the disk just as busy there.
 */
export class ReadSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Runs `read` once a slot is free, and frees the slot when it settles. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await read();
    } finally {
      // The slot passes straight to the next waiter, so a newcomer cannot take it in between.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

const diskReads = new ReadSlots(DISK_READS_AT_ONCE);

// ── The file reader ──────────────────────────────────────────────────────────────────────────────

/**
 * Reads a file in chunks on demand (backpressure kept), so memory stays flat for any size.
 * Not `fs.openAsBlob`: Deno's reads the whole file into memory, and Bun reads it natively, past
 * the meter that reports progress and keeps the attempt's timeout alive.
 *
 * Content-Length promises `size` bytes, so the file must be the one that was listed, unchanged
 * until it is read: its identity (the same regular file), size and modification time are checked
 * against the listing before the
 * last chunk is handed over (and, for a file of several chunks, when it is opened, so that a file
 * that changed meanwhile fails before its bytes are sent). A file that grew would otherwise be
 * sent cut at its old size, and reported uploaded; holding back the last chunk means the storage
 * host never receives a whole body. A file of one chunk costs an open, a read, one `fstat` and a
 * close.
 */
function fileReader(name: string, filePath: string, listed: ListedFile): ChunkReader {
  const { size } = listed;
  let handle: FileHandle | undefined;
  let closed = false;
  let position = 0;
  const changed = (what: string) =>
    new UploadError(
      name,
      `File ${JSON.stringify(filePath)} ${what} while being uploaded as ${JSON.stringify(name)}; it was not uploaded.`,
    );
  const resized = (now: number) => changed(`changed size (from ${size} to ${now} bytes)`);
  const cancelled = () => new UploadError(name, `The upload of ${JSON.stringify(name)} was cancelled.`);
  /** The open file's stats, once they show it is the file that was listed. */
  const statSameFile = async (file: FileHandle) => {
    const stats = await file.stat();
    // Another file put at the path (a rename over it, a link pointed elsewhere, a FIFO or device).
    if (!stats.isFile() || stats.ino !== listed.ino || stats.dev !== listed.dev) throw changed('was replaced');
    return stats;
  };
  const assertUnchanged = async (file: FileHandle) => {
    const stats = await statSameFile(file);
    if (stats.size !== size) throw resized(stats.size);
    if (stats.mtimeMs !== listed.mtimeMs) throw changed('was modified');
  };
  const close = async () => {
    closed = true;
    const open = handle;
    handle = undefined;
    await open?.close();
  };
  const openChecked = async (): Promise<FileHandle> => {
    const opened = await open(filePath, OPEN_FLAGS);
    // Cancelled while opening: nobody else will close it.
    if (closed) {
      await opened.close();
      throw cancelled();
    }
    handle = opened;
    if (size > FILE_CHUNK_BYTES) await assertUnchanged(opened);
    return opened;
  };
  const unreadable = (error: unknown) =>
    error instanceof UploadError
      ? error
      : new UploadError(
          name,
          `Cannot read ${JSON.stringify(filePath)} for file ${JSON.stringify(name)}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
  const readChunk = async (): Promise<Uint8Array | undefined> => {
    // Released while waiting for its turn (the attempt was cancelled): nothing to open or read.
    if (closed) throw cancelled();
    const file = handle ?? (await openChecked());
    const length = Math.min(FILE_CHUNK_BYTES, size - position);
    if (length === 0) {
      if (size === 0) await assertUnchanged(file);
      return undefined;
    }
    const buffer = Buffer.allocUnsafe(length);
    // A read that fails may be a FIFO or device put at the path (it cannot seek): say so if it is.
    const { bytesRead } = await file.read(buffer, 0, length, position).catch(async (error: unknown) => {
      await statSameFile(file);
      throw error;
    });
    if (bytesRead < length) {
      // A local file reads short only at its end: it shrank. Some network file systems read
      // short anywhere, so the size decides.
      const { size: now } = await statSameFile(file);
      if (now !== size || bytesRead === 0) throw resized(now);
    }
    position += bytesRead;
    if (position === size) await assertUnchanged(file);
    return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
  };
  return {
    read: () => diskReads.run(readChunk).catch((error: unknown) => Promise.reject(unreadable(error))),
    atEnd: () => position === size,
    close,
  };
}
