import type { Stats } from 'node:fs';
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
    change: string,
  ) {
    super(`${file} changed while it was read (${change}); nothing read after the change was used`);
  }
}

/** Throws {@link InputChangedError} unless the file is still the one that was seen, unchanged. */
export function assertUnchanged(file: string, seen: FileIdentity, now: Stats): void {
  const change = changeBetween(seen, identityOf(now));
  if (change !== undefined) throw new InputChangedError(file, change);
}
