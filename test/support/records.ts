/** The one record factory of the tests, and the sample a user would write. */
import type { FinanceRecordInput } from 'push-api-client';

/**
 * A valid record whose fields vary with `i` (the server side can check order by
 * `transactionNumber`), with `overrides` on top; `financeRecord()` is record 0.
 */
export function financeRecord(i = 0, overrides: Partial<Record<string, unknown>> = {}): FinanceRecordInput {
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

/** `count` records from `financeRecord(start)` on. */
export function financeRecords(count: number, start = 0): FinanceRecordInput[] {
  return Array.from({ length: count }, (_, i) => financeRecord(start + i));
}

/** Yields `items` one by one, as a stream of records would. */
export async function* toAsync<T>(items: Iterable<T>): AsyncGenerator<T> {
  for (const item of items) yield item;
}

/** One valid finance record, as a user writes it (a date string for `created`). */
export const SAMPLE_RECORD = {
  created: '2025-01-31',
  amount: 42,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
} as const;
