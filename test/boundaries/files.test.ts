/** Files at the edges, over real HTTP: 0 bytes, and names in many scripts and with URL-special characters. */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
let emulator: RunningEmulator;
let dir: string;
beforeAll(async () => {
  emulator = await startEmulator();
  dir = mkdtempSync(join(tmpdir(), 'push-boundaries-'));
});
afterAll(async () => {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('0-byte files', () => {
  it('uploads an empty buffer and an empty file on disk, each with Content-Length 0', async () => {
    const { mock } = emulator;
    const path = join(dir, 'empty-on-disk.csv');
    writeFileSync(path, '');
    const report = await clientFor(emulator, { maxRetries: 0 }).uploads.upload(mock.appId, [
      { name: 'empty.csv', data: new Uint8Array(0) },
      path,
    ]);
    expect(report.filesUploaded).toBe(2);
    expect(report.bytesUploaded).toBe(0);
    for (const name of ['empty.csv', 'empty-on-disk.csv']) {
      const stored = mock.state.file(mock.appId, name);
      expect(stored?.size).toBe(0);
      expect(stored?.sha256).toBe(sha256(new Uint8Array(0)));
    }
    const puts = mock.state.requests.filter((r) => r.operation === 'upload');
    for (const put of puts) expect(put.headers['content-length']).toBe('0');
  });
});

describe('unicode and URL-special file names', () => {
  const names = [
    'données été.csv',
    '日本語のファイル.csv',
    '📊 report (final).csv',
    'a+b&c=d?e#f.csv',
    '%2F..%2Fescape.csv',
    'café.csv', // NFC
    'cafe\u0301.csv', // NFD: a different name with the same look
  ];

  it('stores each file under exactly its name, with its bytes', async () => {
    const { mock } = emulator;
    const files = names.map((name, i) => ({ name, data: new TextEncoder().encode(`file ${i}: ${name}\n`) }));
    const report = await clientFor(emulator, { maxRetries: 0 }).uploads.upload(mock.appId, files);
    expect(report.files.map((f) => [f.name, f.status])).toEqual(names.map((name) => [name, 'uploaded']));
    for (const file of files) {
      const stored = mock.state.file(mock.appId, file.name);
      expect(stored?.name).toBe(file.name);
      expect(stored?.sha256).toBe(sha256(file.data));
    }
    // Every PUT stayed under the storage prefix, one encoded path segment per name.
    const puts = mock.state.requests.filter((r) => r.operation === 'upload');
    for (const put of puts) expect(put.path).toMatch(/^\/storage\/demo-app\/[^/]+$/);
  });
});

describe('a file named __proto__ (regression)', () => {
  // The check of the address answer assigned out[name] = address, which for "__proto__" set the
  // prototype instead of adding the name, so the PUT went to new URL('') and the file failed with
  // "Invalid URL".
  it('gets its own address and is uploaded under that name', async () => {
    const { mock } = emulator;
    const client = clientFor(emulator, { maxRetries: 0 });
    const urls = await client.uploads.getUploadUrls(mock.appId, ['__proto__', 'constructor']);
    expect(Object.keys(urls).sort()).toEqual(['__proto__', 'constructor']);
    const report = await client.uploads.upload(mock.appId, [{ name: '__proto__', data: 'proto\n' }]);
    expect(report.files[0]).toMatchObject({ name: '__proto__', status: 'uploaded' });
    expect(mock.state.file(mock.appId, '__proto__')?.size).toBe(6);
  });
});
