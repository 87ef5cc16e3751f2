/**
 * A user's test suite with fake timers (`vi.useFakeTimers()` with its defaults, which also fake
 * `setImmediate`): the SDK's event-loop turns between requests must not wait for the test to
 * advance the clock, or every token request, publish and upload would hang.
 */
import * as nodeTest from 'node:test';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

const realSetTimeout = globalThis.setTimeout;
const realNow = performance.now.bind(performance);

/** 'settled' when `work` ends within `ms` of real time, else 'hung'. */
function within(work: Promise<unknown>, ms = 5_000): Promise<string> {
  return Promise.race([
    work.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise<string>((resolve) => realSetTimeout(() => resolve('hung'), ms)),
  ]);
}

describe('with fake timers installed', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a token request, a publish and an upload all finish', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    vi.useFakeTimers();
    expect(vi.isFakeTimers()).toBe(true);
    expect(await within(client.tokens.getToken())).toBe('settled');
    client.tokens.invalidate();
    const publishing = client.finance.publish(mock.appId, financeRecords(2_500), { batchSize: 1000 });
    expect(await within(publishing)).toBe('settled');
    const files = Array.from({ length: 6 }, (_, i) => ({ name: `f-${i}.csv`, data: `id\n${i}\n` }));
    const uploading = client.uploads.upload(mock.appId, files, { concurrency: 2 });
    expect(await within(uploading)).toBe('settled');
    vi.useRealTimers();
    expect((await publishing).recordsSent).toBe(2_500);
    expect((await uploading).filesUploaded).toBe(6);
    expect(mock.state.records(mock.appId)).toHaveLength(2_500);
  });

  it("a fault's delayMs passes in real time: a test that never advances the clock gets its answer", async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, delayMs: 100 });
    vi.useFakeTimers();
    const started = realNow();
    const publishing = client.finance.publish(mock.appId, financeRecords(3));
    expect(await within(publishing)).toBe('settled');
    expect(realNow() - started).toBeGreaterThanOrEqual(90);
    vi.useRealTimers();
    expect((await publishing).recordsSent).toBe(3);
    expect(mock.state.requests.find((request) => request.operation === 'finance')?.durationMs).toBeGreaterThanOrEqual(
      90,
    );
  });

  it("with node:test's mock timers, a token request and a publish finish", async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    nodeTest.mock.timers.enable({ apis: ['setImmediate'] });
    try {
      expect(await within(client.tokens.getToken())).toBe('settled');
      client.tokens.invalidate();
      expect(await within(client.finance.publish(mock.appId, financeRecords(10)))).toBe('settled');
    } finally {
      nodeTest.mock.timers.reset();
    }
    expect(mock.state.records(mock.appId)).toHaveLength(10);
  });

  it('a publish whose array holds an invalid record still throws at once', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    vi.useFakeTimers();
    const records = financeRecords(5);
    records[4] = { ...records[4], currency: 'euro' } as unknown as (typeof records)[number];
    const publishing = client.finance.publish(mock.appId, records);
    expect(await within(publishing)).toBe('settled');
    await expect(publishing).rejects.toThrow(/record 4/);
  });
});
