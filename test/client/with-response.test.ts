/** `.withResponse()`: the data with the answer that carried it, from the same single request. */
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

function setup() {
  const emulator = createPushApiHandler();
  const client = clientFor(
    {
      fetch: emulator.fetch,
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    { maxRetries: 0 },
  );
  return { emulator, client };
}

function sent(emulator: ReturnType<typeof createPushApiHandler>, operation: string) {
  return emulator.state.requests.filter((request) => request.operation === operation);
}

describe('withResponse', () => {
  it('publishBatch gives the status, headers and request id of its one POST, sending once', async () => {
    const { emulator, client } = setup();
    const { data, response } = await client.finance.publishBatch('demo-app', [record]).withResponse();
    expect(data).toEqual({ success: true });
    const posts = sent(emulator, 'finance');
    expect(posts).toHaveLength(1);
    expect(response.status).toBe(200);
    expect(response.requestId).toBe(posts[0]?.id);
    expect(response.headers.get('x-request-id')).toBe(posts[0]?.id);
  });

  it('awaiting directly still gives the data alone', async () => {
    const { emulator, client } = setup();
    expect(await client.finance.publishBatch('demo-app', [record])).toEqual({ success: true });
    expect(sent(emulator, 'finance')).toHaveLength(1);
  });

  it('awaiting and withResponse on one promise share one request', async () => {
    const { emulator, client } = setup();
    const promise = client.uploads.getUploadUrls('demo-app', ['users.csv'], { type: 'users' });
    const [data, both] = await Promise.all([promise, promise.withResponse()]);
    expect(both.data).toBe(data);
    expect(Object.keys(data)).toEqual(['users.csv']);
    const gets = sent(emulator, 'upload-urls');
    expect(gets).toHaveLength(1);
    expect(both.response?.status).toBe(200);
    expect(both.response?.requestId).toBe(gets[0]?.id);
  });

  it('getToken gives the token endpoint answer, then null when answered from the cache', async () => {
    const { emulator, client } = setup();
    const first = await client.tokens.getToken().withResponse();
    const tokenRequests = sent(emulator, 'token');
    expect(tokenRequests).toHaveLength(1);
    expect(first.response?.status).toBe(200);
    expect(first.response?.requestId).toBe(tokenRequests[0]?.id);
    const cached = await client.tokens.getToken().withResponse();
    expect(cached.data.accessToken).toBe(first.data.accessToken);
    expect(cached.response).toBeNull();
    expect(sent(emulator, 'token')).toHaveLength(1);
  });

  it('a failed call rejects withResponse with the typed error, and awaiting rejects the same way', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 422, times: 2 });
    const promise = client.finance.publishBatch('demo-app', [record]);
    await expect(promise.withResponse()).rejects.toMatchObject({ status: 422 });
    await expect(promise).rejects.toMatchObject({ status: 422 });
    expect(sent(emulator, 'finance')).toHaveLength(1);
  });

  it('a promise used only through withResponse leaves no unhandled rejection', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 422, times: 1 });
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', listener);
    try {
      await expect(client.finance.publishBatch('demo-app', [record]).withResponse()).rejects.toMatchObject({
        status: 422,
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      process.off('unhandledRejection', listener);
    }
    expect(unhandled).toEqual([]);
  });

  it('then on the promise gives a plain Promise, not another ResponsePromise', async () => {
    const { client } = setup();
    const derived = client.tokens.getToken().then((token) => token.tokenType);
    expect('withResponse' in derived).toBe(false);
    expect(typeof (await derived)).toBe('string');
  });
});
