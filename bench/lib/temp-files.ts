/**
 * Generated inputs (CSV files, upload files) in one directory under os.tmpdir(), created once per
 * run, reused across rounds, and removed at the end. Never committed.
 */

import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export class TempFiles {
  readonly dir = path.join(os.tmpdir(), `push-api-bench-${process.pid}`);

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /** Writes a file from generated chunks unless one of the expected size exists already. */
  async ensure(name: string, size: number | undefined, chunks: () => Iterable<string | Uint8Array>): Promise<string> {
    const file = this.path(name);
    const existing = await stat(file).catch(() => undefined);
    if (existing && (size === undefined || existing.size === size)) return file;
    await mkdir(this.dir, { recursive: true });
    const out = createWriteStream(file);
    for (const chunk of chunks()) {
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    return file;
  }

  async removeAll(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
