/** A publish run stopped by an error every batch would meet: it stops at once and rejects with that error and its report. */
import type { PublishReport } from 'push-api-client';
import {
  AbortError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PublishStoppedError,
  PushError,
  TokenError,
} from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { PATIENCE_CASES } from '../support/fault-patterns.js';
import { closedPort } from '../support/loopback-server.js';
import { financeRecords, toAsync } from '../support/records.js';

let server: RunningEmulator;
beforeAll(async () => {
  server = await startEmulator();
});
afterAll(() => server.close());

const fast = { maxRetries: 1 };
const financeRequests = () => server.mock.state.requests.filter((request) => request.operation === 'finance').length;

async function rejection(
  promise: Promise<unknown>,
): Promise<{ cause: PushError; report: PublishReport; stopped: PublishStoppedError }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  // A stopped run rejects with PublishStoppedError; the error that stopped it is its cause, with the report beside it.
  if (!(outcome instanceof PublishStoppedError))
    throw new Error(`expected a PublishStoppedError, got ${String(outcome)}`);
  if (!(outcome.cause instanceof PushError))
    throw new Error(`expected a PushError cause, got ${String(outcome.cause)}`);
  return { cause: outcome.cause, report: outcome.report, stopped: outcome };
}

describe('publish stops early, with the cause', () => {
  it('rejects with the ConnectionError when nothing listens, after one round of retries, counting the rest as not read', async () => {
    const port = await closedPort();
    const address = `http://127.0.0.1:${port}`;
    const client = clientFor(server, { ...fast, baseUrl: address });
    await client.tokens.getToken();
    const { cause: error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(200), { batchSize: 10 }),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(report.stoppedBy).toBe(error);
    // Only the batches in flight when the first one gave up were tried (the starting window of 8); the rest was never sent.
    expect(report.batches.length).toBeLessThanOrEqual(8);
    expect(report.recordsNotRead).toBeGreaterThanOrEqual(120);
    expect(report.recordsSent + report.recordsUnknown).toBe(0);
    expectAccounted(report, 200);
  });

  it('rejects with a ConfigurationError, nothing unknown, for a port fetch refuses to connect to (a "bad port")', async () => {
    // 6000 (X11) is on the Fetch standard's list: fetch fails before it connects, with no error code.
    const client = clientFor(server, { ...fast, baseUrl: 'http://127.0.0.1:6000' });
    await client.tokens.getToken();
    const { cause: error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(20), { batchSize: 10 }),
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain('bad port');
    expect(report.recordsUnknown).toBe(0);
    expect(report.recordsFailed).toBeGreaterThan(0);
    expectAccounted(report, 20);
  });

  it('rejects with the TokenError for a wrong secret; no finance request is made', async () => {
    const client = clientFor(server, { ...fast, clientSecret: 'wrong' });
    const before = financeRequests();
    const { cause: error, report } = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(50), { batchSize: 10 }),
    );
    expect(error).toBeInstanceOf(TokenError);
    expect(financeRequests()).toBe(before);
    expectAccounted(report, 50);
    expect(report.recordsFailed + report.recordsNotRead).toBe(50);
  });

  it('rejects with the 404 for an unknown app and the 401 for a token the service refuses', async () => {
    const client = clientFor(server, fast);
    const unknownApp = await rejection(client.finance.publish('no-such-app', financeRecords(30), { batchSize: 10 }));
    expect(unknownApp.cause).toBeInstanceOf(NotFoundError);
    expect((unknownApp.cause as NotFoundError).status).toBe(404);
    expectAccounted(unknownApp.report, 30);

    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, status: 401 });
    try {
      const refused = await rejection(client.finance.publish(server.mock.appId, financeRecords(30), { batchSize: 10 }));
      expect(refused.cause).toBeInstanceOf(AuthenticationError);
      expect(refused.report.recordsSent).toBe(0);
    } finally {
      server.mock.faults.clear();
    }
  });

  it('keeps the report out of JSON and inspect output of the error', async () => {
    const client = clientFor(server, fast);
    const { stopped: error } = await rejection(client.finance.publish('no-such-app', financeRecords(5)));
    expect(error.report).toBeDefined();
    expect(Object.keys(error)).not.toContain('report');
    expect(JSON.stringify(error)).not.toContain('recordsNotRead');
    // The cause's own fields are in the JSON: a log line says what stopped the run.
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'PublishStoppedError',
      cause: { name: 'NotFoundError', status: 404 },
    });
  });
});

