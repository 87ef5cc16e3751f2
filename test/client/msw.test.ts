import { setupServer } from 'msw/node';
import { PushClient, RateLimitError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { financeRecord } from '../support/records.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

const env = {
  PUSH_CLIENT_ID: mock.clientId,
  PUSH_CLIENT_SECRET: mock.clientSecret,
  PUSH_AUTH_URL: mock.authUrl,
  PUSH_BASE_URL: mock.baseUrl,
  PUSH_SCOPE_BASE: mock.scopeBase,
};

describe('PushClient with setupServer(...mock.handlers) and no special wiring', () => {
  it('gets a token, upload addresses, and publishes a batch', async () => {
    const client = new PushClient({ env });
    const token = await client.tokens.getToken();
    expect(token).toMatchObject({ tokenType: 'Bearer', scopes: [`${mock.scopeBase}/connector.write`] });
    expect(token.expiresAt).toBeInstanceOf(Date);
    const urls = await client.uploads.getUploadUrls(mock.appId, ['users.csv']);
    expect(Object.keys(urls)).toEqual(['users.csv']);
    await expect(client.finance.publishBatch(mock.appId, [financeRecord(1), financeRecord(2)])).resolves.toEqual({
      success: true,
    });
    expect(mock.state.recordCount(mock.appId)).toBe(2);
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it('mock.clientOptions() is all a PushClient needs', async () => {
    expect(mock.clientOptions()).toEqual({
      clientId: mock.clientId,
      clientSecret: mock.clientSecret,
      authUrl: mock.authUrl,
      baseUrl: mock.baseUrl,
      scopeBase: mock.scopeBase,
    });
    const client = new PushClient({ ...mock.clientOptions(), env: {} });
    await client.finance.publishBatch(mock.appId, [financeRecord(1)]);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a 401 on a data call refreshes the token and re-sends once', async () => {
    const client = new PushClient({ env });
    mock.revokeToken((await client.tokens.getToken()).accessToken);
    await client.finance.publishBatch(mock.appId, [financeRecord(1)]);
    const finance = mock.state.requests.filter((r) => r.operation === 'finance');
    expect(finance.map((r) => r.status)).toEqual([401, 200]);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a persistent 429 ends as a RateLimitError after maxRetries', async () => {
    const client = new PushClient({ env, maxRetries: 1 });
    mock.faults.add({ match: { operation: 'upload-urls' }, status: 429, retryAfter: 0, times: 5 });
    await expect(client.uploads.getUploadUrls(mock.appId, ['a.csv'])).rejects.toBeInstanceOf(RateLimitError);
    expect(mock.state.requests.filter((r) => r.operation === 'upload-urls')).toHaveLength(2);
  });

  it('the fetch option overrides globalThis.fetch', async () => {
    let calls = 0;
    const client = new PushClient({
      env,
      fetch: (input, init) => {
        calls++;
        return mock.fetch(input, init);
      },
    });
    await client.tokens.getToken();
    expect(calls).toBe(1);
  });
});
