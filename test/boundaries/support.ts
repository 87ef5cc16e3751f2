/** Clients and records for the boundary tests. */
import type { FetchLike, FinanceRecordInput, PushClient } from '../../src/index.js';
import type { PushApiEmulator, RunningEmulator } from '../../src/testing/index.js';
import { emulatorClient, serverClient } from '../support/clients.js';

export function record(i: number, extra: Partial<FinanceRecordInput> = {}): FinanceRecordInput {
  return {
    created: 1_700_000_000_000 + i,
    amount: i + 0.5,
    currency: 'EUR',
    identifier: `user${i}@example.com`,
    type: 'expense',
    vendor: 'Acme',
    transactionNumber: `b-${i}`,
    ...extra,
  };
}

export function records(count: number): FinanceRecordInput[] {
  return Array.from({ length: count }, (_, i) => record(i));
}

/** A client for the in-process emulator; `fetch` may wrap `mock.fetch` to watch the wire. */
export function clientFor(mock: PushApiEmulator, fetch: FetchLike = mock.fetch): PushClient {
  return emulatorClient(mock, { fetch, maxRetries: 0 });
}

/** A client for the emulator over real HTTP on 127.0.0.1. */
export function httpClientFor(emulator: RunningEmulator): PushClient {
  return serverClient(emulator, { maxRetries: 0 });
}

/** Wraps a fetch and keeps the UTF-8 byte length of each finance request body. */
export function financeBodySizes(inner: FetchLike): { fetch: FetchLike; sizes: number[] } {
  const sizes: number[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    if (request.method === 'POST' && request.url.endsWith('/finance')) {
      sizes.push((await request.clone().arrayBuffer()).byteLength);
    }
    return inner(request);
  };
  return { fetch, sizes };
}
