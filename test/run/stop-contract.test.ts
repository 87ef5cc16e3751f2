/**
 * The one contract of a stopped `publish` and `upload` run, where the two used to part: which error
 * is the cause when the service stopped the run and a callback then threw, what the cause of an
 * upload stopped by its storage host is, what a batch aborted before any request carried it (or
 * left in the filling batch by an invalid record) counts as, and an async `onProgress` that rejects.
 */
import type { FetchLike, FinanceRecordInput, PublishReport, SettledBatch, UploadReport } from 'push-api-client';
import {
  ConnectionError,
  NotFoundError,
  PublishStoppedError,
  type PushClient,
  RecordValidationError,
  UploadError,
  UploadStoppedError,
} from 'push-api-client';
import { createPushApiHandler, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { closedPort } from '../support/loopback-server.js';
import { financeRecords } from '../support/records.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterEach(() => {
  emulator.mock.faults.clear();
  emulator.mock.reset();
});
afterAll(() => emulator.close());

const noWaits = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetries: 1 };

async function rejection<E>(promise: Promise<unknown>, type: new (...args: never[]) => E): Promise<E> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof type)) throw new Error(`expected a ${type.name}, got ${String(outcome)}`);
  return outcome;
}

/**
 * A client whose data API and token endpoint are the emulator, in-process, and whose signed upload
 * addresses point at a loopback port where nothing listens: every PUT's connection is refused.
 */
async function clientWithUnreachableStorage(): Promise<{ client: PushClient; appId: string }> {
  const storage = `http://127.0.0.1:${await closedPort()}`;
  const handler = createPushApiHandler({
    authUrl: 'http://127.0.0.1:4010/auth',
    baseUrl: 'http://127.0.0.1:4010',
    uploadUrl: storage,
  });
  const fetch: FetchLike = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url.startsWith(storage) ? globalThis.fetch(input, init) : handler.fetch(input, init);
  };
  return { client: clientFor({ ...handler.clientOptions(), fetch }, noWaits), appId: 'demo-app' };
}

describe('the cause of a stopped run: your code first, whatever came first', () => {
  it('publish: a 404 stops the run, then onBatchSettled throws: the cause is what it threw, stoppedBy the 404', async () => {
    const thrown = new Error('checkpoint disk full');
    const error = await rejection(
      clientFor(emulator, noWaits).finance.publish('no-such-app', financeRecords(3), {
        batchSize: 1,
        concurrency: 1,
        onBatchSettled: () => {
          throw thrown;
        },
      }),
      PublishStoppedError,
    );
    expect(error.cause).toBe(thrown);
    expect(error.report.stoppedBy).toBeInstanceOf(NotFoundError);
    expectAccounted(error.report, 3);
  });

  it('upload: an unreachable storage host stops the run, then onFileSettled throws: the cause is what it threw', async () => {
    const { client, appId } = await clientWithUnreachableStorage();
    const thrown = new Error('progress store down');
    const error = await rejection(
      client.uploads.upload(
        appId,
        [
          { name: 'a.csv', data: 'a' },
          { name: 'b.csv', data: 'b' },
        ],
        {
          concurrency: 1,
          onFileSettled: () => {
            throw thrown;
          },
        },
      ),
      UploadStoppedError,
    );
    expect(error.cause).toBe(thrown);
    expect(error.report.files.map((file) => file.status)).toEqual(['failed', 'not-started']);
    // The service's error is not lost: the report names it, as a publish report does.
    expect(error.report.stoppedBy).toBeInstanceOf(ConnectionError);
  });

  it('upload: the report names the error that stopped the run (stoppedBy), and no abort as one', async () => {
    const stopped = await rejection(
      clientFor(emulator, noWaits).uploads.upload('no-such-app', [{ name: 'a.csv', data: 'a' }]),
      UploadStoppedError,
    );
    expect(stopped.report.stoppedBy).toBeInstanceOf(NotFoundError);
    expect(stopped.report.stoppedBy).toBe(stopped.cause);
    emulator.mock.faults.add({ match: { operation: 'upload-urls' }, delayMs: 2_000 });
    const aborted = await rejection(
      clientFor(emulator).uploads.upload(emulator.mock.appId, [{ name: 'a.csv', data: 'a' }], {
        signal: AbortSignal.timeout(50),
      }),
      UploadStoppedError,
    );
    expect(aborted.report.stoppedBy).toBeUndefined();
    expect(aborted.report.filesNotStarted).toBe(1);
  });
});

describe('an upload stopped by its storage host', () => {
  it('has the ConnectionError itself as cause, as publish does; the file keeps it wrapped in its UploadError', async () => {
    const { client, appId } = await clientWithUnreachableStorage();
    const error = await rejection(
      client.uploads.upload(
        appId,
        [
          { name: 'a.csv', data: 'a' },
          { name: 'b.csv', data: 'b' },
        ],
        { concurrency: 1 },
      ),
      UploadStoppedError,
    );
    expect(error.cause).toBeInstanceOf(ConnectionError);
    expect((error.cause as ConnectionError).requestMaybeSent).toBe(false);
    const [first] = (error.report as UploadReport).files;
    expect(first?.status).toBe('failed');
    expect(first?.error).toBeInstanceOf(UploadError);
    expect(first?.error?.cause).toBe(error.cause);
  });
});

