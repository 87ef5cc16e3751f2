/**
 * A run that stops while one of its requests waits to be sent again (a 503's or a 429's
 * `Retry-After`, a backoff) ends without that wait and sends nothing after the stop: the waiting
 * batch or file settles with its last answer (a 503 or 429 is surely not stored: `failed`). Real
 * HTTP on 127.0.0.1; the service asks for a wait far longer than the test allows. A batch waiting for
 * a token when the run stops gives it up too: after its 401 it is failed, before its first attempt
 * it is not read.
 */
import type { ServerResponse } from 'node:http';
import { AbortError, NotFoundError, PublishStoppedError, type PushClient, UploadStoppedError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { type HostileRequest, useHostileService } from '../support/hostile-service.js';
import { recordingLogger } from '../support/recorders.js';
import { financeRecords } from '../support/records.js';

const start = useHostileService();

/** The wait the service asks for: a run that waits it out fails the time bound below. */
const RETRY_AFTER_SECONDS = '4';
const WITHIN_MS = 2_000;

async function timed<T>(promise: Promise<T>): Promise<{ outcome: unknown; ms: number }> {
  const started = performance.now();
  const outcome = await promise.then(
    (value) => value,
    (error: unknown) => error,
  );
  return { outcome, ms: performance.now() - started };
}

/** Resolves with 'hung up' once the client closes a response held open (`watch(res)`) before its end. */
function hangUpWatcher(): { closed: Promise<'hung up'>; watch(res: ServerResponse): void } {
  let hungUp: () => void = () => {};
  const closed = new Promise<'hung up'>((resolve) => {
    hungUp = () => resolve('hung up');
  });
  return {
    closed,
    watch: (res) =>
      res.on('close', () => {
        if (!res.writableEnded) hungUp();
      }),
  };
}

/**
 * Uploads `first` and `fast.csv` two at a time; `fast.csv`'s `onFileSettled` throws `thrown`,
 * which stops the run while `first` still waits.
 */
function uploadStoppedByFastFile(client: PushClient, first: string, thrown: Error) {
  return timed(
    client.uploads.upload(
      'app-1',
      [
        { name: first, data: 'a' },
        { name: 'fast.csv', data: 'b' },
      ],
      {
        concurrency: 2,
        onFileSettled: (file) => {
          if (file.name === 'fast.csv') throw thrown;
        },
      },
    ),
  );
}

/** Finance requests after the one that stopped the run (the second). */
function financeAfterStop(requests: HostileRequest[]): number {
  return requests.filter((request) => request.route === 'finance').length - 2;
}

describe('a stop ends the waits before a re-send', () => {
  for (const [status, name] of [
    [503, 'a 503'],
    [429, 'a 429'],
  ] as const) {
    it(`publish: a batch waiting out ${name}'s Retry-After when a 404 stops the run is failed at once, not re-sent`, async () => {
      const service = await start((request, res) => {
        if (request.route !== 'finance') return false;
        if (request.hit === 1) res.writeHead(status, { 'retry-after': RETRY_AFTER_SECONDS }).end('{}');
        // The stop comes while the first batch waits.
        else setTimeout(() => res.writeHead(404).end('{"message":"no such app"}'), 50);
        return true;
      });
      const logger = recordingLogger();
      const client = service.client({ maxRetries: 1, logger, logLevel: 'info' });
      const { outcome, ms } = await timed(
        client.finance.publish('app-1', financeRecords(20), { batchSize: 10, concurrency: 2 }),
      );
      // The retry announced for batch 0 is followed by the line that says it never came.
      expect(logger.lines.map((line) => line.message).filter((message) => message.includes('retry'))).toEqual([
        'push-api-client retrying',
        'push-api-client retry not sent: its run stopped',
      ]);

      expect(outcome).toBeInstanceOf(PublishStoppedError);
      const error = outcome as PublishStoppedError;
      expect(error.cause).toBeInstanceOf(NotFoundError);
      expect(ms).toBeLessThan(WITHIN_MS);
      expect(financeAfterStop(service.requests)).toBe(0);
      expect(
        error.report.batches.map((batch) => [
          batch.index,
          batch.status,
          (batch.error as { status?: number } | undefined)?.status,
        ]),
      ).toEqual([
        [0, 'failed', status],
        [1, 'failed', 404],
      ]);
      expectAccounted(error.report, 20);
    });
  }

  it("publish: batches waiting for the run's rate-limit pause when a 404 stops the run are not read at once", async () => {
    const service = await start((request, res) => {
      if (request.route !== 'finance') return false;
      const first = (JSON.parse(request.body) as { records: { transactionNumber: string }[] }).records[0];
      // The first batch's 429 pauses the run's sending; the second stops the run during the pause.
      if (first?.transactionNumber === 'tx-0') res.writeHead(429, { 'retry-after': RETRY_AFTER_SECONDS }).end('{}');
      else if (first?.transactionNumber === 'tx-10') setTimeout(() => res.writeHead(404).end('{}'), 150);
      // The others of the first round are answered once the pause began.
      else setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}'), 50);
      return true;
    });
    const client = service.client({ maxRetries: 1 });
    const { outcome, ms } = await timed(
      client.finance.publish('app-1', financeRecords(200), { batchSize: 10, concurrency: 8 }),
    );

    expect(outcome).toBeInstanceOf(PublishStoppedError);
    const error = outcome as PublishStoppedError;
    expect(error.cause).toBeInstanceOf(NotFoundError);
    expect(ms).toBeLessThan(WITHIN_MS);
    // The first round only: the batches read during the pause were never sent.
    expect(service.on('finance')).toHaveLength(8);
    expect(error.report.batches).toHaveLength(8);
    expectAccounted(error.report, 200);
  });

  it('publish: the caller abort during such a wait still wins as the cause', async () => {
    const controller = new AbortController();
    const service = await start((request, res) => {
      if (request.route !== 'finance') return false;
      res.writeHead(503, { 'retry-after': RETRY_AFTER_SECONDS }).end('{}');
      setTimeout(() => controller.abort(), 50);
      return true;
    });
    const client = service.client({ maxRetries: 1 });
    const { outcome, ms } = await timed(
      client.finance.publish('app-1', financeRecords(10), { batchSize: 10, signal: controller.signal }),
    );
    expect(outcome).toBeInstanceOf(PublishStoppedError);
    expect((outcome as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect(ms).toBeLessThan(WITHIN_MS);
    expectAccounted((outcome as PublishStoppedError).report, 10);
  });

  it("upload: a file waiting out its PUT's 503 when onFileSettled throws is failed at once, not PUT again", async () => {
    const service = await start((request, res) => {
      if (request.route !== 'storage' || !request.path.endsWith('/slow.csv')) return false;
      res.writeHead(503, { 'retry-after': RETRY_AFTER_SECONDS }).end();
      return true;
    });
    const client = service.client({ maxRetries: 1 });
    const thrown = new Error('my callback failed');
    const { outcome, ms } = await uploadStoppedByFastFile(client, 'slow.csv', thrown);

    expect(outcome).toBeInstanceOf(UploadStoppedError);
    const error = outcome as UploadStoppedError;
    expect(error.cause).toBe(thrown);
    expect(ms).toBeLessThan(WITHIN_MS);
    expect(service.on('storage').filter((request) => request.path.endsWith('/slow.csv'))).toHaveLength(1);
    expect(error.report.files.map((file) => [file.name, file.status, file.error?.status])).toEqual([
      ['slow.csv', 'failed', 503],
      ['fast.csv', 'uploaded', undefined],
    ]);
  });

  it('upload: a file whose address expired is not given a fresh one once the run stopped', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'storage' || !request.path.endsWith('/expired.csv')) return false;
      // Answered once the other file's callback stopped the run.
      setTimeout(() => {
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      }, 100);
      return true;
    });
    const client = service.client({ maxRetries: 1 });
    const { outcome } = await uploadStoppedByFastFile(client, 'expired.csv', new Error('stop'));

    expect(outcome).toBeInstanceOf(UploadStoppedError);
    const error = outcome as UploadStoppedError;
    // One address request for both files, none after the stop; one PUT of the expired file.
    expect(service.on('upload-urls')).toHaveLength(1);
    expect(service.on('storage').filter((request) => request.path.endsWith('/expired.csv'))).toHaveLength(1);
    expect(error.report.files[0]).toMatchObject({ name: 'expired.csv', status: 'failed', attempts: 1 });
  });

  it('upload: a fresh address still on its way when the run stops is given up, and the file failed with its refusal', async () => {
    const resignClosed = hangUpWatcher();
    const service = await start((request, res) => {
      if (request.route === 'upload-urls' && request.hit > 1) {
        // The fresh address never comes.
        resignClosed.watch(res);
        return true;
      }
      if (request.route !== 'storage') return false;
      if (request.path.endsWith('/expired.csv')) {
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
      } else setTimeout(() => res.writeHead(200).end(), 150);
      return true;
    });
    const client = service.client(); // a 5 s timeout: far past the bound below
    const thrown = new Error('my callback failed');
    const { outcome, ms } = await uploadStoppedByFastFile(client, 'expired.csv', thrown);

    expect(outcome).toBeInstanceOf(UploadStoppedError);
    const error = outcome as UploadStoppedError;
    expect(error.cause).toBe(thrown);
    expect(ms).toBeLessThan(WITHIN_MS);
    expect(service.on('upload-urls')).toHaveLength(2);
    expect(error.report.files[0]).toMatchObject({ name: 'expired.csv', status: 'failed', attempts: 1 });
    expect(error.report.files[0]?.error?.status).toBe(403);
    expect(await within(resignClosed.closed, WITHIN_MS)).toBe('hung up');
  });

  /** A service whose token endpoint answers the first request only, and holds the others open. */
  async function tokenEndpointSilentAfterFirst(finance: (hit: number, res: ServerResponse) => boolean) {
    const refreshClosed = hangUpWatcher();
    const service = await start((request, res) => {
      if (request.route === 'finance') return finance(request.hit, res);
      if (request.route !== 'token' || request.hit === 1) return false;
      refreshClosed.watch(res);
      return true;
    });
    return { service, refreshClosed: refreshClosed.closed };
  }

  it('publish: a batch waiting for a refreshed token after its 401 when a 404 stops the run is failed at once, and the refresh dropped', async () => {
    const { service, refreshClosed } = await tokenEndpointSilentAfterFirst((hit, res) => {
      if (hit === 1) res.writeHead(401).end('{}');
      else setTimeout(() => res.writeHead(404).end('{"message":"no such app"}'), 100);
      return true;
    });
    const client = service.client(); // a 5 s timeout: far past the bound below
    const { outcome, ms } = await timed(
      client.finance.publish('app-1', financeRecords(20), { batchSize: 10, concurrency: 2 }),
    );

    expect(outcome).toBeInstanceOf(PublishStoppedError);
    const error = outcome as PublishStoppedError;
    expect(error.cause).toBeInstanceOf(NotFoundError);
    expect(ms).toBeLessThan(WITHIN_MS);
    expect(service.on('finance')).toHaveLength(2);
    expect(
      error.report.batches.map((batch) => [
        batch.index,
        batch.status,
        (batch.error as { status?: number } | undefined)?.status,
      ]),
    ).toEqual([
      [0, 'failed', 401],
      [1, 'failed', 404],
    ]);
    expectAccounted(error.report, 20);
    // Nobody waits for the refresh any more: it does not keep the process alive to its timeout.
    expect(await within(refreshClosed, WITHIN_MS)).toBe('hung up');
  });

  it('publish: a batch still waiting for its first token when the run stops is not read, and never sent', async () => {
    const { service, refreshClosed } = await tokenEndpointSilentAfterFirst((hit, res) => {
      if (hit !== 1) return false;
      res.writeHead(401).end('{}'); // the token is refused: the next batch waits for a new one
      return true;
    });
    const client = service.client(); // a 5 s timeout: far past the bound below
    const thrown = new Error('my callback failed');
    const { outcome, ms } = await timed(
      client.finance.publish('app-1', financeRecords(30), {
        batchSize: 10,
        concurrency: 3,
        onBatchSending: async ({ index }) => {
          // Batch 1 sets out after batch 0's 401; batch 2's callback then stops the run.
          if (index === 1) await new Promise((resolve) => setTimeout(resolve, 100));
          if (index === 2) {
            await new Promise((resolve) => setTimeout(resolve, 300));
            throw thrown;
          }
        },
      }),
    );

    expect(outcome).toBeInstanceOf(PublishStoppedError);
    const error = outcome as PublishStoppedError;
    expect(error.cause).toBe(thrown);
    expect(ms).toBeLessThan(WITHIN_MS);
    expect(service.on('finance')).toHaveLength(1);
    expect(error.report.batches.map((batch) => [batch.index, batch.status])).toEqual([[0, 'failed']]);
    expect(error.report.recordsNotRead).toBe(20);
    expectAccounted(error.report, 30);
    expect(await within(refreshClosed, WITHIN_MS)).toBe('hung up');
  });

  it('publish: batches waiting for the first token are not read once the input fails, and the token request is hung up', async () => {
    const tokenClosed = hangUpWatcher();
    const service = await start((request, res) => {
      if (request.route !== 'token') return false;
      tokenClosed.watch(res);
      return true; // never answered
    });
    const thrown = new Error('the export broke');
    async function* records() {
      yield* financeRecords(10);
      await new Promise((resolve) => setTimeout(resolve, 200));
      throw thrown;
    }
    const sending: number[] = [];
    const client = service.client(); // a 5 s timeout: far past the bound below
    const { outcome, ms } = await timed(
      client.finance.publish('app-1', records(), {
        batchSize: 5,
        onBatchSending: ({ index }) => void sending.push(index),
      }),
    );

    expect(outcome).toBeInstanceOf(PublishStoppedError);
    const error = outcome as PublishStoppedError;
    expect(error.cause).toBe(thrown);
    expect(ms).toBeLessThan(WITHIN_MS);
    expect(service.on('finance')).toHaveLength(0);
    expect(sending).toEqual([]);
    expect(error.report.batches).toEqual([]);
    expect(error.report.recordsNotRead).toBe(10);
    expect(await within(tokenClosed.closed, WITHIN_MS)).toBe('hung up');
  });
});

function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still open'> {
  return Promise.race([promise, new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms))]);
}
