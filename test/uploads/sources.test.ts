/**
 * Every kind of upload input (a path, bytes, a Blob, a string, a stream with its size), through
 * `client.uploads.upload` against the emulator through msw: what each is named, the bytes the
 * storage host receives, which can be sent again, what is refused before any byte is sent, and
 * how many reads from disk run at once.
 */
import { closeSync, createReadStream, futimesSync, openSync, writeSync } from 'node:fs';
import { open, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setupServer } from 'msw/node';
import type {
  PushClient,
  UploadDataInput,
  UploadInput,
  UploadProgress,
  UploadReport,
  UploadStreamInput,
} from 'push-api-client';
import { AbortError, UploadError, UploadStoppedError } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DISK_READS_AT_ONCE } from '../../src/uploads/file-source.js';
import { FILE_CHUNK_BYTES, MAX_UPLOAD_BYTES } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';
import { patternBytes, sha256, tempDir } from '../support/files.js';

// requireContentLength: a PUT without Content-Length gets 411, as over real HTTP.
const mock: PushApiMock = createPushApiMock({ requireContentLength: true });
const server = setupServer(...mock.handlers);
const content = patternBytes(700_000);
let files: Awaited<ReturnType<typeof tempDir>>;
let client: PushClient;
/** Every request the client sent, in order. */
const sent: { method: string; url: URL }[] = [];
/** Run before a request goes out: what a test does at that moment (rewrite a file, abort the run). */
let beforeSend: ((request: { method: string; url: URL }) => Promise<void> | void) | undefined;

const puts = () => sent.filter((request) => request.method === 'PUT');
const isAddressRequest = (request: { method: string; url: URL }) =>
  request.method === 'GET' && request.url.pathname.endsWith('/upload');
/** What the emulator stored under `name`, checked byte for byte against `expected`. */
function expectStored(name: string, expected: Uint8Array): void {
  const stored = mock.state.file(mock.appId, name);
  expect(stored, `${name} stored`).toBeDefined();
  expect(stored?.size).toBe(expected.byteLength);
  expect(stored?.bytes, `${name} bytes kept`).toBeDefined();
  expect(sha256(stored?.bytes ?? new Uint8Array(0))).toBe(sha256(expected));
}
/** The progress events of one run, and the most bytes any of them reported for `file`. */
function progressOf() {
  const events: UploadProgress[] = [];
  return {
    onProgress: (progress: UploadProgress) => events.push({ ...progress }),
    maxBytesOf: (file: string) => Math.max(0, ...events.filter((e) => e.file === file).map((e) => e.fileBytes)),
  };
}
const single = (report: UploadReport) => {
  expect(report.files).toHaveLength(1);
  return report.files[0];
};

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  files = await tempDir();
  await files.write('data.bin', content);
  await files.write('empty.csv', '');
  client = clientFor(mock.clientOptions(), {
    fetch: async (input, init) => {
      const request = {
        method: (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase(),
        url: new URL(input instanceof Request ? input.url : String(input)),
      };
      sent.push(request);
      await beforeSend?.(request);
      return globalThis.fetch(input, init);
    },
  });
});
afterEach(() => {
  mock.reset();
  server.resetHandlers();
  sent.length = 0;
  beforeSend = undefined;
});
afterAll(async () => {
  server.close();
  await files.cleanup();
});

