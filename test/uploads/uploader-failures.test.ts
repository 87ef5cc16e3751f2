/** Failure handling of uploads, against the emulator through msw (as in a user's test suite). */
import { Readable } from 'node:stream';
import { setupServer } from 'msw/node';
import type { PushClient, UploadFileResult, UploadReport } from 'push-api-client';
import { AbortError, PushError, UploadError, UploadStoppedError } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { patternBytes, progressRecorder, sha256 } from '../support/files.js';

// requireContentLength: a PUT without Content-Length gets 411, as over real HTTP.
const mock: PushApiMock = createPushApiMock({ requireContentLength: true });
const server = setupServer(...mock.handlers);
let client: PushClient;
const uploadUrlRequests = () => mock.state.requests.filter((request) => request.operation === 'upload-urls').length;
const puts = () => mock.state.requests.filter((request) => request.operation === 'upload');

beforeAll(() => {
  server.listen({ onUnhandledRequest: 'error' });
  client = clientFor(mock.clientOptions());
});
afterEach(() => {
  mock.reset();
  server.resetHandlers();
});
afterAll(() => server.close());

/** A client whose upload addresses expire as soon as they are issued, for the first `times` address requests. */
function expiringClient(times: number): PushClient {
  let left = times;
  return clientFor(mock.clientOptions(), {
    fetch: async (input, init) => {
      const response = await globalThis.fetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (left > 0 && url.pathname.endsWith('/upload')) {
        left -= 1;
        mock.expireSignedUrls();
      }
      return response;
    },
  });
}

