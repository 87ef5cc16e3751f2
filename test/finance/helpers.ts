import type { PushApiEmulator, RunningEmulator } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import type { PushClientOptions } from '../../src/client.js';
import type { FinanceRecordInput } from '../../src/finance/schema.js';
import type { PublishReport } from '../../src/finance/types.js';
import { emulatorClient, serverClient } from '../support/clients.js';

/** A valid record whose fields vary with `i`, so that order can be checked on the server side. */
export function makeRecord(i: number, overrides: Partial<Record<string, unknown>> = {}): FinanceRecordInput {
  return {
    created: 1_700_000_000_000 + i,
    amount: i + 0.25,
    currency: 'EUR',
    identifier: `user${i}@example.com`,
    type: i % 2 === 0 ? 'expense' : 'invoice',
    vendor: `Vendor ${i}`,
    transactionNumber: `tx-${i}`,
    ...overrides,
  } as FinanceRecordInput;
}

export function makeRecords(count: number, start = 0): FinanceRecordInput[] {
  return Array.from({ length: count }, (_, i) => makeRecord(start + i));
}

export async function* toAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** A PushClient wired to an emulator through its in-process fetch (no sockets). */
export function clientFor(emulator: PushApiEmulator, options: PushClientOptions = {}) {
  return emulatorClient(emulator, options);
}

/** A PushClient talking real HTTP to a running emulator on 127.0.0.1. */
export function clientForServer(server: RunningEmulator, options: PushClientOptions = {}) {
  return serverClient(server, options);
}

export function mockWithClient(options: Parameters<typeof createPushApiMock>[0] = {}) {
  const mock = createPushApiMock(options);
  return { mock, client: clientFor(mock) };
}

/**
 * The invariant every report keeps: each record is counted exactly once. `expected` is the number
 * of input records for an array (records never read are counted too, in `recordsNotRead`), and
 * the number of records read for any other input.
 */
export function expectAccounted(report: PublishReport, expected: number): void {
  const total =
    report.recordsSent + report.recordsInvalid + report.recordsFailed + report.recordsUnknown + report.recordsNotRead;
  if (total !== expected) {
    throw new Error(
      `accounting broken: read ${report.recordsRead}, not read ${report.recordsNotRead}, counted ${total}, expected ${expected}`,
    );
  }
  const inBatches = report.batches.reduce((sum, batch) => sum + batch.recordCount, 0);
  if (inBatches + report.recordsInvalid + report.recordsNotRead !== expected) {
    throw new Error(`batches hold ${inBatches} records and ${report.invalid.length} are invalid, expected ${expected}`);
  }
}

/** Finance requests the emulator answered, by status. */
export function financeStatuses(emulator: PushApiEmulator): number[] {
  return emulator.state.requests.filter((r) => r.operation === 'finance').map((r) => r.status);
}
