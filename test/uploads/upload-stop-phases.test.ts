/** stopSignal fired at each phase of an upload: every file counted once, the storage agreeing, no hang. */
import { setupServer } from 'msw/node';
import type { UploadReport } from 'push-api-client';
import { AbortError, UploadStoppedError } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const mock: PushApiMock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  mock.reset();
  server.resetHandlers();
});
afterAll(() => server.close());

const files = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `f${i}.txt`, data: `file ${i}` }));
const puts = () => mock.state.requests.filter((request) => request.operation === 'upload').length;

async function outcome(promise: Promise<UploadReport>): Promise<{ report: UploadReport; error: unknown }> {
  return promise.then(
    (report) => ({ report, error: undefined }),
    (error: unknown) => {
      if (!(error instanceof UploadStoppedError)) throw error;
      return { report: error.report, error };
    },
  );
}

function expectEveryFileOnce(report: UploadReport, count: number): void {
  expect(report.files).toHaveLength(count);
  expect(report.filesUploaded + report.filesFailed + report.filesNotStarted).toBe(count);
}

describe('stopSignal at each phase of an upload', () => {
  it('fired before the call: no PUT, the run rejects with its AbortError', async () => {
    const stop = new AbortController();
    stop.abort();
    const { report, error } = await outcome(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(3), { stopSignal: stop.signal }),
    );
    expect((error as UploadStoppedError).cause).toBeInstanceOf(AbortError);
    expect(puts()).toBe(0);
    expect(report.filesNotStarted).toBe(3);
    expectEveryFileOnce(report, 3);
  });

  it.each([
    ['the addresses are being asked for', 'upload-urls'],
    ['the token request is on the wire', 'token'],
  ] as const)('fired while %s: no PUT, every file not started, and it rejects', async (_, operation) => {
    mock.faults.add({ match: { operation }, delayMs: 2_000, times: 1 });
    const stop = new AbortController();
    const started = performance.now();
    const running = outcome(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(3), { stopSignal: stop.signal }),
    );
    setTimeout(() => stop.abort(), 200);
    const { report, error } = await running;
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(puts()).toBe(0);
    expect(report.filesNotStarted).toBe(3);
    expect((error as UploadStoppedError).cause).toBeInstanceOf(AbortError);
    expectEveryFileOnce(report, 3);
  });

  it('fired mid-PUT: the PUT on the wire finishes and counts as uploaded, the storage holding it', async () => {
    mock.faults.add({ match: { operation: 'upload' }, delayMs: 500, times: 1 });
    const stop = new AbortController();
    const running = outcome(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(3), {
        concurrency: 1,
        adaptive: false,
        stopSignal: stop.signal,
      }),
    );
    setTimeout(() => stop.abort(), 200);
    const { report, error } = await running;
    expect((error as UploadStoppedError).cause).toBeInstanceOf(AbortError);
    expect(report.filesUploaded).toBe(1);
    expect(mock.state.files(mock.appId)).toHaveLength(1);
    expectEveryFileOnce(report, 3);
  });
});
