/** Files and bytes for upload tests: temp directories, patterned bytes, progress checks. */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { UploadProgress } from 'push-api-client';

export const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** Deterministic, non-repeating-looking bytes. */
export function patternBytes(size: number, seed = 1): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

/** A temp directory removed by the returned cleanup. */
export async function tempDir(): Promise<{
  dir: string;
  write(name: string, data: Uint8Array | string): Promise<string>;
  cleanup(): Promise<void>;
}> {
  const dir = await mkdtemp(path.join(tmpdir(), 'push-uploads-'));
  return {
    dir,
    async write(name, data) {
      const file = path.join(dir, name);
      await writeFile(file, data);
      return file;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Collects progress events and checks the invariants every caller relies on. */
export function progressRecorder(): {
  events: UploadProgress[];
  onProgress(p: UploadProgress): void;
  assertMonotonic(): void;
} {
  const events: UploadProgress[] = [];
  return {
    events,
    onProgress: (progress) => events.push({ ...progress }),
    assertMonotonic() {
      const perFile = new Map<string, number>();
      let last = 0;
      for (const event of events) {
        if (event.bytes < last) throw new Error(`total went back from ${last} to ${event.bytes}`);
        if (event.bytes > event.totalBytes) throw new Error(`total ${event.bytes} exceeds ${event.totalBytes}`);
        const previous = perFile.get(event.file) ?? 0;
        if (event.fileBytes < previous)
          throw new Error(`${event.file} went back from ${previous} to ${event.fileBytes}`);
        if (event.fileBytes > event.fileTotal) throw new Error(`${event.file} exceeds its size`);
        perFile.set(event.file, event.fileBytes);
        last = event.bytes;
      }
    },
  };
}
