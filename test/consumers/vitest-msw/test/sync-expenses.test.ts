import { setupServer } from 'msw/node';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Expense, syncExpenses } from '../src/sync-expenses.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
const options = {
  clientId: mock.clientId,
  clientSecret: mock.clientSecret,
  authUrl: mock.authUrl,
  baseUrl: mock.baseUrl,
  scopeBase: mock.scopeBase,
};
const expenses: Expense[] = Array.from({ length: 1200 }, (_, i) => ({
  id: `E-${i}`,
  day: '2025-02-03',
  euros: 5 + i,
  employee: `emp${i % 4}@example.com`,
  vendor: 'Initech',
}));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

describe('syncExpenses with createPushApiMock', () => {
  it('gets one token, uploads the users file and publishes every expense', async () => {
    expect(await syncExpenses(options, mock.appId, expenses)).toEqual({ uploaded: 1, sent: 1200 });
    expect(mock.state.tokenRequestCount).toBe(1);
    expect(mock.state.file(mock.appId, 'users.csv')?.type).toBe('users');
    expect(mock.state.records(mock.appId).map((record) => record.transactionNumber)).toEqual(
      expenses.map((expense) => expense.id),
    );
  });

  it('retries a batch the service rate-limited', async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0 });
    expect((await syncExpenses(options, mock.appId, expenses)).sent).toBe(1200);
    expect(mock.state.recordCount(mock.appId)).toBe(1200);
  });
});
