/**
 * A user's msw suite under vitest's fake timers, as docs/testing.md ("Fast retries in tests")
 * tells it: a retry's wait follows the fake clock; through msw the answers arrive without real
 * I/O, so one advance made right after the call is enough, and advancing until the call ends works
 * wherever they come from. The emulator's clock follows the faked `Date`, so tokens expire with it.
 */
import * as realTimers from 'node:timers';
import { setupServer } from 'msw/node';
import { PushClient } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  vi.useRealTimers();
  mock.reset();
});
afterAll(() => server.close());

const expense = {
  created: '2025-03-01',
  amount: 19.99,
  currency: 'EUR',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
} as const;

/** Moves the fake clock on, a second at a time, until `work` settles. */
async function advanceUntilSettled<T>(work: Promise<T>): Promise<T> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) await vi.advanceTimersByTimeAsync(1000);
  return work;
}

it("waits out a 429's Retry-After on the fake clock", async () => {
  mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 30 });
  const report = await advanceUntilSettled(new PushClient(mock.clientOptions()).finance.publish(mock.appId, [expense]));
  expect(report.recordsSent).toBe(1);
  expect(mock.state.requests.map((request) => request.status)).toEqual([200, 429, 200]);
});

it("gets a new client's publish through two 503s with one advance made right after the call", async () => {
  mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 2 });
  let settled = false;
  const publishing = new PushClient(mock.clientOptions()).finance.publish(mock.appId, [expense]);
  publishing.then(
    () => (settled = true),
    () => (settled = true),
  );
  // Far more than two backoff waits; the token request comes first and the 503s after it.
  await vi.advanceTimersByTimeAsync(60_000);
  await new Promise((resolve) => realTimers.setTimeout(resolve, 200));
  expect(settled).toBe(true);
  expect((await publishing).recordsSent).toBe(1);
  expect(mock.state.requests.map((request) => request.status)).toEqual([200, 503, 503, 200]);
});

it('expires a token as the fake clock moves, on both sides', async () => {
  const client = new PushClient(mock.clientOptions());
  await client.tokens.getToken();
  const later = Date.now() + 2 * 60 * 60 * 1000;
  vi.setSystemTime(later);
  // The mock was made before the clock was faked: its clock follows the faked Date all the same.
  expect(Math.abs(mock.now() - later)).toBeLessThan(1000);
  await client.finance.publish(mock.appId, [expense]);
  expect(mock.state.tokenRequestCount).toBe(2);
});