describe('upload failures', () => {
  it('works through msw with no special wiring, sending Content-Length and no Authorization', async () => {
    const data = patternBytes(5000);
    const report = await client.uploads.upload(mock.appId, [{ name: 'a.bin', data }]);
    expect(report.files[0]).toMatchObject({ status: 'uploaded', attempts: 1, etag: expect.stringMatching(/^".+"$/) });
    expect(mock.state.file(mock.appId, 'a.bin')).toMatchObject({ sha256: sha256(data), authorization: undefined });
    // This mock requires Content-Length (requireContentLength): the PUT had one, from the header or,
    // where the SDK leaves the header out, from the body the runtime sends it for.
    expect(puts()[0]?.headers['content-length'] ?? '5000').toBe('5000');
    expect(mock.state.file(mock.appId, 'a.bin')?.size).toBe(5000);
  });

  it('asks once for a fresh address when the signed URL expired before the PUT, then succeeds', async () => {
    const progress = progressRecorder();
    const data = patternBytes(200_000);
    const report = await expiringClient(1).uploads.upload(mock.appId, [{ name: 'late.bin', data }], {
      onProgress: progress.onProgress,
    });
    expect(report.files[0]).toMatchObject({ status: 'uploaded', attempts: 2 });
    expect(uploadUrlRequests()).toBe(2);
    expect(puts().map((put) => put.status)).toEqual([403, 200]);
    expect(mock.state.file(mock.appId, 'late.bin')?.sha256).toBe(sha256(data));
    progress.assertMonotonic();
    expect(progress.events.at(-1)?.bytes).toBe(200_000);
  });

  it('gives up after one fresh address when that one is refused too', async () => {
    const report = await expiringClient(Infinity).uploads.upload(mock.appId, [{ name: 'never.bin', data: 'x' }]);
    const [file] = report.files;
    expect(file).toMatchObject({ status: 'failed', attempts: 2 });
    expect(file?.error).toBeInstanceOf(UploadError);
    expect(file?.error).toMatchObject({
      fileName: 'never.bin',
      status: 403,
      storageCode: 'AccessDenied',
      storageMessage: 'Request has expired',
    });
    expect(uploadUrlRequests()).toBe(2);
  });

  it('retries a 503 on the PUT of a re-openable source', async () => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const data = patternBytes(80_000);
    const report = await client.uploads.upload(mock.appId, [{ name: 'retry.bin', data }]);
    expect(report.files[0]).toMatchObject({ status: 'uploaded', attempts: 2 });
    expect(puts().map((put) => put.status)).toEqual([503, 200]);
    expect(mock.state.file(mock.appId, 'retry.bin')?.sha256).toBe(sha256(data));
  });

  it('does not retry a stream source: a 503 is reported as failed with the storage code', async () => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const report = await client.uploads.upload(mock.appId, [
      { name: 'once.bin', stream: Readable.from([Buffer.from('abc')]), size: 3 },
    ]);
    expect(report).toMatchObject({ filesUploaded: 0, filesFailed: 1, bytesUploaded: 0 });
    expect(report.files[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(report.files[0]?.error).toMatchObject({
      name: 'UploadError',
      fileName: 'once.bin',
      status: 503,
      storageCode: 'InternalError',
    });
    expect(puts()).toHaveLength(1);
  });

  it("types a file's error as the UploadError it is: storageCode reads without a cast", async () => {
    expectTypeOf<UploadFileResult['error']>().toEqualTypeOf<UploadError | undefined>();
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 1 });
    const report = await client.uploads.upload(mock.appId, [{ name: 'typed.bin', data: 'x' }], { maxRetries: 0 });
    const storageCode: string | undefined = report.files[0]?.error?.storageCode;
    expect(storageCode).toBe('InternalError');
    expect(report.files[0]?.error?.fileName).toBe('typed.bin');
  });

  it("a file the caller's abort cut short fails with an UploadError whose cause is the AbortError", async () => {
    const controller = new AbortController();
    mock.faults.add({ match: { operation: 'upload' }, delayMs: 5_000 });
    // Aborted once its PUT has started (on a loaded machine the token and the address can take
    // longer than any fixed delay, and a file stopped before its PUT is not-started, not failed).
    const putStarted = new Promise<void>((resolve) => {
      const onStart = ({ request }: { request: Request }) => {
        if (request.method !== 'PUT') return;
        server.events.removeListener('request:start', onStart);
        resolve();
      };
      server.events.on('request:start', onStart);
    });
    const pending = client.uploads.upload(mock.appId, [{ name: 'cut.bin', data: 'abc' }], {
      signal: controller.signal,
    });
    await putStarted;
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    // How the stopped run itself rejects is the run's contract; here only the file's error matters.
    expect(error).toBeInstanceOf(PushError);
    const report = (error as PushError).report as UploadReport;
    const file = report.files[0];
    expect(file?.status).toBe('failed');
    expect(file?.error).toBeInstanceOf(UploadError);
    expect(file?.error?.fileName).toBe('cut.bin');
    expect(file?.error?.cause).toBeInstanceOf(AbortError);
  });

  it('keeps uploading the other files when one fails, and reports each in input order', async () => {
    mock.faults.add({ match: { operation: 'upload', pathIncludes: 'bad.bin' }, status: 400, times: 1 });
    const names = ['a.bin', 'bad.bin', 'c.bin', 'd.bin', 'e.bin'];
    const report = await client.uploads.upload(
      mock.appId,
      names.map((name) => ({ name, data: name })),
      { concurrency: 2 },
    );
    expect(report.files.map((file) => [file.name, file.status])).toEqual([
      ['a.bin', 'uploaded'],
      ['bad.bin', 'failed'],
      ['c.bin', 'uploaded'],
      ['d.bin', 'uploaded'],
      ['e.bin', 'uploaded'],
    ]);
    expect(report).toMatchObject({ filesUploaded: 4, filesFailed: 1, bytesUploaded: 20 });
    expect(report.files[1]).toMatchObject({ attempts: 1, error: { fileName: 'bad.bin', status: 400 } });
  });

  it('fails a stream that yields fewer bytes than declared, with a message saying so', async () => {
    const report = await client.uploads.upload(mock.appId, [
      { name: 'short.bin', stream: Readable.from([Buffer.from('abc')]), size: 10 },
    ]);
    expect(report.files[0]?.status).toBe('failed');
    expect(report.files[0]?.error?.message).toMatch(/"short.bin" yielded only 3 bytes, but its declared size is 10/);
    expect(mock.state.file(mock.appId, 'short.bin')).toBeUndefined();
  });

  it('fails a stream that yields more bytes than declared', async () => {
    const report = await client.uploads.upload(mock.appId, [
      { name: 'long.bin', stream: Readable.from([Buffer.from('abcdef')]), size: 4 },
    ]);
    expect(report.files[0]?.error?.message).toMatch(/yielded more than 4 bytes/);
    expect(mock.state.file(mock.appId, 'long.bin')).toBeUndefined();
  });

  it('logs and ignores an onProgress callback that throws', async () => {
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string) => warnings.push(message) };
    const report = await clientFor(mock.clientOptions(), { logger }).uploads.upload(
      mock.appId,
      [{ name: 'p.bin', data: 'abc' }],
      {
        onProgress: () => {
          throw new Error('broken progress bar');
        },
      },
    );
    expect(report.files[0]?.status).toBe('uploaded');
    expect(warnings.some((message) => /onProgress/.test(message))).toBe(true);
  });

  it('stops when the signal aborts, rejecting with AbortError', async () => {
    const controller = new AbortController();
    mock.faults.add({ match: { operation: 'upload' }, delayMs: 5_000, times: 10 });
    const pending = client.uploads.upload(
      mock.appId,
      ['a', 'b', 'c'].map((name) => ({ name, data: name })),
      { signal: controller.signal, concurrency: 1 },
    );
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const error = await pending.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UploadStoppedError);
    expect((error as UploadStoppedError).cause).toBeInstanceOf(AbortError);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(mock.state.files(mock.appId)).toHaveLength(0);
  });
});
