/** fast-check arbitraries for finance records: valid ones, and each valid one broken in one named field. */
import fc from 'fast-check';
import type { FinanceRecordInput } from 'push-api-client';

/** Fixed seed: a failure prints its counterexample and re-runs identically. */
export const FUZZ_SEED = 0x5eed_0005;

const MIN_MS = Date.UTC(1974, 0, 1);
const MAX_MS = Date.UTC(2100, 0, 1);
const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 });

export const validRecord: fc.Arbitrary<FinanceRecordInput> = fc.record(
  {
    created: fc.oneof(
      fc.integer({ min: MIN_MS, max: MAX_MS }),
      fc.integer({ min: MIN_MS, max: MAX_MS }).map((ms) => new Date(ms)),
      fc.integer({ min: MIN_MS, max: MAX_MS }).map((ms) => new Date(ms).toISOString()),
      fc.integer({ min: MIN_MS, max: MAX_MS }).map((ms) => new Date(ms).toISOString().slice(0, 10)),
    ),
    amount: fc.double({ noNaN: true, noDefaultInfinity: true }),
    currency: fc.stringMatching(/^[A-Z]{3}$/),
    identifier: text,
    type: fc.constantFrom('expense' as const, 'invoice' as const),
    vendor: text,
    name: fc.string({ unit: 'grapheme', maxLength: 20 }),
    category: fc.string({ maxLength: 20 }),
    description: fc.string({ unit: 'binary', maxLength: 40 }),
    transactionNumber: fc.string({ maxLength: 12 }),
  },
  { requiredKeys: ['created', 'amount', 'currency', 'identifier', 'type', 'vendor'] },
);

/** A way to break one field: the field the rejection must name, and the record with it broken. */
export interface Broken {
  field: string;
  record: Record<string, unknown>;
}

const badValue: Record<string, fc.Arbitrary<unknown>> = {
  created: fc.oneof(
    fc.constantFrom(
      null,
      true,
      'yesterday',
      '2024-13-45',
      '2024-01-01T10:00:00',
      1_700_000_000,
      Number.NaN,
      1.5e12 + 0.5,
    ),
    fc.constant(new Date(Number.NaN)),
  ),
  amount: fc.constantFrom(null, '12.50', Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, {}, []),
  currency: fc.oneof(fc.constantFrom('eur', 'EURO', '', 'E1R', 12, null), fc.stringMatching(/^[a-z]{3}$/)),
  identifier: fc.constantFrom('', null, 7, ['a']),
  type: fc.oneof(
    fc.constantFrom('refund', 'EXPENSE', '', null, 1),
    fc.string({ maxLength: 6 }).filter((s) => s !== 'expense' && s !== 'invoice'),
  ),
  vendor: fc.constantFrom('', null, false, { name: 'x' }),
  name: fc.constantFrom(null, 1, {}, []),
  transactionNumber: fc.constantFrom(null, 12345, true),
  merchant: fc.string(),
  surprise: fc.anything(),
};

export const brokenRecord: fc.Arbitrary<Broken> = fc
  .tuple(validRecord, fc.constantFrom(...Object.keys(badValue)), fc.boolean())
  .chain(([record, field, remove]) => {
    const required = ['created', 'amount', 'currency', 'identifier', 'type', 'vendor'];
    if (remove && required.includes(field)) {
      const copy: Record<string, unknown> = { ...record };
      delete copy[field];
      return fc.constant({ field, record: copy });
    }
    return (badValue[field] as fc.Arbitrary<unknown>).map((value) => ({
      field,
      record: { ...record, [field]: value },
    }));
  });

/** Something that is not a record at all: the rejection concerns the record as a whole. */
export const notARecord = fc.oneof(
  fc.constantFrom(null, undefined, 42, 'record', true),
  fc.array(fc.integer(), { maxLength: 3 }),
);
