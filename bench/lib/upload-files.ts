/**
 * Upload inputs: real bytes on disk (a sparse file would be read from nowhere). A 1 MiB block of
 * random bytes is written over and over, each copy stamped with its position so no two are equal.
 */
import { randomBytes } from 'node:crypto';
import type { TempFiles } from './temp-files.js';

export const MiB = 1024 * 1024;

function* blocks(size: number, seed: number): Generator<Uint8Array> {
  const block = randomBytes(MiB);
  for (let offset = 0; offset < size; offset += MiB) {
    const copy = Buffer.from(block.subarray(0, Math.min(MiB, size - offset)));
    copy.writeUInt32LE((offset / MiB + seed) >>> 0, 0);
    yield copy;
  }
}

export function ensureUploadFile(temp: TempFiles, name: string, size: number, seed = 0): Promise<string> {
  return temp.ensure(name, size, () => blocks(size, seed));
}

export async function ensureUploadFiles(temp: TempFiles, count: number, size: number): Promise<string[]> {
  const files: string[] = [];
  for (let i = 0; i < count; i++) files.push(await ensureUploadFile(temp, `small-${i}.bin`, size, i * 7));
  return files;
}
