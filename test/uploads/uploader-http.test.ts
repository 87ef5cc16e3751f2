/** The uploader against the emulator over real HTTP (127.0.0.1), where the wire rules are enforced. */
import { Readable } from 'node:stream';
import { type PushClient, UploadStoppedError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_URLS_URL_LENGTH } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';
import { patternBytes, progressRecorder, sha256, tempDir } from '../support/files.js';

let emulator: RunningEmulator;
let client: PushClient;
let files: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  emulator = await startEmulator();
  client = clientFor(emulator);
  files = await tempDir();
});
afterEach(() => emulator.mock.reset());
afterAll(async () => {
  await emulator.close();
  await files.cleanup();
});

describe('upload over real HTTP', () => {
  it('PUT carries Content-Length and no Authorization', async () => {
    const data = patternBytes(300_000);
    const report = await client.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data }]);
    expect(report.files[0]).toMatchObject({ status: 'uploaded', attempts: 1 });
    const put = emulator.mock.state.requests.find((request) => request.operation === 'upload');
    expect(put?.headers['content-length']).toBe('300000');
    expect(put?.headers['transfer-encoding']).toBeUndefined();
    expect(put?.headers.authorization).toBeUndefined();
    expect(emulator.mock.state.file(emulator.mock.appId, 'users.csv')?.authorization).toBeUndefined();
    // The address request did carry the bearer token, and no token is in any upload address.
    const get = emulator.mock.state.requests.find((request) => request.operation === 'upload-urls');
    expect(get?.headers.authorization).toMatch(/^Bearer/);
    const token = emulator.mock.state.tokens[0]?.token;
    expect(token).toEqual(expect.any(String));
    expect(JSON.stringify(put)).not.toContain(token);
  });

  it('stores the exact bytes of path, buffer, string, blob and stream sources', async () => {
    const onDisk = patternBytes(1_500_000, 2);
    const filePath = await files.write('on-disk.bin', onDisk);
    const buffer = patternBytes(70_000, 3);
    const blob = patternBytes(200_000, 4);
    const streamed = patternBytes(1_000_000, 5);
    const text = 'name,email\nZoë,zoe@example.com\n';
    const report = await client.uploads.upload(emulator.mock.appId, [
      filePath,
      { name: 'buffer.bin', data: buffer },
      { name: 'text.csv', data: text },
      { name: 'blob.bin', data: new Blob([new Uint8Array(blob)]) },
      {
        name: 'node-stream.bin',
        stream: Readable.from([streamed.subarray(0, 4096), streamed.subarray(4096)]),
        size: streamed.length,
      },
    ]);
    expect(report).toMatchObject({ filesUploaded: 5, filesFailed: 0 });
    const stored = (name: string) => emulator.mock.state.file(emulator.mock.appId, name)?.sha256;
    expect(stored('on-disk.bin')).toBe(sha256(onDisk));
    expect(stored('buffer.bin')).toBe(sha256(buffer));
    expect(stored('text.csv')).toBe(sha256(Buffer.from(text, 'utf8')));
    expect(stored('blob.bin')).toBe(sha256(blob));
    expect(stored('node-stream.bin')).toBe(sha256(streamed));
    expect(report.bytesUploaded).toBe(
      onDisk.length + buffer.length + Buffer.byteLength(text) + blob.length + streamed.length,
    );
  });

  it('uploads a 0-byte file with Content-Length: 0', async () => {
    const empty = await files.write('empty.csv', '');
    const progress = progressRecorder();
    const report = await client.uploads.upload(emulator.mock.appId, [empty], { onProgress: progress.onProgress });
    expect(report.files[0]).toMatchObject({ name: 'empty.csv', bytes: 0, status: 'uploaded' });
    expect(emulator.mock.state.file(emulator.mock.appId, 'empty.csv')?.size).toBe(0);
    const put = emulator.mock.state.requests.find((request) => request.operation === 'upload');
    expect(put?.headers['content-length']).toBe('0');
    expect(progress.events).toEqual([{ file: 'empty.csv', fileBytes: 0, fileTotal: 0, bytes: 0, totalBytes: 0 }]);
  });

  it('fails a stream declared empty that yields bytes, though an empty file is sent as no bytes', async () => {
    const report = await client.uploads.upload(emulator.mock.appId, [
      { name: 'not-empty.bin', stream: new Blob(['abc']).stream(), size: 0 },
    ]);
    expect(report.files[0]).toMatchObject({ name: 'not-empty.bin', status: 'failed' });
    expect(report.files[0]?.error?.message).toBe(
      'File "not-empty.bin" yielded more than 0 bytes, but its declared size is 0.',
    );
    // Its source was read before any PUT: nothing of a file that is not what was declared is stored.
    expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload')).toEqual([]);
    expect(emulator.mock.state.file(emulator.mock.appId, 'not-empty.bin')).toBeUndefined();
  });

  it('fails a stream declared empty that never ends after timeoutMs, and sends no PUT', async () => {
    let cancelled = false;
    const never = new ReadableStream<Uint8Array>({
      pull: () => new Promise<void>(() => {}),
      cancel: () => {
        cancelled = true;
      },
    });
    const report = await client.uploads.upload(emulator.mock.appId, [{ name: 'stalled.bin', stream: never, size: 0 }], {
      timeoutMs: 300,
    });
    expect(report.files[0]).toMatchObject({ name: 'stalled.bin', status: 'failed' });
    expect(report.files[0]?.error?.message).toBe(
      'Upload of "stalled.bin" failed: its source, declared empty, did not end within 300 ms.',
    );
    expect(cancelled).toBe(true);
    expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload')).toEqual([]);
  });

  it('ends the read of a stream declared empty at once when the caller aborts', async () => {
    const never = new ReadableStream<Uint8Array>({ pull: () => new Promise<void>(() => {}) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    const started = performance.now();
    const outcome = await client.uploads
      .upload(emulator.mock.appId, [{ name: 'stalled.bin', stream: never, size: 0 }], {
        timeoutMs: 60_000,
        signal: controller.signal,
      })
      .then(
        (report) => report.files[0]?.status,
        (error: Error) => error.name,
      );
    expect(outcome).toBe('UploadStoppedError');
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload')).toEqual([]);
  });

  it('sends no PUT for a file declared empty whose source was still being read when the run was stopped', async () => {
    let cancelled = false;
    let ending: ReturnType<typeof setTimeout> | undefined;
    // Ends, empty, after 10 s: long after the stop.
    const slow = new ReadableStream<Uint8Array>({
      pull: (controller) =>
        new Promise<void>((resolve) => {
          ending = setTimeout(() => {
            controller.close();
            resolve();
          }, 10_000);
        }),
      cancel: () => {
        cancelled = true;
        clearTimeout(ending);
      },
    });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const started = performance.now();
    const outcome: unknown = await client.uploads
      .upload(emulator.mock.appId, [{ name: 'slow-empty.bin', stream: slow, size: 0 }], { stopSignal: stop.signal })
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(UploadStoppedError);
    expect((outcome as UploadStoppedError).report.files[0]).toMatchObject({ status: 'not-started', attempts: 0 });
    // A stop ends the read: it does not wait for the source.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(cancelled).toBe(true);
    expect(emulator.mock.state.requests.filter((request) => request.operation === 'upload')).toEqual([]);
  });

  it("names a caller's stream that fails midway in the file's error, with the stream's error as cause", async () => {
    const webFailure = new Error('disk gone (web)');
    const nodeFailure = new Error('disk gone (node)');
    let pulls = 0;
    const web = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ < 2) controller.enqueue(new Uint8Array(1 << 20));
        else controller.error(webFailure);
      },
    });
    let reads = 0;
    const node = new Readable({
      read() {
        if (reads++ < 1) this.push(Buffer.alloc(1 << 20));
        else this.destroy(nodeFailure);
      },
    });
    const report = await client.uploads.upload(emulator.mock.appId, [
      { name: 'web.bin', stream: web, size: 4 << 20 },
      { name: 'node.bin', stream: node, size: 4 << 20 },
    ]);
    const [webFile, nodeFile] = report.files;
    expect(webFile?.status).toBe('failed');
    expect(webFile?.error?.message).toBe('The stream of file "web.bin" failed: disk gone (web)');
    expect(webFile?.error?.cause).toBe(webFailure);
    expect(nodeFile?.status).toBe('failed');
    expect(nodeFile?.error?.message).toBe('The stream of file "node.bin" failed: disk gone (node)');
    expect(nodeFile?.error?.cause).toBe(nodeFailure);
    expect(emulator.mock.state.files(emulator.mock.appId)).toEqual([]);
  });

  it('uploads files with unicode names', async () => {
    const names = ['Übersicht 2024.csv', '日本語.txt', 'emoji 📦 + & = ?.bin', 'ñ#%.json'];
    const report = await client.uploads.upload(
      emulator.mock.appId,
      names.map((name, i) => ({ name, data: `file ${i}` })),
    );
    expect(report.filesUploaded).toBe(names.length);
    expect(
      emulator.mock.state
        .files(emulator.mock.appId)
        .map((file) => file.name)
        .sort(),
    ).toEqual([...names].sort());
  });

  it('reports progress that only grows and ends at the total', async () => {
    const progress = progressRecorder();
    const inputs = [patternBytes(900_000, 7), patternBytes(10, 8), patternBytes(400_000, 9)].map((data, i) => ({
      name: `p${i}.bin`,
      data,
    }));
    const report = await client.uploads.upload(emulator.mock.appId, inputs, {
      onProgress: progress.onProgress,
      concurrency: 2,
    });
    expect(report.filesUploaded).toBe(3);
    progress.assertMonotonic();
    const last = progress.events.at(-1);
    expect(last?.bytes).toBe(1_300_010);
    expect(last?.totalBytes).toBe(1_300_010);
    expect(progress.events.length).toBeGreaterThan(3);
  });

  it('streams a large file from disk and stores it intact', async () => {
    const big = patternBytes(24 * 1024 * 1024 + 3, 11);
    const bigPath = await files.write('big.bin', big);
    const report = await client.uploads.upload(emulator.mock.appId, [bigPath]);
    expect(report.files[0]).toMatchObject({ status: 'uploaded', bytes: big.length });
    expect(emulator.mock.state.file(emulator.mock.appId, 'big.bin')?.sha256).toBe(sha256(big));
  });
});

