// Jest's ESM mode (node --experimental-vm-modules): msw loads, so the msw adapter of the testing
// kit intercepts the SDK's requests in the test process, with no port.
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { setupServer } from 'msw/node';
import { PushClient } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

test('retries a rate-limited batch and stores it once', async () => {
  const client = new PushClient({
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: mock.authUrl,
    baseUrl: mock.baseUrl,
    scopeBase: mock.scopeBase,
  });
  mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0 });
  const record = {
    created: '2025-01-31',
    amount: 1,
    currency: 'USD',
    identifier: 'a@example.com',
    type: 'expense',
    vendor: 'Acme',
  };
  const report = await client.finance.publish(mock.appId, [record]);
  expect(report.recordsSent).toBe(1);
  expect(mock.state.records(mock.appId)).toHaveLength(1);
  expect(mock.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status)).toEqual([429, 200]);
});
