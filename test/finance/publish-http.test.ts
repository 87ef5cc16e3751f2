import {
  AbortError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  type PublishReport,
  PublishStoppedError,
  type RateBudget,
  RateLimitError,
  RecordValidationError,
  ServerError,
} from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { financeUrl } from '../../src/finance/publisher.js';
import { expectAccounted, financeStatuses } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { capturingFetch } from '../support/recorders.js';
import { financeRecord, financeRecords, toAsync } from '../support/records.js';

let server: RunningEmulator;
beforeEach(async () => {
  server = await startEmulator();
});
afterEach(async () => {
  await server.close();
});

describe('finance publish over HTTP', () => {
  it('an ambiguous 502 on finance is reported as unknown, not re-sent', async () => {
    const client = clientFor(server);
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, status: 502 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(30), {
      batchSize: 10,
      concurrency: 1,
    });
    expect(report.batches.map((b) => b.status)).toEqual(['unknown', 'sent', 'sent']);
    expect(report.batches[0]?.error).toBeInstanceOf(ServerError);
    expect(financeStatuses(server.mock)).toEqual([502, 200, 200]);
    expectAccounted(report, 30);
  });

  it('a connection dropped after the service stored a batch leaves it unknown, stored once', async () => {
    const client = clientFor(server);
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, drop: 'after' });
    const report = await client.finance.publish(server.mock.appId, financeRecords(20), {
      batchSize: 10,
      concurrency: 1,
    });
    expect(report.batches.map((b) => b.status)).toEqual(['unknown', 'sent']);
    expect(report.batches[0]?.error).toBeInstanceOf(ConnectionError);
    expect(server.mock.state.recordCount(server.mock.appId)).toBe(20);
    expect(financeStatuses(server.mock)).toHaveLength(2);
  });

  it('re-sends an ambiguous batch only when retryAmbiguous is on, and still reports it unknown', async () => {
    const client = clientFor(server, { retryAmbiguous: true, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, status: 502 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(10));
    expect(financeStatuses(server.mock)).toEqual([502, 200]);
    // This 502 happened not to store the batch, but a client cannot tell it from one that did.
    expect(report.batches.map((b) => b.status)).toEqual(['unknown']);
    expect(report.batches[0]?.error).toBeInstanceOf(ServerError);
    expect(report.batches[0]?.storedAtLeastOnce).toBe(true);
    expect(report.recordsSent).toBe(0);
    expectAccounted(report, 10);
  });

  it('reports a batch unknown, not sent, when it was stored, the connection dropped, and the re-send succeeded', async () => {
    const client = clientFor(server, { retryAmbiguous: true, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
    // The service stores the first batch, then the connection drops: ambiguous, so it is re-sent.
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, drop: 'after' });
    const settled: { status: string; storedAtLeastOnce?: true }[] = [];
    const report = await client.finance.publish(server.mock.appId, financeRecords(20), {
      batchSize: 10,
      concurrency: 1,
      onBatchSettled: ({ status, storedAtLeastOnce }) => {
        settled.push({ status, ...(storedAtLeastOnce && { storedAtLeastOnce }) });
      },
    });
    expect(financeStatuses(server.mock)).toEqual([0, 200, 200]);
    // Why it cannot be `sent` (stored once): the service holds the first batch twice.
    const held = server.mock.state.records(server.mock.appId).map((r) => r.transactionNumber);
    expect(held).toHaveLength(30);
    for (let i = 0; i < 10; i++) expect(held.filter((tx) => tx === `tx-${i}`)).toHaveLength(2);
    for (let i = 10; i < 20; i++) expect(held.filter((tx) => tx === `tx-${i}`)).toHaveLength(1);
    expect(report.batches.map((b) => b.status)).toEqual(['unknown', 'sent']);
    expect(report.batches[0]?.error).toBeInstanceOf(ConnectionError);
    expect(report.batches[0]?.storedAtLeastOnce).toBe(true);
    expect(report.batches[1]).not.toHaveProperty('storedAtLeastOnce');
    expect(settled).toEqual([{ status: 'unknown', storedAtLeastOnce: true }, { status: 'sent' }]);
    expect(report.recordsUnknown).toBe(10);
    expect(report.recordsSent).toBe(10);
    expect(report.batchesUnknown).toBe(1);
    expectAccounted(report, 20);
  });

  it('reports a batch unknown, never failed, when an ambiguous attempt was re-sent and the re-send met a 429 past the deadline', async () => {
    const client = clientFor(server, {
      retryAmbiguous: true,
      maxRetries: 2,
      backoff: { initialDelayMs: 0, maxDelayMs: 0 },
    });
    // The service stores the batch, then the connection drops: ambiguous, so it is re-sent...
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, drop: 'after' });
    // ...and the re-send is rate limited, with no patience left (a deadline of 0).
    server.mock.faults.add({ match: { operation: 'finance' }, times: 3, status: 429, retryAfter: 0 });
    const stopped = await client.finance
      .publish(server.mock.appId, financeRecords(10), { rateLimitDeadlineMs: 0 })
      .catch((error: unknown) => error);
    // No patience left: the run stops on the 429, as every further batch would meet it.
    expect(stopped).toBeInstanceOf(PublishStoppedError);
    expect((stopped as PublishStoppedError).cause).toBeInstanceOf(RateLimitError);
    const report = (stopped as PublishStoppedError).report;
    expect(financeStatuses(server.mock)).toEqual([0, 429]);
    expect(server.mock.state.recordCount(server.mock.appId)).toBe(10);
    expect(report.batches.map((b) => b.status)).toEqual(['unknown']);
    expect(report.batches[0]?.error).toBeInstanceOf(ConnectionError);
    // No re-send succeeded: stored once or not at all, as far as the client can tell.
    expect(report.batches[0]).not.toHaveProperty('storedAtLeastOnce');
    expect(report.recordsUnknown).toBe(10);
    expect(report.recordsFailed).toBe(0);
    expectAccounted(report, 10);
  });

  it.each([501, 505])(
    'reports a %i on finance as unknown, as the transport classifies it (ambiguous, not re-sent)',
    async (status) => {
      const client = clientFor(server);
      server.mock.faults.add({ match: { operation: 'finance' }, times: 1, status });
      const report = await client.finance.publish(server.mock.appId, financeRecords(10));
      expect(report.batches.map((b) => b.status)).toEqual(['unknown']);
      expect(financeStatuses(server.mock)).toEqual([status]);
    },
  );

  it('retries a 429 after its Retry-After and counts the batch as sent once', async () => {
    // A Retry-After of 0 is honoured on the first wait only; short backoffs keep the second quick.
    const client = clientFor(server, { backoff: { initialDelayMs: 5, maxDelayMs: 20 } });
    server.mock.faults.add({ match: { operation: 'finance' }, times: 2, status: 429, retryAfter: 0 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(10));
    expect(report.batches.map((b) => b.status)).toEqual(['sent']);
    expect(financeStatuses(server.mock)).toEqual([429, 429, 200]);
    expect(server.mock.state.recordCount(server.mock.appId)).toBe(10);
  });

  it('a 429 does not use up a retry: with maxRetries 0, four 429s in a row still end sent', async () => {
    // Short waits keep the test quick; they are not zero, which would bound the 429s by maxRetries.
    const client = clientFor(server, { maxRetries: 0, backoff: { initialDelayMs: 5, maxDelayMs: 20 } });
    server.mock.faults.add({ match: { operation: 'finance' }, times: 4, status: 429, retryAfter: 0 });
    const report = await client.finance.publish(server.mock.appId, financeRecords(10));
    expect(report.batches.map((b) => b.status)).toEqual(['sent']);
    expect(financeStatuses(server.mock)).toEqual([429, 429, 429, 429, 200]);
    expect(server.mock.state.recordCount(server.mock.appId)).toBe(10);
  });

  it('marks a batch failed with the 429, safe to send again, once nothing was accepted for rateLimitDeadlineMs', async () => {
    const client = clientFor(server, { maxRetries: 0, backoff: { initialDelayMs: 40, maxDelayMs: 80 } });
    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, status: 429 });
    const started = Date.now();
    // Without Retry-After the waits follow the backoff (about 40 ms, then 80 ms): re-sends fit.
    const outcome = await client.finance
      .publish(server.mock.appId, financeRecords(10), { rateLimitDeadlineMs: 300 })
      .catch((error: unknown) => error);
    expect(Date.now() - started).toBeLessThan(1_500);
    // The batch fails when its next wait would end past the deadline; had its last 429 come after
    // the deadline, the run would also have stopped, with that 429 as the cause.
    if (outcome instanceof PublishStoppedError) expect(outcome.cause).toBeInstanceOf(RateLimitError);
    const report = outcome instanceof PublishStoppedError ? outcome.report : (outcome as PublishReport);
    expect(report.batches.map((b) => b.status)).toEqual(['failed']);
    expect(report.batches[0]?.error).toBeInstanceOf(RateLimitError);
    expect(financeStatuses(server.mock).length).toBeGreaterThanOrEqual(2);
    expect(financeStatuses(server.mock).every((status) => status === 429)).toBe(true);
    expect(report.recordsFailed).toBe(10);
  });

  it("keeps the 429 patience when the wall clock steps forward mid-run (NTP, a resumed VM): the deadline is the run's own time", async () => {
    const client = clientFor(server, { backoff: { initialDelayMs: 5, maxDelayMs: 20 } });
    const limited = server.mock.faults.add({ match: { operation: 'finance' }, times: 2, status: 429, retryAfter: 0 });
    const realNow = Date.now.bind(Date);
    // An hour later by the wall clock from the second 429 on, which a 60 s deadline must not see.
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + (limited.hits > 1 ? 3_600_000 : 0));
    try {
      const report = await client.finance.publish(server.mock.appId, financeRecords(10), {
        rateLimitDeadlineMs: 60_000,
      });
      // The emulator's tokens expire by the same clock: a 401 and a fresh token may come in between.
      expect(financeStatuses(server.mock).filter((status) => status === 429)).toHaveLength(2);
      expect(financeStatuses(server.mock).at(-1)).toBe(200);
      expect(report.recordsSent).toBe(10);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('a rateBudget given to publish paces every send: each acquire released once, 429s reported with Retry-After, no slot without a batch', async () => {
    const client = clientFor(server);
    server.mock.faults.add({ match: { operation: 'finance' }, times: 1, status: 429, retryAfter: 1 });
    const events: string[] = [];
    let inFlight = 0;
    const budget: RateBudget = {
      acquire: async () => {
        inFlight++;
        events.push('acquire');
      },
      release: () => {
        inFlight--;
        events.push('release');
      },
      onSuccess: () => void events.push('success'),
      onRateLimited: (retryAfterMs) => void events.push(`429 ${retryAfterMs}`),
    };
    const report = await client.finance.publish(server.mock.appId, financeRecords(10), {
      rateBudget: budget,
      concurrency: 1,
    });
    expect(report.recordsSent).toBe(10);
    expect(inFlight).toBe(0);
    // One batch: a slot for its send, one for its re-send, and none taken by a worker that then
    // finds the input read to the end (a slot of a shared budget that nobody would use).
    expect(events).toEqual(['acquire', '429 1000', 'release', 'acquire', 'success', 'release']);
  });

  it('takes one slot of a rateBudget per send, however many workers find the input read to the end', async () => {
    const client = clientFor(server);
    let acquired = 0;
    let released = 0;
    const budget: RateBudget = {
      acquire: async () => void acquired++,
      release: () => void released++,
      onSuccess: () => {},
      onRateLimited: () => {},
    };
    const report = await client.finance.publish(server.mock.appId, financeRecords(25), {
      rateBudget: budget,
      batchSize: 10,
      concurrency: 8,
    });
    expect(report.batchesSent).toBe(3);
    expect(financeStatuses(server.mock)).toEqual([200, 200, 200]);
    expect([acquired, released]).toEqual([3, 3]);
  });

  it('refuses a negative rateLimitDeadlineMs before sending anything', async () => {
    const client = clientFor(server);
    await expect(
      client.finance.publish(server.mock.appId, financeRecords(1), { rateLimitDeadlineMs: -1 }),
    ).rejects.toThrow(/rateLimitDeadlineMs/);
    expect(server.mock.state.requests).toHaveLength(0);
  });

  it('on abort rejects with the report: in-flight batches unknown, unsent ones not read', async () => {
    const client = clientFor(server);
    await client.tokens.getToken();
    // The first two batches are answered at once; later ones are held, so the abort that follows
    // the second answer finds two batches in flight however slow the machine is.
    server.mock.faults.add({ match: { operation: 'finance' }, times: 2, delayMs: 1 });
    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, delayMs: 2_000 });
    const controller = new AbortController();
    let sent = 0;
    const error = await client.finance
      .publish(server.mock.appId, toAsync(financeRecords(100)), {
        batchSize: 10,
        concurrency: 2,
        signal: controller.signal,
        onBatchSettled: (batch) => {
          if (batch.status === 'sent' && ++sent === 2) setTimeout(() => controller.abort(), 300);
        },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    const report = (error as PublishStoppedError).report;
    expect(report.recordsSent).toBe(20);
    expect(report.recordsUnknown).toBe(20);
    expect(report.recordsFailed).toBe(0);
    expectAccounted(report, report.recordsRead);
    expect(report.recordsRead).toBeLessThan(100);
  });

  it.each(['../x', 'a/b?c', 'x#y', '%2e%2e'])('keeps appId %j inside one encoded path segment', async (appId) => {
    const client = clientFor(server);
    await expect(client.finance.publishBatch(appId, [financeRecord(1)])).rejects.toBeInstanceOf(NotFoundError);
    const [request] = server.mock.state.requests.filter((r) => r.operation === 'finance');
    expect(request?.path).toBe(`/services/push/v1/customer/apps/${encodeURIComponent(appId)}/finance`);
  });
});

