/**
 * Regression found by the chaos suite: the 401 refresh was allowed once per logical request, so a
 * request that refreshed, met a 503 and, after its backoff, met a token revoked meanwhile failed
 * with AuthenticationError, which stops a whole publish. It is now once per attempt.
 * And a request refused with an old token re-sent with the token another request had already
 * fetched, and gave up when that one was refused too (revoked meanwhile): it now refreshes then.
 */

import type { PushClient } from 'push-api-client';
import { createPushApiHandler, type EmulatorFetch } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecord } from '../support/records.js';

describe('401 refresh across retries', () => {
  it('refreshes again when the token it refreshed to is revoked during a retry backoff', async () => {
    const mock = createPushApiHandler();
    // After the first 401, the re-send meets a 503; every token is revoked while the client backs off.
    let stage = 0;
    const fetch: EmulatorFetch = async (input, init) => {
      const response = await mock.fetch(input, init);
      if (response.status === 401 && stage === 0) {
        stage = 1;
        mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
      } else if (response.status === 503 && stage === 1) {
        stage = 2;
        mock.revokeAllTokens();
      }
      return response;
    };
    const client = clientFor(mock, { fetch });
    await client.tokens.getToken();
    mock.revokeAllTokens();
    const statuses = () => mock.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status);

    await expect(
      client.finance.publishBatch(mock.appId, [financeRecord(0, { transactionNumber: 'refresh-1' })]),
    ).resolves.toEqual({ success: true });
    expect(statuses()).toEqual([401, 503, 401, 200]);
    expect(mock.state.tokenRequestCount).toBe(3);
    expect(mock.state.records(mock.appId).map((r) => r.transactionNumber)).toEqual(['refresh-1']);
  });

  it('refused with an old token, re-sends with the current one, and refreshes if that is revoked too', async () => {
    const mock = createPushApiHandler();
    let client: PushClient | undefined;
    let raced = false;
    // The first finance request leaves with T1; before it arrives, another caller refreshes (T2)
    // and the server revokes every token: T1 and T2 are both refused.
    const fetch: EmulatorFetch = async (input, init) => {
      const request = new Request(input, init);
      if (!raced && request.url.endsWith('/finance')) {
        raced = true;
        await client?.tokens.getToken({ forceRefresh: true });
        mock.revokeAllTokens();
      }
      return mock.fetch(request);
    };
    client = clientFor(mock, { fetch, maxRetries: 0 });
    await expect(
      client.finance.publishBatch(mock.appId, [financeRecord(0, { transactionNumber: 'refresh-1' })]),
    ).resolves.toEqual({ success: true });
    const finance = mock.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status);
    expect(finance).toEqual([401, 401, 200]);
    expect(mock.state.tokenRequestCount).toBe(3);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a 401 right after a refresh is still final', async () => {
    const mock = createPushApiHandler();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, status: 401, times: 5 });
    await expect(
      client.finance.publishBatch(mock.appId, [financeRecord(0, { transactionNumber: 'refresh-1' })]),
    ).rejects.toMatchObject({
      name: 'AuthenticationError',
    });
    expect(mock.state.requests.filter((r) => r.operation === 'finance')).toHaveLength(2);
    expect(mock.state.tokenRequestCount).toBe(2);
  });
});
