/**
 * A path swapped between its listing and its upload (by another local user, or a job that renames
 * files into place): the file that is opened must be the one that was listed. Real HTTP on
 * 127.0.0.1; the swap happens while the upload addresses are being asked for.
 */
import { execFileSync } from 'node:child_process';
import { readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { UploadError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { patternBytes, tempDir } from '../support/files.js';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();

describe('a path swapped after its listing', () => {
  it('for a FIFO: the file fails as replaced, and the process can still read files', async () => {
    const files = await tempDir();
    try {
      const file = await files.write('report.csv', patternBytes(4096));
      const fifo = path.join(files.dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      const service = await start(({ route, hit }) => {
        // Renamed over the listed file while the addresses are asked for; nobody ever writes to it.
        if (route === 'upload-urls' && hit === 1) execFileSync('mv', [fifo, file]);
        return false;
      });
      // Each attempt opens the path again: four blocked opens would take every thread libuv has.
      const client = service.client({ timeoutMs: 1_000, maxRetries: 4, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
      const report = await client.uploads.upload(HOSTILE_APP_ID, [file]);
      const [result] = report.files;
      expect(result?.status).toBe('failed');
      expect(result?.error).toBeInstanceOf(UploadError);
      expect(result?.error?.message).toContain('was replaced while being uploaded as "report.csv"');
      expect(service.on('storage')).toHaveLength(0);
      // A blocking open of the FIFO would hold a file-system thread of this process for good.
      const other = await files.write('other.txt', 'still readable');
      const read = await Promise.race([
        readFile(other, 'utf8'),
        new Promise((resolve) => setTimeout(resolve, 2_000, 'blocked')),
      ]);
      expect(read).toBe('still readable');
    } finally {
      await files.cleanup();
    }
  });

  it('for another file of the same size and times: the file fails as replaced', async () => {
    const files = await tempDir();
    try {
      const file = await files.write('report.csv', patternBytes(4096, 1));
      const listed = await stat(file);
      const impostor = await files.write('impostor.csv', patternBytes(4096, 2));
      await utimes(impostor, listed.atime, listed.mtime);
      const service = await start(({ route, hit }) => {
        if (route === 'upload-urls' && hit === 1) execFileSync('mv', [impostor, file]);
        return false;
      });
      const report = await service.client().uploads.upload(HOSTILE_APP_ID, [file]);
      expect(report.files[0]?.status).toBe('failed');
      expect(report.files[0]?.error?.message).toContain('was replaced while being uploaded');
      expect(service.on('storage')).toHaveLength(0);
    } finally {
      await files.cleanup();
    }
  });

  it('an unchanged file still uploads', async () => {
    const files = await tempDir();
    try {
      const file = await files.write('report.csv', patternBytes(4096));
      const service = await start();
      const report = await service.client().uploads.upload(HOSTILE_APP_ID, [file]);
      expect(report.files[0]).toMatchObject({ status: 'uploaded', bytes: 4096 });
      expect(service.on('storage')).toHaveLength(1);
    } finally {
      await files.cleanup();
    }
  });
});