describe('financeUrl', () => {
  it('refuses an empty appId and dot segments', () => {
    const base = new URL('https://api.example.test/');
    for (const appId of ['', '.', '..']) expect(() => financeUrl(base, appId)).toThrow(ConfigurationError);
  });

  it('keeps a base path', () => {
    expect(financeUrl(new URL('https://h.test/prefix'), 'app 1').href).toBe(
      'https://h.test/prefix/services/push/v1/customer/apps/app%201/finance',
    );
  });

  it('builds the app path exactly as the upload-address request does (one shared helper)', async () => {
    const base = 'https://gw.test/push?x=1#f';
    const mock = createPushApiMock();
    const { fetch, seen } = capturingFetch(mock.fetch);
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch }, { baseUrl: base, maxRetries: 0 });
    for (const appId of ['app-1', '../x', 'a/b?c', 'ü id']) {
      // No service lives at gw.test: the request is seen, then fails; its address is what counts.
      await expect(client.uploads.getUploadUrls(appId, ['a.csv'])).rejects.toThrow();
      const sent = new URL(seen.at(-1)?.url ?? '');
      expect(financeUrl(new URL(base), appId).href).toBe(
        `${sent.origin}${sent.pathname}`.replace(/\/upload$/, '/finance'),
      );
    }
    const sentBefore = seen.length;
    for (const appId of ['', '.', '..', 'lone\ud800']) {
      const financeError = (() => {
        try {
          financeUrl(new URL(base), appId);
        } catch (error) {
          return (error as Error).message;
        }
      })();
      await expect(client.uploads.getUploadUrls(appId, ['a.csv'])).rejects.toThrow(financeError);
    }
    expect(seen).toHaveLength(sentBefore);
  });
});

