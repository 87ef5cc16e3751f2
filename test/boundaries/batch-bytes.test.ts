/** `maxBatchBytes` is a ceiling on the whole request body, `{"records":[...]}` included, to the byte. */

import { RecordValidationError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeBodySizes } from '../support/recorders.js';
import { financeRecord, financeRecords } from '../support/records.js';

/** The body size of these records in one request, measured on the wire. */
async function bodySizeOf(input: ReturnType<typeof financeRecords>): Promise<number> {
  const mock = createPushApiHandler();
  const watch = financeBodySizes(mock.fetch);
  await clientFor(mock, { fetch: watch.fetch, maxRetries: 0 }).finance.publish(mock.appId, input);
  expect(watch.sizes).toHaveLength(1);
  return watch.sizes[0] ?? 0;
}

async function publishWithLimit(input: ReturnType<typeof financeRecords>, maxBatchBytes: number) {
  const mock = createPushApiHandler();
  const watch = financeBodySizes(mock.fetch);
  const report = await clientFor(mock, { fetch: watch.fetch, maxRetries: 0 }).finance.publish(mock.appId, input, {
    maxBatchBytes,
  });
  return { report, sizes: watch.sizes, stored: mock.state.recordCount(mock.appId) };
}

describe('maxBatchBytes exactly', () => {
  it('a body of exactly maxBatchBytes is sent whole; one byte less splits it', async () => {
    const input = financeRecords(3).map((r, i) => ({ ...r, description: 'é'.repeat(10 + i) })); // multi-byte UTF-8
    const exact = await bodySizeOf(input);

    const atLimit = await publishWithLimit(input, exact);
    expect(atLimit.sizes).toEqual([exact]);
    expect(atLimit.stored).toBe(3);

    const below = await publishWithLimit(input, exact - 1);
    expect(below.sizes.length).toBe(2);
    for (const size of below.sizes) expect(size).toBeLessThanOrEqual(exact - 1);
    expect(below.report.recordsSent).toBe(3);
    expect(below.stored).toBe(3);
  });

  it('a record whose body alone is one byte over is invalid, named by index, and nothing is sent', async () => {
    const big = financeRecord(0, { description: 'x'.repeat(500) });
    const alone = await bodySizeOf([big]);
    const mock = createPushApiHandler();
    const publishing = clientFor(mock, { maxRetries: 0 }).finance.publish(mock.appId, [financeRecord(1), big], {
      maxBatchBytes: alone - 1,
    });
    await expect(publishing).rejects.toBeInstanceOf(RecordValidationError);
    const error = await publishing.catch((e: unknown) => e as RecordValidationError);
    expect(error.invalid.map((entry) => entry.index)).toEqual([1]);
    expect(error.invalid[0]?.issues[0]?.message).toMatch(/maxBatchBytes/);
    expect(mock.state.recordCount(mock.appId)).toBe(0);
  });

  it('with onInvalid skip, the oversized record is reported invalid and the rest is sent', async () => {
    const big = financeRecord(0, { description: 'x'.repeat(500) });
    const alone = await bodySizeOf([big]);
    const mock = createPushApiHandler();
    const report = await clientFor(mock, { maxRetries: 0 }).finance.publish(
      mock.appId,
      [financeRecord(1), big, financeRecord(2)],
      {
        maxBatchBytes: alone - 1,
        onInvalid: 'skip',
      },
    );
    const stored = mock.state.recordCount(mock.appId);
    expect(report.invalid.map((entry) => entry.index)).toEqual([1]);
    expect(report.recordsSent).toBe(2);
    expect(stored).toBe(2);
  });
});
