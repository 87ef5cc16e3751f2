/** The spec's limit of 1000 records per finance request, on both sides of the wire. */

import { ConfigurationError } from 'push-api-client';
import { createPushApiHandler, MAX_RECORDS_PER_REQUEST } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

const financeRequests = (mock: ReturnType<typeof createPushApiHandler>) =>
  mock.state.requests.filter((r) => r.operation === 'finance');

describe('1000 vs 1001 records', () => {
  it('publishBatch sends 1000 records in one request', async () => {
    const mock = createPushApiHandler();
    await expect(
      clientFor(mock, { maxRetries: 0 }).finance.publishBatch(mock.appId, financeRecords(1000)),
    ).resolves.toEqual({ success: true });
    expect(financeRequests(mock)).toHaveLength(1);
    expect(mock.state.recordCount(mock.appId)).toBe(1000);
  });

  it('publishBatch refuses 1001 records before sending anything', async () => {
    const mock = createPushApiHandler();
    const sending = clientFor(mock, { maxRetries: 0 }).finance.publishBatch(mock.appId, financeRecords(1001));
    await expect(sending).rejects.toBeInstanceOf(ConfigurationError);
    await expect(sending).rejects.toThrow(/1001 records/);
    expect(mock.state.requests).toHaveLength(0);
  });

  it('publish splits 1001 records into 1000 + 1', async () => {
    const mock = createPushApiHandler();
    const report = await clientFor(mock, { maxRetries: 0 }).finance.publish(mock.appId, financeRecords(1001));
    expect(report.batches.map((b) => b.recordCount)).toEqual([1000, 1]);
    expect(report.recordsSent).toBe(1001);
    expect(
      mock.state
        .deliveries(mock.appId)
        .map((d) => d.count)
        .sort((a, b) => a - b),
    ).toEqual([1, 1000]);
  });

  it('the emulator accepts 1000 records and refuses 1001 with 422 in the spec error shape', async () => {
    const mock = createPushApiHandler();
    expect(MAX_RECORDS_PER_REQUEST).toBe(1000);
    const token = (await clientFor(mock, { maxRetries: 0 }).tokens.getToken()).accessToken;
    const wire = financeRecords(1001).map((r) => ({ ...r, created: Number(r.created) }));
    const post = (body: unknown) =>
      mock.fetch(`${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/finance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const ok = await post({ records: wire.slice(0, 1000) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ success: true });
    const over = await post({ records: wire });
    expect(over.status).toBe(422);
    expect(await over.json()).toMatchObject({ code: '422', success: false, message: expect.stringMatching(/1000/) });
    expect(mock.state.recordCount(mock.appId)).toBe(1000);
  });
});
