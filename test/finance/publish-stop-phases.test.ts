/** stopSignal fired at each phase of a publish run: every record counted once, the service's state agreeing, no hang. */
import type { PublishReport } from 'push-api-client';
import { AbortError, PublishStoppedError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecords, toAsync } from '../support/records.js';

let server: RunningEmulator;
beforeAll(async () => {
  server = await startEmulator();
});
afterAll(() => server.close());
afterEach(() => server.mock.reset());

const financeRequests = () => server.mock.state.requests.filter((request) => request.operation === 'finance').length;
const stored = () => server.mock.state.records(server.mock.appId).length;

async function outcome(promise: Promise<PublishReport>): Promise<{ report: PublishReport; error: unknown }> {
  return promise.then(
    (report) => ({ report, error: undefined }),
    (error: unknown) => {
      if (!(error instanceof PublishStoppedError)) throw error;
      return { report: error.report, error };
    },
  );
}

describe('stopSignal at each phase of a publish', () => {
  it('fired before the call: nothing is sent, the run rejects with its AbortError', async () => {
    const stop = new AbortController();
    stop.abort();
    const started = performance.now();
    const { report, error } = await outcome(
      clientFor(server).finance.publish(server.mock.appId, financeRecords(30), {
        batchSize: 10,
        stopSignal: stop.signal,
      }),
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect(financeRequests()).toBe(0);
    expect(report.recordsSent + report.recordsFailed + report.recordsUnknown).toBe(0);
    expectAccounted(report, 30);
  });

  it('fired while the token request is on the wire: no batch is sent, the run ends promptly', async () => {
    server.mock.faults.add({ match: { operation: 'token' }, delayMs: 3_000, times: 1 });
    const stop = new AbortController();
    const started = performance.now();
    const running = outcome(
      clientFor(server).finance.publish(server.mock.appId, toAsync(financeRecords(30)), {
        batchSize: 10,
        stopSignal: stop.signal,
      }),
    );
    setTimeout(() => stop.abort(), 200);
    const { report, error } = await running;
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect(financeRequests()).toBe(0);
    expect(stored()).toBe(0);
    expect(report.recordsSent + report.recordsUnknown).toBe(0);
    expectAccounted(report, report.recordsRead);
  });

  it('fired mid-request: the request on the wire finishes and is counted as the service stored it', async () => {
    server.mock.faults.add({ match: { operation: 'finance' }, delayMs: 500, times: 1 });
    const stop = new AbortController();
    const running = outcome(
      clientFor(server).finance.publish(server.mock.appId, toAsync(financeRecords(50)), {
        batchSize: 10,
        concurrency: 1,
        stopSignal: stop.signal,
      }),
    );
    setTimeout(() => stop.abort(), 200);
    const { report, error } = await running;
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect(report.recordsSent).toBe(stored());
    expect(report.recordsSent).toBeGreaterThan(0);
    expectAccounted(report, report.recordsRead);
  });

  it('fired with signal: the signal is the cause, every record counted once', async () => {
    server.mock.faults.add({ match: { operation: 'finance' }, delayMs: 1_000, times: 1 });
    const stop = new AbortController();
    const abort = new AbortController();
    const running = outcome(
      clientFor(server).finance.publish(server.mock.appId, financeRecords(50), {
        batchSize: 10,
        concurrency: 1,
        stopSignal: stop.signal,
        signal: abort.signal,
      }),
    );
    setTimeout(() => {
      stop.abort();
      abort.abort();
    }, 300);
    const { report, error } = await running;
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect(report.recordsSent).toBe(stored());
    expectAccounted(report, 50);
  });

  it('fired with an onBatchSettled that throws: what it threw is the cause', async () => {
    const stop = new AbortController();
    const thrown = new Error('settled hook');
    const { report, error } = await outcome(
      clientFor(server).finance.publish(server.mock.appId, financeRecords(50), {
        batchSize: 10,
        concurrency: 1,
        stopSignal: stop.signal,
        onBatchSettled: () => {
          stop.abort();
          throw thrown;
        },
      }),
    );
    expect((error as PublishStoppedError).cause).toBe(thrown);
    expect(report.recordsSent).toBe(stored());
    expectAccounted(report, 50);
  });

  it('fired after every batch was read and sent (an array exactly filling its batches): the run resolves', async () => {
    const stop = new AbortController();
    const { report, error } = await outcome(
      clientFor(server).finance.publish(server.mock.appId, financeRecords(20), {
        batchSize: 10,
        concurrency: 1,
        stopSignal: stop.signal,
        onBatchSettled: (batch) => {
          if (batch.index === 1) stop.abort();
        },
      }),
    );
    expect(error).toBeUndefined();
    expect(report.recordsSent).toBe(20);
    expectAccounted(report, 20);
  });
});
