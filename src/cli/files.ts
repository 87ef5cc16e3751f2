import { randomBytes } from 'node:crypto';
import { closeSync, openSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './exit-codes.js';

/**
 * A new file beside `target` with a random name, created exclusively (`wx`, mode 0600): it cannot
 * be a link planted in advance, and no other run writes to it. Renamed over `target` when done.
 */
export function createTempBeside(target: string, option: string): { path: string; fd: number } {
  let info: ReturnType<typeof statSync> | undefined;
  try {
    info = statSync(target);
  } catch {
    info = undefined;
  }
  if (info?.isDirectory()) throw new UsageError(`${option} ${target}: is a directory, not a file`);
  const path = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    return { path, fd: openSync(path, 'wx', 0o600) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${option} ${target}: cannot write there (${code})`);
  }
}

/** Writes `text` to `target` atomically: a crash mid-write leaves the previous file, never half a file. */
export function writeFileAtomically(target: string, text: string, option: string): void {
  const temp = createTempBeside(target, option);
  try {
    writeSync(temp.fd, text);
    closeSync(temp.fd);
    renameSync(temp.path, target);
  } catch (error) {
    try {
      unlinkSync(temp.path);
    } catch {
      // already renamed or gone
    }
    throw error;
  }
}
