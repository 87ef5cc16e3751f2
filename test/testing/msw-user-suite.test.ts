/**
 * Written the way a user tests their own pipeline: msw intercepts plain fetch calls and the
 * emulator answers them.
 */
import { setupServer } from 'msw/node';
import { PushClient } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

/** The "user code" under test: gets a token and publishes a batch of expenses. */
async function publishExpenses(amounts: number[]): Promise<Response> {
  const tokenResponse = await fetch(`${mock.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: mock.clientId,
      client_secret: mock.clientSecret,
      scope: `${mock.scopeBase}/connector.write`,
    }),
  });
  const { access_token } = (await tokenResponse.json()) as { access_token: string };
  const records = amounts.map((amount, index) => ({
    created: Date.UTC(2024, 0, index + 1),
    amount,
    currency: 'USD',
    identifier: `user${index}@example.com`,
    type: 'expense',
    vendor: 'Acme',
  }));
  return fetch(`${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/finance`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ records }),
  });
}

describe('testing user code with createPushApiMock and msw', () => {
  it('sees the records my code published', async () => {
    const response = await publishExpenses([10, 20.5]);
    expect(response.status).toBe(200);
    expect(mock.state.records(mock.appId).map((record) => record.amount)).toEqual([10, 20.5]);
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it('lets me inject a 429 with Retry-After', async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1 });
    const response = await publishExpenses([1]);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(mock.state.recordCount(mock.appId)).toBe(0);
  });

  it('turns a dropped connection into a network error for fetch', async () => {
    mock.faults.add({ match: { operation: 'finance' }, drop: 'before' });
    await expect(publishExpenses([1])).rejects.toThrow(TypeError);
  });

  it('uploads a file through a signed address without an Authorization header', async () => {
    const tokenBody = await (
      await fetch(`${mock.authUrl}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: mock.clientId,
          client_secret: mock.clientSecret,
          scope: `${mock.scopeBase}/connector.write`,
        }),
      })
    ).json();
    const urls = await (
      await fetch(
        `${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/upload?filenames=users.csv&type=users`,
        {
          headers: { authorization: `Bearer ${tokenBody.access_token}` },
        },
      )
    ).json();
    const put = await fetch(urls['users.csv'], { method: 'PUT', body: 'id\n1\n', headers: { 'content-length': '5' } });
    expect(put.status).toBe(200);
    expect(mock.state.file(mock.appId, 'users.csv')).toMatchObject({
      size: 5,
      authorization: undefined,
      type: 'users',
    });
  });

  it('intercepts addresses written with their default port, as my production settings may be', async () => {
    const mine = createPushApiMock({
      authUrl: 'https://auth.example.test:443/',
      baseUrl: 'https://api.example.test:443',
      uploadUrl: 'https://files.example.test:443',
    });
    server.use(...mine.handlers);
    try {
      // PushClient, like fetch, drops the default port from the addresses it builds.
      const client = new PushClient({ ...mine.clientOptions(), env: {} });
      expect(mine.baseUrl).toBe('https://api.example.test');
      const report = await client.finance.publish(mine.appId, [
        { created: 1_717_200_000_000, amount: 1, currency: 'EUR', identifier: 'a', type: 'expense', vendor: 'v' },
      ]);
      expect(report.recordsSent).toBe(1);
      await client.uploads.upload(mine.appId, [{ name: 'users.csv', data: 'id\n1\n' }]);
      expect(mine.state.file(mine.appId, 'users.csv')?.size).toBe(5);
    } finally {
      server.resetHandlers();
    }
  });
});