describe('publish aborted while its batches wait for their token', () => {
  it('counts them as not read, unannounced, with no batches entry and no onBatchSettled call: no request carried them', async () => {
    emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: 2_000 });
    const controller = new AbortController();
    const announced: number[] = [];
    const settled: SettledBatch[] = [];
    const publishing = clientFor(emulator).finance.publish(emulator.mock.appId, financeRecords(5), {
      batchSize: 1,
      concurrency: 2,
      signal: controller.signal,
      onBatchSending: (batch) => {
        announced.push(batch.index);
      },
      onBatchSettled: (batch) => {
        settled.push(batch);
      },
    });
    // Both loops hold a batch that waits for the token, answered only after 2 s: abort now.
    setTimeout(() => controller.abort(), 200);
    const error = await rejection(publishing, PublishStoppedError);
    const report: PublishReport = error.report;
    // A batch is announced only once its token is at hand, right before its request leaves.
    expect(announced).toEqual([]);
    expect(settled).toEqual([]);
    expect(report.batches).toEqual([]);
    expect(report).toMatchObject({ recordsSent: 0, recordsFailed: 0, recordsUnknown: 0, recordsNotRead: 5 });
    expectAccounted(report, 5);
    expect(emulator.mock.state.requests.filter((request) => request.operation === 'finance')).toEqual([]);
  });
});

describe('an async onProgress that rejects', () => {
  it('is logged as a warning by publish and upload, never an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (message: string) => warnings.push(message) };
    try {
      const client = clientFor(emulator, { logger });
      const report = await client.finance.publish(emulator.mock.appId, financeRecords(2), {
        onProgress: async () => {
          throw new Error('progress bar gone');
        },
      });
      const upload = await client.uploads.upload(emulator.mock.appId, [{ name: 'a.csv', data: 'a' }], {
        onProgress: async () => {
          throw new Error('progress bar gone');
        },
      });
      // Rejections are reported after a turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(report.recordsSent).toBe(2);
      expect(upload.filesUploaded).toBe(1);
    } finally {
      process.off('unhandledRejection', listener);
    }
    expect(unhandled).toEqual([]);
    expect(warnings.filter((line) => line === 'push-api-client onProgress callback threw').length).toBeGreaterThan(1);
  });
});

describe('publish of an async iterable that meets an invalid record (onInvalid: throw)', () => {
  it('counts the batch being filled as not read, with no batches entry, as docs/publishing.md says', async () => {
    async function* records() {
      for (let index = 0; index < 8; index++) {
        const record = financeRecords(1, index)[0];
        yield index === 5 ? { ...record, amount: 'twelve' as unknown as number } : record;
      }
    }
    const error = await rejection<RecordValidationError>(
      clientFor(emulator).finance.publish(emulator.mock.appId, records() as AsyncIterable<FinanceRecordInput>, {
        batchSize: 3,
        concurrency: 1,
      }),
      RecordValidationError,
    );
    const { report } = error;
    if (report === undefined) throw new Error('expected the report of what was sent');
    expect(report).toMatchObject({ recordsSent: 3, recordsFailed: 0, recordsInvalid: 1, recordsNotRead: 2 });
    expect(report.batches.map((batch) => batch.status)).toEqual(['sent']);
    expectAccounted(report, 6);
  });
});

describe('upload stopped while a file waits for its address', () => {
  /**
   * Ten files named with 1000 characters: seven fit in one address request, so files 7 to 9 are a
   * second request, asked for ahead as the first seven start. The middleware holds that request
   * back until `release` (if ever); `ended` tells how its attempt ended.
   */
  function heldSecondAddressRequest() {
    const files = Array.from({ length: 10 }, (_, index) => ({
      name: `${String(index).padStart(2, '0')}-${'x'.repeat(997)}`,
      data: `file ${index}`,
    }));
    let addressRequests = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ended: (string | undefined)[] = [];
    const client = clientFor(emulator, {
      timeoutMs: 60_000,
      hooks: {
        response: (event) => {
          if (event.operation === 'upload-urls') ended.push(event.error);
        },
      },
      middleware: [
        async (request, next, { operation }) => {
          if (operation === 'uploadUrls' && ++addressRequests === 2) await held;
          return next(request);
        },
      ],
    });
    return { files, client, release, ended };
  }

  /** Throws on the second file to settle, once the first one's worker waits for the held addresses. */
  function throwingOnSecondSettle(thrown: Error, then: () => void = () => {}) {
    let settled = 0;
    return async () => {
      settled += 1;
      if (settled !== 2) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
      then();
      throw thrown;
    };
  }

  it('does not start that file once the address comes: it stays not-started, as publish drops a batch read but not sent', async () => {
    const { files, client, release } = heldSecondAddressRequest();
    const thrown = new Error('stop here');
    const error = await rejection(
      client.uploads.upload(emulator.mock.appId, files, {
        concurrency: 7,
        onFileSettled: throwingOnSecondSettle(thrown, () => setTimeout(release, 100)),
      }),
      UploadStoppedError,
    );
    expect(error.cause).toBe(thrown);
    const statuses = error.report.files.map((file) => file.status);
    expect(statuses.slice(7)).toEqual(['not-started', 'not-started', 'not-started']);
    expect(emulator.mock.state.files(emulator.mock.appId).map((file) => file.name.slice(0, 2))).not.toContain('07');
  });

  it('gives that address request up at the stop instead of waiting for it (its 60 s timeout)', async () => {
    const { files, client, release, ended } = heldSecondAddressRequest();
    const thrown = new Error('stop here');
    try {
      const error = await rejection(
        client.uploads.upload(emulator.mock.appId, files, {
          concurrency: 7,
          onFileSettled: throwingOnSecondSettle(thrown),
        }),
        UploadStoppedError,
      );
      expect(error.cause).toBe(thrown);
      expect(error.report.files.slice(7).map((file) => file.status)).toEqual([
        'not-started',
        'not-started',
        'not-started',
      ]);
      // The first request answered; the held one was aborted, not left to outlive the call.
      expect(ended).toEqual([undefined, 'AbortError']);
    } finally {
      release();
    }
  });
});