describe('upload sources, through upload()', () => {
  it('names a bare path by its basename and stores its exact bytes, re-opened for a retry', async () => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const report = await client.uploads.upload(mock.appId, [path.join(files.dir, 'data.bin')]);
    expect(single(report)).toMatchObject({ name: 'data.bin', bytes: content.length, status: 'uploaded', attempts: 2 });
    // The file was opened again for the second PUT: the stored body is the whole file, not what was left.
    expect(puts()).toHaveLength(2);
    expect(mock.state.files(mock.appId).map((file) => file.name)).toEqual(['data.bin']);
    expectStored('data.bin', content);
  });

  it('uses the given name for a path', async () => {
    const report = await client.uploads.upload(mock.appId, [
      { name: 'renamed.bin', path: path.join(files.dir, 'data.bin') },
    ]);
    expect(single(report)).toMatchObject({ name: 'renamed.bin', status: 'uploaded' });
    expect(mock.state.files(mock.appId).map((file) => file.name)).toEqual(['renamed.bin']);
    expectStored('renamed.bin', content);
  });

  it('uploads a 0-byte file as an empty body', async () => {
    const report = await client.uploads.upload(mock.appId, [path.join(files.dir, 'empty.csv')]);
    expect(single(report)).toMatchObject({ name: 'empty.csv', bytes: 0, status: 'uploaded' });
    expect(puts()).toHaveLength(1);
    expectStored('empty.csv', new Uint8Array(0));
  });

  it.each<[string, () => UploadDataInput, Uint8Array]>([
    ['a Buffer', () => ({ name: 'b', data: content }), content],
    [
      'a Uint8Array view',
      () => ({ name: 'u', data: new Uint8Array(content.buffer, content.byteOffset + 5, 1000) }),
      content.subarray(5, 1005),
    ],
    ['a string, as UTF-8', () => ({ name: 's', data: 'Grüße, 世界' }), Buffer.from('Grüße, 世界', 'utf8')],
    ['a Blob', () => ({ name: 'blob', data: new Blob([new Uint8Array(content)]) }), content],
  ])('sends %s byte for byte, and again for a retry', async (_, input, expected) => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const report = await client.uploads.upload(mock.appId, [input()]);
    expect(single(report)).toMatchObject({ bytes: expected.byteLength, status: 'uploaded', attempts: 2 });
    expect(puts()).toHaveLength(2);
    expectStored(input().name, expected);
  });

  const streams: [string, () => UploadStreamInput][] = [
    [
      'a Node Readable',
      () => ({ name: 'n', stream: createReadStream(path.join(files.dir, 'data.bin')), size: content.length }),
    ],
    [
      'a web ReadableStream',
      () => ({
        name: 'w',
        stream: Readable.toWeb(Readable.from([content])) as ReadableStream<Uint8Array>,
        size: content.length,
      }),
    ],
    [
      'an async iterable',
      () => ({
        name: 'i',
        stream: (async function* () {
          yield content.subarray(0, 10);
          yield content.subarray(10);
        })(),
        size: content.length,
      }),
    ],
  ];

  it.each(streams)('sends %s with its declared size, byte for byte', async (_, input) => {
    const report = await client.uploads.upload(mock.appId, [input()]);
    expect(single(report)).toMatchObject({ bytes: content.length, status: 'uploaded', attempts: 1 });
    expectStored(input().name, content);
  });

  it.each(streams)('does not send %s again: a failed PUT is its only attempt', async (_, input) => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const report = await client.uploads.upload(mock.appId, [input()]);
    expect(single(report)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(puts()).toHaveLength(1);
    expect(mock.state.files(mock.appId)).toEqual([]);
  });

  it('fails a file that changed size since it was listed, before sending a byte', async () => {
    const file = await files.write('changing.bin', content);
    // Listed by upload() before its address is asked for; shrunk while the address is on its way.
    beforeSend = async (request) => {
      if (isAddressRequest(request)) await writeFile(file, content.subarray(0, 1000));
    };
    const progress = progressOf();
    const report = await client.uploads.upload(mock.appId, [file], { onProgress: progress.onProgress });
    const result = single(report);
    expect(result).toMatchObject({ name: 'changing.bin', status: 'failed' });
    expect(result?.error).toBeInstanceOf(UploadError);
    expect(result?.error?.message).toMatch(/changed size \(from 700000 to 1000 bytes\)/);
    expect(progress.maxBytesOf('changing.bin')).toBe(0);
    expect(mock.state.file(mock.appId, 'changing.bin')).toBeUndefined();
  });

  it('fails a file rewritten at the same size while being sent, before its last byte', async () => {
    // Three chunks: the file is rewritten once its first chunk went out, and checked before its last.
    const original = patternBytes(2 * FILE_CHUNK_BYTES + 500_000, 3);
    const file = await files.write('rewritten.bin', original);
    const progress = progressOf();
    let rewritten = false;
    const report = await client.uploads.upload(mock.appId, [file], {
      onProgress: (event) => {
        progress.onProgress(event);
        if (rewritten) return;
        rewritten = true;
        // Synchronously, so that no later chunk is read before it; in place, never shorter: only the
        // content and the modification time change.
        const fd = openSync(file, 'r+');
        try {
          writeSync(fd, patternBytes(original.length, 4), 0, original.length, 0);
          futimesSync(fd, new Date(), new Date(Date.now() + 5_000));
        } finally {
          closeSync(fd);
        }
      },
    });
    expect(rewritten).toBe(true);
    const result = single(report);
    expect(result).toMatchObject({ name: 'rewritten.bin', status: 'failed' });
    expect(result?.error?.message).toMatch(/was modified while being uploaded/);
    expect(progress.maxBytesOf('rewritten.bin')).toBeGreaterThan(0);
    expect(progress.maxBytesOf('rewritten.bin')).toBeLessThan(original.length);
    expect(mock.state.file(mock.appId, 'rewritten.bin')).toBeUndefined();
  });

  it('reads a few chunks at once, however many files are in flight, and stores every byte', async () => {
    // Two chunks, and a bit for all but the first, so that every file reads more than once.
    const contents = Array.from({ length: 16 }, (_, index) =>
      patternBytes(2 * FILE_CHUNK_BYTES + 1000 * index, index + 1),
    );
    const paths = await Promise.all(contents.map((bytes, index) => files.write(`file-${index}.bin`, bytes)));

    // Node's FileHandle, whose reads every path upload goes through: counted, not changed.
    const probe = await open(paths[0] as string);
    const fileHandle = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> };
    await probe.close();
    const originalRead = fileHandle.read;
    let reading = 0;
    let mostAtOnce = 0;
    let reads = 0;
    fileHandle.read = async function (this: unknown, ...args: unknown[]) {
      reads++;
      mostAtOnce = Math.max(mostAtOnce, ++reading);
      try {
        return await originalRead.apply(this, args);
      } finally {
        reading--;
      }
    };
    try {
      const report = await client.uploads.upload(mock.appId, paths, { concurrency: 16, adaptive: false });
      expect(report.filesUploaded).toBe(16);
    } finally {
      fileHandle.read = originalRead;
    }
    const chunks = contents.reduce((sum, bytes) => sum + Math.ceil(bytes.byteLength / FILE_CHUNK_BYTES), 0);
    expect(reads).toBe(chunks);
    // Fewer than the files in flight, or the test shows nothing: raise the count with the limit.
    expect(DISK_READS_AT_ONCE).toBeLessThan(contents.length);
    expect(mostAtOnce).toBeLessThanOrEqual(DISK_READS_AT_ONCE);
    // A few at a time, not one at a time.
    expect(mostAtOnce).toBeGreaterThan(1);
    contents.forEach((bytes, index) => {
      expectStored(`file-${index}.bin`, bytes);
    });
  });
});

