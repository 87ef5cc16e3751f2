/**
 * A file that changes while it is uploaded: Content-Length promised its old size, so whatever the
 * storage host received is not the file. Real HTTP on 127.0.0.1, where the emulator stores a body
 * only when it has exactly Content-Length bytes.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import type { UploadProgress } from 'push-api-client';
import { UploadError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { patternBytes, tempDir } from '../support/files.js';

let emulator: RunningEmulator;
let files: Awaited<ReturnType<typeof tempDir>>;
const SIZE = 6 * 1024 * 1024;

beforeAll(async () => {
  emulator = await startEmulator();
  files = await tempDir();
});
afterAll(async () => {
  await emulator.close();
  await files.cleanup();
});

/** Uploads `name` from disk and runs `change` on the file once its first bytes have been sent. */
async function uploadWhileChanging(name: string, change: (file: string) => void) {
  const file = await files.write(name, patternBytes(SIZE));
  const client = clientFor(emulator);
  let changed = false;
  const onProgress = (progress: UploadProgress) => {
    if (changed || progress.fileBytes === 0) return;
    changed = true;
    change(file);
  };
  const report = await client.uploads.upload(emulator.mock.appId, [file], { onProgress });
  expect(changed).toBe(true);
  return report;
}

describe('a file that changes during its upload', () => {
  it('fails, saying its size changed, when it grows; nothing is stored', async () => {
    const report = await uploadWhileChanging('growing.csv', (file) => appendFileSync(file, 'more,rows\n'));
    expect(report).toMatchObject({ filesUploaded: 0, filesFailed: 1, bytesUploaded: 0 });
    const [result] = report.files;
    expect(result?.status).toBe('failed');
    expect(result?.error).toBeInstanceOf(UploadError);
    expect(result?.error?.message).toContain(`changed size (from ${SIZE} to ${SIZE + 10} bytes)`);
    expect(result?.error?.message).toContain('it was not uploaded');
    expect(emulator.mock.state.file(emulator.mock.appId, 'growing.csv')).toBeUndefined();
  });

  it('fails, saying it was modified, when it is rewritten in place at the same size', async () => {
    const report = await uploadWhileChanging('rewritten.csv', (file) => writeFileSync(file, patternBytes(SIZE, 9)));
    const [result] = report.files;
    expect(result?.status).toBe('failed');
    expect(result?.error?.message).toMatch(
      / (was modified|changed size) while being uploaded as "rewritten\.csv"; it was not uploaded/,
    );
    expect(emulator.mock.state.file(emulator.mock.appId, 'rewritten.csv')).toBeUndefined();
  });
});
