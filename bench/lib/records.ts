/** Valid finance records, generated deterministically, as a user's pipeline would produce them. */
import type { FinanceRecordInput } from '../../src/finance/schema.js';

const VENDORS = ['Acme Travel', 'Globex Cloud', 'Initech Office', 'Umbrella Catering', 'Hooli Software'];
const CURRENCIES = ['USD', 'EUR', 'GBP'];
const START_MS = Date.UTC(2024, 0, 1);

/** Record `i`: the same fields a CSV row of `bench/lib/csv-file.ts` holds. */
export function financeRecord(i: number): FinanceRecordInput {
  return {
    created: START_MS + i * 60_000,
    amount: Math.round(((i * 7919) % 100_000) + 1) / 100,
    currency: CURRENCIES[i % CURRENCIES.length] as string,
    identifier: `employee-${i % 5000}`,
    type: i % 4 === 0 ? 'invoice' : 'expense',
    vendor: VENDORS[i % VENDORS.length] as string,
    description: `Bench record ${i}`,
  };
}

export function financeRecords(count: number): FinanceRecordInput[] {
  return Array.from({ length: count }, (_, i) => financeRecord(i));
}

/** Which records carry the optional fields (name, category, description, transactionNumber). */
export type OptionalFields = 'quarter' | 'all';

/**
 * Record `i` of an export whose optional fields vary, as real ones do: with `quarter`, one record
 * in four carries them; with `all`, every one does. The others have the six required fields only.
 */
export function variedRecord(i: number, optional: OptionalFields): FinanceRecordInput {
  const record: FinanceRecordInput = {
    created: START_MS + i * 60_000,
    amount: Math.round(((i * 7919) % 100_000) + 1) / 100,
    currency: CURRENCIES[i % CURRENCIES.length] as string,
    identifier: `employee-${i % 5000}`,
    type: i % 3 === 0 ? 'invoice' : 'expense',
    vendor: VENDORS[i % VENDORS.length] as string,
  };
  if (optional === 'all' || i % 4 === 0) {
    record.name = `Trip ${i % 977}`;
    record.category = i % 2 === 0 ? 'travel:air' : 'software:saas';
    record.description = `Bench record ${i}`;
    record.transactionNumber = `TX-${100_000 + i}`;
  }
  return record;
}