describe('sizes and inputs refused before any request', () => {
  it('refuses a file over 5 GiB before reading it (sparse file)', async () => {
    const big = await files.write('big.bin', '');
    await truncate(big, MAX_UPLOAD_BYTES + 1);
    const pending = client.uploads.upload(mock.appId, [big]);
    await expect(pending).rejects.toBeInstanceOf(UploadError);
    await expect(pending).rejects.toThrow(/5 GiB/);
    expect(sent).toEqual([]);
  });

  it('accepts a declared stream size of exactly 5 GiB and refuses one byte more', async () => {
    const over = client.uploads.upload(mock.appId, [
      { name: 'over', stream: Readable.from([]), size: MAX_UPLOAD_BYTES + 1 },
    ]);
    await expect(over).rejects.toBeInstanceOf(UploadError);
    await expect(over).rejects.toThrow(/5 GiB/);
    expect(sent).toEqual([]);

    // Exactly 5 GiB gets its address and its PUT; the run is aborted as the PUT starts, so that no
    // byte of it needs to exist (the stream never yields one).
    const abort = new AbortController();
    beforeSend = (request) => {
      if (request.method === 'PUT') abort.abort(new Error('enough: the PUT started'));
    };
    const never = new Readable({ read() {} });
    const outcome = await client.uploads
      .upload(mock.appId, [{ name: 'max', stream: never, size: MAX_UPLOAD_BYTES }], { signal: abort.signal })
      .then(
        (report) => report,
        (error: unknown) => error,
      );
    // Past every check: its address was asked for (after a token, the emulator's reset forgot it) and its PUT sent.
    expect(sent.filter(isAddressRequest).map((request) => request.url.searchParams.getAll('filenames'))).toContainEqual(
      ['max'],
    );
    expect(puts().map((request) => path.basename(request.url.pathname))).toEqual(['max']);
    expect(outcome).toBeInstanceOf(UploadStoppedError);
    expect((outcome as UploadStoppedError).cause).toBeInstanceOf(AbortError);
    expect((outcome as UploadStoppedError).report.files).toMatchObject([{ name: 'max', status: 'failed' }]);
    expect(never.destroyed).toBe(true);
    expect(mock.state.file(mock.appId, 'max')).toBeUndefined();
  });

  it.each<[string, unknown, RegExp]>([
    ['a missing file', { path: '/nonexistent/push-api-client/x.csv' }, /Cannot read .*ENOENT/],
    ['a directory', { name: 'd', path: '.' }, /not a regular file/],
    ['a stream without a size', { name: 's', stream: Readable.from([]) }, /declared "size"/],
    ['a negative size', { name: 's', stream: Readable.from([]), size: -1 }, /declared "size"/],
    ['a stream that is not one', { name: 's', stream: 42, size: 1 }, /must be a Node Readable/],
    ['an object with no content', { name: 'x' }, /one of "path", "data" or "stream"/],
    ['data of the wrong type', { name: 'x', data: 42 }, /expected a string, Uint8Array/],
    ['null', null, /expected a path or an object/],
  ])('rejects %s with an UploadError and sends nothing', async (_, input, message) => {
    const pending = client.uploads.upload(mock.appId, [input as UploadInput]);
    await expect(pending).rejects.toBeInstanceOf(UploadError);
    await expect(pending).rejects.toThrow(message);
    expect(sent).toEqual([]);
  });
});
