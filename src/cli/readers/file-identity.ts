import { constants, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { InputError } from './types.js';

/**
 * What the CLI saw of an input file when it checked it, before anything was read: which file it is
 * (device and inode), its size and its modification time. The same four the upload reader checks.
 */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export function identityOf(stats: Stats): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
}

/** How `now` differs from what was `seen`, in words; undefined when it is the same file, unchanged. */
export function changeBetween(seen: FileIdentity, now: FileIdentity): string | undefined {
  if (now.dev !== seen.dev || now.ino !== seen.ino) return 'it was replaced by another file';
  if (now.size !== seen.size) return `its size went from ${seen.size} to ${now.size} bytes`;
  if (now.mtimeMs !== seen.mtimeMs) return 'it was modified';
  return undefined;
}

/**
 * An input file that changed between the moment it was checked and the end of its reading: an
 * exporter still writing it, or rewriting it in place. What was read after the change may be
 * another file's rows, or half a row, so nothing read after it is used.
 */
export class InputChangedError extends InputError {
  override name = 'InputChangedError';

  constructor(
    readonly file: string,
    /** What changed, in words: `it was replaced by another file`. */
    readonly change: string,
  ) {
    super(`${file} changed while it was read (${change}); nothing read after the change was used`);
  }
}

/** Throws {@link InputChangedError} unless the file is still the one that was seen, unchanged. */
export function assertUnchanged(file: string, seen: FileIdentity, now: Stats): void {
  const change = changeBetween(seen, identityOf(now));
  if (change !== undefined) throw new InputChangedError(file, change);
}

/**
 * Never waits to open: the path may have been swapped for a FIFO since it was checked (another
 * local user who can write its directory, a link re-pointed), and a FIFO opened for reading blocks
 * one of the runtime's few file-system threads until a writer comes, hanging the run before it
 * sends anything. Without a writer the open succeeds, and the check below refuses what it opened.
 * Regular files read the same with the flag. Windows has no such flag, and no FIFOs at a path.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Opens an input and makes sure the file opened is a regular file, and the one that was checked
 * (`seen`), unchanged: {@link InputChangedError} otherwise, before a byte of it is read.
 */
export async function openUnchanged(path: string, name: string, seen: FileIdentity | undefined): Promise<FileHandle> {
  const file = await open(path, OPEN_FLAGS);
  try {
    const now = await file.stat();
    // First: a FIFO may be given the inode number the file it replaced had freed.
    if (!now.isFile()) throw new InputChangedError(name, 'it is no longer a regular file');
    if (seen !== undefined) assertUnchanged(name, seen, now);
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}