describe('stopSignal ends a run in order', () => {
  /** Every finance request is refused with 503 and a Retry-After of 30 s, until the test clears it. */
  function refuseWithLongRetryAfter() {
    return server.mock.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 30, times: Infinity });
  }

  // With no patience (0), a batch failing with a 503 would stop the run; one whose re-send the stop
  // cut short says nothing of the service, so the stop stays the caller's either way.
  for (const [patience, rateLimitDeadlineMs] of PATIENCE_CASES) {
    it(`a batch waiting out a Retry-After gives up at once as failed, and records left unread make it reject${patience}`, async () => {
      const refusing = refuseWithLongRetryAfter();
      try {
        const client = clientFor(server);
        const stop = new AbortController();
        const requestsBefore = financeRequests();
        const started = performance.now();
        const running = client.finance.publish(server.mock.appId, toAsync(financeRecords(100)), {
          batchSize: 10,
          concurrency: 2,
          rateLimitDeadlineMs,
          stopSignal: stop.signal,
        });
        await expect.poll(() => refusing.hits, { timeout: 2_000, interval: 5 }).toBeGreaterThan(0);
        stop.abort();
        const { cause, report } = await rejection(running);
        // Well before the 30 s the service asked for.
        expect(performance.now() - started).toBeLessThan(3_000);
        expect(cause).toBeInstanceOf(AbortError);
        expect(report.stoppedBy).toBeUndefined();
        // Each batch sent was answered 503 (nothing stored): failed, so sending it again duplicates nothing.
        expect(report.recordsFailed).toBeGreaterThan(0);
        expect(report.recordsSent + report.recordsUnknown).toBe(0);
        // None was sent again after the stop.
        expect(financeRequests() - requestsBefore).toBe(refusing.hits);
        // Reading stopped: the rest of the input was never read, and is in no count.
        expect(report.recordsFailed + report.recordsNotRead).toBeLessThan(100);
      } finally {
        server.mock.faults.clear();
      }
    });
  }

  it('a batch refused with a 401 while its refresh is on its way gives up as failed, and the stop, not the 401, is the cause', async () => {
    const client = clientFor(server);
    await client.tokens.getToken();
    // The token ends at the service (its clock jumps past the lifetime) and every refresh is slow:
    // the first batches meet a 401 and wait for a new token when the run is stopped.
    server.mock.advanceTime(2 * 60 * 60 * 1000);
    const slowToken = server.mock.faults.add({ match: { operation: 'token' }, delayMs: 2_000, times: Infinity });
    try {
      const stop = new AbortController();
      const refused = () => server.mock.state.requests.filter((request) => request.status === 401).length;
      const running = client.finance.publish(server.mock.appId, toAsync(financeRecords(100)), {
        batchSize: 10,
        concurrency: 2,
        stopSignal: stop.signal,
      });
      await expect.poll(() => slowToken.hits, { timeout: 2_000, interval: 5 }).toBe(1);
      expect(refused()).toBeGreaterThan(0);
      stop.abort();
      const { cause, report } = await rejection(running);
      // Nothing says the credentials are refused: the refresh never got its answer.
      expect(cause).toBeInstanceOf(AbortError);
      expect(report.stoppedBy).toBeUndefined();
      expect(report.recordsFailed).toBeGreaterThan(0);
      expect(report.recordsSent + report.recordsUnknown).toBe(0);
    } finally {
      server.mock.faults.clear();
    }
  });

  for (const [patience, rateLimitDeadlineMs] of PATIENCE_CASES) {
    it(`resolves with the report when the whole input had been read${patience}`, async () => {
      const refusing = refuseWithLongRetryAfter();
      try {
        const client = clientFor(server);
        const stop = new AbortController();
        const running = client.finance.publish(server.mock.appId, financeRecords(20), {
          batchSize: 10,
          rateLimitDeadlineMs,
          stopSignal: stop.signal,
        });
        await expect.poll(() => refusing.hits, { timeout: 2_000, interval: 5 }).toBe(2);
        stop.abort();
        const report = await running;
        expect(report.stoppedBy).toBeUndefined();
        expect(report.recordsFailed).toBe(20);
        expectAccounted(report, 20);
      } finally {
        server.mock.faults.clear();
      }
    });
  }
});
