/**
 * Uploads from a path on disk. Node's file system (also offered by Bun and Deno) is needed, so this
 * file has a twin, file-source.web.ts, that the build for workers and edge runtimes uses instead.
 */
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
  let size: number;
  let mtimeMs: number;
  try {
    const stats = await stat(filePath);
    if (!stats.isFile()) throw new Error('not a regular file');
    size = stats.size;
    mtimeMs = stats.mtimeMs;
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
    open: (meter) => bodyStream(name, size, meter, fileReader(name, filePath, { size, mtimeMs })),
  };
}

/**
 * Reads a file in chunks on demand (backpressure kept), so memory stays flat for any size.
 * Not `fs.openAsBlob`: Deno's reads the whole file into memory, and Bun reads it natively, past
 * the meter that reports progress and keeps the attempt's timeout alive.
 *
 * Content-Length promises `size` bytes, so the file must be the one that was listed, unchanged
 * until it is read: its size and modification time are checked against the listing before the
 * last chunk is handed over (and, for a file of several chunks, when it is opened, so that a file
 * that changed meanwhile fails before its bytes are sent). A file that grew would otherwise be
 * sent cut at its old size, and reported uploaded; holding back the last chunk means the storage
 * host never receives a whole body. A file of one chunk costs an open, a read, one `fstat` and a
 * close.
 */
function fileReader(name: string, filePath: string, listed: { size: number; mtimeMs: number }): ChunkReader {
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
  const assertUnchanged = async (file: FileHandle) => {
    const stats = await file.stat();
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
    const opened = await open(filePath, 'r');
    // Cancelled while opening: nobody else will close it.
    if (closed) {
      await opened.close();
      throw new UploadError(name, `The upload of ${JSON.stringify(name)} was cancelled.`);
    }
    handle = opened;
    if (size > FILE_CHUNK_BYTES) await assertUnchanged(opened);
    return opened;
  };
  return {
    async read() {
      const file = handle ?? (await openChecked());
      const length = Math.min(FILE_CHUNK_BYTES, size - position);
      if (length === 0) {
        if (size === 0) await assertUnchanged(file);
        return undefined;
      }
      const buffer = Buffer.allocUnsafe(length);
      const { bytesRead } = await file.read(buffer, 0, length, position);
      if (bytesRead < length) {
        // A local file reads short only at its end: it shrank. Some network file systems read
        // short anywhere, so the size decides.
        const { size: now } = await file.stat();
        if (now !== size || bytesRead === 0) throw resized(now);
      }
      position += bytesRead;
      if (position === size) await assertUnchanged(file);
      return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
    },
    atEnd: () => position === size,
    close,
  };
}
