// Jest's ESM mode (node --experimental-vm-modules): the testing kit, msw included, loads in the test.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { PushClient } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

let emulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

test('publishes records and reads them back from the emulator state', async () => {
  const { mock } = emulator;
  const client = new PushClient({
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: emulator.authUrl,
    baseUrl: emulator.baseUrl,
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
