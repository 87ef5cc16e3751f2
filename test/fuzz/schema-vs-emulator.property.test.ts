/**
 * What the SDK's schema accepts, the service must accept too: otherwise one such record fails its
 * whole batch of up to 1000 at the service. Checked against the emulator's own validation.
 *
 * Regression: a `created` given as a Date or ISO string before 1970 passed the schema as negative
 * milliseconds, which the service refuses (the numeric form was already refused).
 */
import fc from 'fast-check';
import { financeRecordSchema } from 'push-api-client/schema';
import { describe, expect, it } from 'vitest';
import { validateFinanceBody } from '../../src/testing/finance-validation.js';
import { FUZZ_SEED, validRecord } from './arbitraries.js';

const anyMs = fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }); // years 1 to 9999
const created = fc.oneof(
  anyMs,
  anyMs.map((ms) => new Date(ms)),
  anyMs.map((ms) => new Date(ms).toISOString()),
  anyMs.map((ms) => new Date(ms).toISOString().slice(0, 10)),
  fc
    .tuple(fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
    .map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`),
);

describe('schema-valid implies service-valid', () => {
  it('every record the schema accepts passes the emulator validation, created included', () => {
    fc.assert(
      fc.property(validRecord, created, (record, when) => {
        const parsed = financeRecordSchema.safeParse({ ...record, created: when });
        if (!parsed.success) return;
        const wire = JSON.parse(JSON.stringify({ records: [parsed.data] })) as unknown;
        const verdict = validateFinanceBody(wire);
        expect(verdict.ok, JSON.stringify({ when, verdict })).toBe(true);
      }),
      { seed: FUZZ_SEED, numRuns: 2000 },
    );
  });

  it('refuses a Date or ISO string before 1970 with a message about created (regression)', () => {
    for (const when of [new Date(-1), '1969-12-31', '1969-12-31T23:59:59Z', '0001-01-01']) {
      const parsed = financeRecordSchema.safeParse({
        created: when,
        amount: 1,
        currency: 'EUR',
        identifier: 'a',
        type: 'expense',
        vendor: 'v',
      });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['created']);
    }
  });
});
