/** upload(): per-file settling, addresses asked in batches, and a run stopped by an error rejects with its report. */
import { setupServer } from 'msw/node';
import type { UploadFileResult } from 'push-api-client';
import { AbortError, NotFoundError, PushError, TokenError, UploadError, UploadStoppedError } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { everyOther, heldBack, PATIENCE_CASES } from '../support/fault-patterns.js';

const mock: PushApiMock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  mock.reset();
  server.resetHandlers();
});
afterAll(() => server.close());

const addressRequests = () => mock.state.requests.filter((request) => request.operation === 'upload-urls');
const files = (count: number) => Array.from({ length: count }, (_, i) => ({ name: `f${i}.txt`, data: `file ${i}` }));

async function rejection(promise: Promise<unknown>): Promise<UploadStoppedError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof UploadStoppedError))
    throw new Error(`expected an UploadStoppedError, got ${String(outcome)}`);
  expect(outcome).toBeInstanceOf(PushError);
  return outcome;
}

describe('upload outcome contract', () => {
  it('calls onFileSettled once per file and asks for the addresses of all 120 names in one request', async () => {
    const settled: UploadFileResult[] = [];
    const report = await clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(120), {
      concurrency: 8,
      onFileSettled: (file) => {
        settled.push(file);
      },
    });
    expect(report).toMatchObject({ filesUploaded: 120, filesFailed: 0, filesNotStarted: 0 });
    expect(settled.map((file) => file.name).sort()).toEqual(report.files.map((file) => file.name).sort());
    const requests = addressRequests();
    expect(requests).toHaveLength(1);
    expect(requests[0]?.query.filenames).toHaveLength(120);
  });

  it('rejects with UploadStoppedError, its cause the 404 of an unknown app, carrying a report in which no file started', async () => {
    const error = await rejection(clientFor(mock.clientOptions()).uploads.upload('no-such-app', files(3)));
    expect(error.cause).toBeInstanceOf(NotFoundError);
    expect((error.cause as NotFoundError).status).toBe(404);
    expect(error.report).toMatchObject({ filesUploaded: 0, filesNotStarted: 3 });
  });

  it('rejects with UploadStoppedError, its cause the TokenError of a wrong secret', async () => {
    const error = await rejection(
      clientFor(mock.clientOptions(), { clientSecret: 'wrong' }).uploads.upload(mock.appId, files(2)),
    );
    expect(error.cause).toBeInstanceOf(TokenError);
    expect(error.report.files.map((file) => file.status)).toEqual(['not-started', 'not-started']);
  });

  it('rejects on abort with UploadStoppedError (cause: AbortError) whose report keeps the files already uploaded', async () => {
    const controller = new AbortController();
    const error = await rejection(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(10), {
        concurrency: 1,
        signal: controller.signal,
        onFileSettled: (file) => {
          if (file.name === 'f2.txt') controller.abort();
        },
      }),
    );
    expect(error.cause).toBeInstanceOf(AbortError);
    const { report } = error;
    expect(report.filesUploaded).toBe(3);
    expect(report.filesNotStarted).toBe(7);
    expect(mock.state.files(mock.appId)).toHaveLength(3);
  });

  it("gives what the callback threw as the cause when it also aborted: the caller's code first, as in publish", async () => {
    const controller = new AbortController();
    const failure = new Error('ledger is down');
    const error = await rejection(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(5), {
        concurrency: 1,
        signal: controller.signal,
        onFileSettled: () => {
          controller.abort();
          throw failure;
        },
      }),
    );
    expect(error.cause).toBe(failure);
    expect(error.report.filesUploaded).toBe(1);
    expect(error.report.filesNotStarted).toBe(4);
  });

  it('stops starting files when onFileSettled throws, and rejects with the cause', async () => {
    const failure = new Error('ledger is down');
    const error = await rejection(
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(5), {
        concurrency: 1,
        onFileSettled: () => {
          throw failure;
        },
      }),
    );
    expect(error.cause).toBe(failure);
    expect(error.report).toMatchObject({ filesUploaded: 1, filesNotStarted: 4 });
  });
});

describe('stopSignal ends an upload in order', () => {
  function refuseWithLongRetryAfter() {
    return mock.faults.add({ match: { operation: 'upload' }, status: 503, retryAfter: 30, times: Infinity });
  }

  // With no patience (0), a file failing with a 503 would stop the run; one whose re-send the stop
  // cut short says nothing of the host, so the stop stays the caller's either way.
  for (const [patience, rateLimitDeadlineMs] of PATIENCE_CASES) {
    it(`a file waiting out a Retry-After gives up at once as failed, and files not started make it reject${patience}`, async () => {
      const refusing = refuseWithLongRetryAfter();
      const stop = new AbortController();
      const started = performance.now();
      const running = clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(3), {
        concurrency: 1,
        adaptive: false,
        rateLimitDeadlineMs,
        stopSignal: stop.signal,
      });
      await expect.poll(() => refusing.hits, { timeout: 2_000, interval: 5 }).toBe(1);
      stop.abort();
      const error = await rejection(running);
      // Well before the 30 s the storage host asked for, and with no second PUT.
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(refusing.hits).toBe(1);
      expect(error.cause).toBeInstanceOf(AbortError);
      expect(error.report.stoppedBy).toBeUndefined();
      expect(error.report).toMatchObject({ filesUploaded: 0, filesFailed: 1, filesNotStarted: 2 });
    });
  }

  for (const [patience, rateLimitDeadlineMs] of PATIENCE_CASES) {
    it(`resolves with the report when every file had started${patience}`, async () => {
      const refusing = refuseWithLongRetryAfter();
      const stop = new AbortController();
      const running = clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(2), {
        concurrency: 2,
        adaptive: false,
        rateLimitDeadlineMs,
        stopSignal: stop.signal,
      });
      await expect.poll(() => refusing.hits, { timeout: 2_000, interval: 5 }).toBe(2);
      stop.abort();
      const report = await running;
      expect(report.stoppedBy).toBeUndefined();
      expect(report).toMatchObject({ filesUploaded: 0, filesFailed: 2, filesNotStarted: 0 });
    });
  }
});

