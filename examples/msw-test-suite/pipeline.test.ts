/**
 * How a customer tests `syncInvoices` without the real service: msw intercepts the SDK's fetch
 * calls and `createPushApiMock` answers them like the Push API, keeping what it received.
 *
 *   npx vitest run -c examples/msw-test-suite/vitest.config.ts
 */
import { setupServer } from 'msw/node';
import { PushClient } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Invoice, syncInvoices } from './pipeline.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

function newClient(): PushClient {
  return new PushClient({
    clientId: mock.clientId,
    clientSecret: mock.clientSecret,
    authUrl: mock.authUrl,
    baseUrl: mock.baseUrl,
    scopeBase: mock.scopeBase,
    // Re-send without waiting: the 429 below asks for a second, which a test need not spend.
    backoff: { initialDelayMs: 0, maxDelayMs: 0 },
    maxRetryAfterMs: 0,
  });
}

function invoices(count: number): Invoice[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `INV-${1000 + i}`,
    issuedAt: `2025-03-${String((i % 28) + 1).padStart(2, '0')}`,
    totalCents: 1999 + i,
    currency: 'EUR',
    customerEmail: `customer${i}@example.com`,
    supplier: 'Acme GmbH',
  }));
}

describe('syncInvoices, tested against createPushApiMock', () => {
  it('sends each invoice as one finance record', async () => {
    const result = await syncInvoices(newClient(), mock.appId, invoices(3));

    expect(result).toEqual({ sent: 3, rejected: [], unsent: [] });
    expect(mock.state.records(mock.appId)).toEqual([
      expect.objectContaining({ transactionNumber: 'INV-1000', amount: 19.99, currency: 'EUR', type: 'invoice' }),
      expect.objectContaining({ transactionNumber: 'INV-1001', amount: 20, created: Date.UTC(2025, 2, 2) }),
      expect.objectContaining({ transactionNumber: 'INV-1002', identifier: 'customer2@example.com' }),
    ]);
  });

  it('reports an invalid invoice by id and sends the others', async () => {
    const batch = invoices(3);
    batch[1] = { ...(batch[1] as Invoice), currency: 'euro' };

    const result = await syncInvoices(newClient(), mock.appId, batch);

    expect(result).toEqual({ sent: 2, rejected: ['INV-1001'], unsent: [] });
    expect(mock.state.records(mock.appId).map((record) => record.transactionNumber)).toEqual(['INV-1000', 'INV-1002']);
  });

  it('waits out a 429 and still delivers every invoice exactly once', async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 1 });

    const result = await syncInvoices(newClient(), mock.appId, invoices(5));

    expect(result.sent).toBe(5);
    const finance = mock.state.requests.filter((request) => request.operation === 'finance');
    expect(finance.map((request) => request.status)).toEqual([429, 200]);
    expect(mock.state.recordCount(mock.appId)).toBe(5);
  });

  it('fetches a new token when the cached one has expired on the server', async () => {
    const client = newClient();
    await syncInvoices(client, mock.appId, invoices(1));
    // Two hours later on the service's clock: the token the client cached is no longer accepted.
    mock.advanceTime(2 * 60 * 60 * 1000);

    const result = await syncInvoices(client, mock.appId, invoices(2));

    expect(result).toEqual({ sent: 2, rejected: [], unsent: [] });
    expect(mock.state.tokenRequestCount).toBe(2);
    const finance = mock.state.requests.filter((request) => request.operation === 'finance');
    expect(finance.map((request) => request.status)).toEqual([200, 401, 200]);
    expect(mock.state.recordCount(mock.appId)).toBe(3);
  });

  it('reports invoices as unsent when the service keeps failing', async () => {
    mock.faults.add({ match: { operation: 'finance' }, status: 400, times: Infinity });

    const result = await syncInvoices(newClient(), mock.appId, invoices(2));

    expect(result).toEqual({ sent: 0, rejected: [], unsent: ['INV-1000', 'INV-1001'] });
    expect(mock.state.recordCount(mock.appId)).toBe(0);
  });
});