describe('FinancePublisher.publishBatch', () => {
  it('sends one request and resolves with success', async () => {
    const client = clientFor(server);
    await expect(client.finance.publishBatch(server.mock.appId, financeRecords(1000))).resolves.toEqual({
      success: true,
    });
    expect(financeStatuses(server.mock)).toEqual([200]);
  });

  it('refuses 1001 records and invalid ones before any request', async () => {
    const client = clientFor(server);
    await expect(client.finance.publishBatch(server.mock.appId, financeRecords(1001))).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    await expect(
      client.finance.publishBatch(server.mock.appId, [financeRecord(0, { amount: 'ten' })]),
    ).rejects.toBeInstanceOf(RecordValidationError);
    expect(financeStatuses(server.mock)).toEqual([]);
  });

  it('says publish() takes more than 1000 records, and does not suggest it for none', async () => {
    const client = clientFor(server);
    await expect(client.finance.publishBatch(server.mock.appId, financeRecords(1001))).rejects.toThrow(
      "publishBatch sends one request of 1 to 1000 records (the spec's limit), got 1001 records; use publish() for more",
    );
    const empty = await client.finance.publishBatch(server.mock.appId, []).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(ConfigurationError);
    expect((empty as Error).message).toBe(
      "publishBatch sends one request of 1 to 1000 records (the spec's limit), got 0 records",
    );
    expect(financeStatuses(server.mock)).toEqual([]);
  });

  it('refuses a body above maxBatchBytes before sending, instead of meeting a 413', async () => {
    const client = clientFor(server);
    const big = Array.from({ length: 1000 }, (_, i) => financeRecord(i, { description: 'x'.repeat(6000) }));
    const error = await client.finance.publishBatch(server.mock.appId, big).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/body would be \d+ bytes, above maxBatchBytes \(5242880\)/);
    const small = financeRecords(3);
    const bodyBytes = Buffer.byteLength(JSON.stringify({ records: small }), 'utf8');
    await expect(
      client.finance.publishBatch(server.mock.appId, small, { maxBatchBytes: bodyBytes - 1 }),
    ).rejects.toThrow(`body would be ${bodyBytes} bytes, above maxBatchBytes (${bodyBytes - 1})`);
    await expect(client.finance.publishBatch(server.mock.appId, small, { maxBatchBytes: bodyBytes })).resolves.toEqual({
      success: true,
    });
    expect(financeStatuses(server.mock)).toEqual([200]);
  });

  it('rejects a 2xx answer that does not say success: true', async () => {
    const client = clientFor(server);
    server.mock.faults.add({ match: { operation: 'finance' }, status: 200, body: { success: false } });
    await expect(client.finance.publishBatch(server.mock.appId, financeRecords(1))).rejects.toThrow(/success: false/);
  });
});