describe('upload addresses', () => {
  /** A client that records, for each address request, its names and how many PUTs had finished. */
  function countingClient() {
    let putsDone = 0;
    const addressRequests: { names: number; putsDone: number; length: number }[] = [];
    const client = clientFor(emulator, {
      fetch: async (input, init) => {
        const url = new URL(String(input instanceof Request ? input.url : input));
        if (url.pathname.endsWith('/upload')) {
          addressRequests.push({
            names: url.searchParams.getAll('filenames').length,
            putsDone,
            length: url.href.length,
          });
        }
        const response = await fetch(input, init);
        if (init?.method === 'PUT') putsDone++;
        return response;
      },
    });
    return { client, addressRequests };
  }

  it('asks for the addresses of every file in one request when all the names fit in one URL', async () => {
    const { client: counting, addressRequests } = countingClient();
    const inputs = Array.from({ length: 200 }, (_, i) => ({ name: `f-${i}.txt`, data: `file ${i}` }));
    const report = await counting.uploads.upload(emulator.mock.appId, inputs, { concurrency: 4, type: 'users' });
    expect(report.filesUploaded).toBe(inputs.length);
    expect(addressRequests).toEqual([{ names: 200, putsDone: 0, length: expect.any(Number) }]);
  });

  it('fills each address request up to the URL limit, and asks for the next before the files of this one run out', async () => {
    const workers = 4;
    const { client: counting, addressRequests } = countingClient();
    // 300-character names: about 25 fit in one URL, so 60 files need three requests.
    const inputs = Array.from({ length: 60 }, (_, i) => ({
      name: `${String(i).padStart(3, '0')}-${'n'.repeat(296)}`,
      data: `file ${i}`,
    }));
    const report = await counting.uploads.upload(emulator.mock.appId, inputs, { concurrency: workers });
    expect(report.filesUploaded).toBe(inputs.length);
    expect(addressRequests).toHaveLength(3);
    expect(addressRequests.reduce((sum, request) => sum + request.names, 0)).toBe(60);
    for (const request of addressRequests) expect(request.length).toBeLessThan(MAX_UPLOAD_URLS_URL_LENGTH);
    // Each full request had no room for one more name.
    const first = addressRequests[0] as { names: number; length: number };
    expect(first.length + 1 + 'filenames='.length + 300).toBeGreaterThanOrEqual(MAX_UPLOAD_URLS_URL_LENGTH);
    // The second started while the workers still held files of the first batch.
    expect(addressRequests[1]?.putsDone).toBeLessThan(first.names - workers + 1);
  });
});