describe("an upload's patience with a storage host that is down", () => {
  const putsAnswered = (status: number) =>
    mock.state.requests.filter((request) => request.operation === 'upload' && request.status === status).length;

  it('an outage longer than rateLimitDeadlineMs stops the run: the files not started stay not-started', async () => {
    // Each file gives up after its own retries; without the run's patience every one of the 200
    // files would be tried in turn against a host that is down (400 PUTs).
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: Number.POSITIVE_INFINITY });
    const client = clientFor(mock.clientOptions(), { maxRetries: 1, backoff: { initialDelayMs: 20, maxDelayMs: 20 } });
    const error = await rejection(
      client.uploads.upload(mock.appId, files(200), { concurrency: 2, adaptive: false, rateLimitDeadlineMs: 300 }),
    );
    expect(error.cause).toBeInstanceOf(UploadError);
    expect((error.cause as UploadError).status).toBe(503);
    expect(error.report.stoppedBy).toBe(error.cause);
    expect(error.report.filesUploaded).toBe(0);
    expect(error.report.filesFailed).toBeGreaterThan(0);
    expect(error.report.filesNotStarted).toBeGreaterThan(100);
    expect(error.report.filesFailed + error.report.filesNotStarted).toBe(200);
    expect(putsAnswered(503)).toBeLessThan(200);
  });

  it('an outage shorter than the deadline fails the files it met, and the run goes on', async () => {
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 3 });
    const report = await clientFor(mock.clientOptions(), { maxRetries: 0 }).uploads.upload(mock.appId, files(10), {
      concurrency: 1,
      adaptive: false,
    });
    expect(report).toMatchObject({ filesUploaded: 7, filesFailed: 3, filesNotStarted: 0 });
    expect(report.stoppedBy).toBeUndefined();
  });

  it('a host that refuses some PUTs but still stores files is not down: each file stored renews the patience', async () => {
    // Every other PUT is refused (429) and its file fails (no retries), for a run several times the
    // deadline long (60 PUTs held 20 ms each, one at a time): a file stored between any two refusals.
    mock.faults.add({ match: { operation: 'upload' }, status: 429, probability: 0.5, random: everyOther() });
    const slowPuts = heldBack(20, (_url, method) => method === 'PUT');
    const client = clientFor(mock.clientOptions(), { maxRetries: 0, fetch: slowPuts });
    const started = performance.now();
    const report = await client.uploads.upload(mock.appId, files(60), {
      concurrency: 1,
      adaptive: false,
      rateLimitDeadlineMs: 400,
    });
    expect(performance.now() - started).toBeGreaterThan(3 * 400);
    expect(report.stoppedBy).toBeUndefined();
    expect(report).toMatchObject({ filesUploaded: 30, filesFailed: 30, filesNotStarted: 0 });
  });

  it("a refused re-sign past the deadline fails its file only: the service's answer is not the storage host's", async () => {
    // Two PUTs refused (503) start the patience; the third file's PUT then meets an expired
    // signature after the deadline, and its fresh address is refused with the data API's 503.
    mock.faults.add({ match: { operation: 'upload' }, status: 503, times: 2 });
    const expired =
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>';
    let settled = 0;
    const report = await clientFor(mock.clientOptions(), { maxRetries: 0 }).uploads.upload(mock.appId, files(4), {
      concurrency: 1,
      adaptive: false,
      rateLimitDeadlineMs: 50,
      onFileSettled: () => {
        settled += 1;
        if (settled !== 2) return;
        mock.faults.add({ match: { operation: 'upload' }, status: 403, body: expired, delayMs: 100 });
        mock.faults.add({ match: { operation: 'upload-urls' }, status: 503, times: Number.POSITIVE_INFINITY });
      },
    });
    expect(report.stoppedBy).toBeUndefined();
    expect(report.files.map((file) => file.status)).toEqual(['failed', 'failed', 'failed', 'uploaded']);
    expect(report.files[2]?.error?.status).toBe(503);
  });

  it('refuses a rateLimitDeadlineMs that is not a number of milliseconds before any request', async () => {
    const upload = (rateLimitDeadlineMs: unknown) =>
      clientFor(mock.clientOptions()).uploads.upload(mock.appId, files(1), {
        rateLimitDeadlineMs: rateLimitDeadlineMs as number,
      });
    for (const bad of [-1, Number.NaN, '300']) {
      await expect(upload(bad)).rejects.toThrow(/rateLimitDeadlineMs must be a number ≥ 0/);
    }
    expect(mock.state.requests).toHaveLength(0);
  });
});
