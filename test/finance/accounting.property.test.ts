import fc from 'fast-check';
import type { FinanceRecordInput } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecord, toAsync } from '../support/records.js';

// What is checked is the accounting, not the waits: every wait is 0 (see the retry timing options),
// and a 429 fault answers once, since with zero waits a batch answered only 429 ends after
// `maxRetries` waits.
const faultArb = fc.oneof(
  fc.record({
    status: fc.constantFrom(400, 422, 500, 502, 503, 504),
    times: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ status: fc.constant(429), times: fc.constant(1) }),
);

describe('publish accounting (property)', () => {
  it('counts every record exactly once as sent, invalid, failed or unknown, and never stores one twice', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.nat({ max: 59 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(faultArb, { maxLength: 3 }),
        fc.boolean(),
        async (count, invalidAt, batchSize, concurrency, faults, asAsync) => {
          const mock = createPushApiMock();
          for (const fault of faults) mock.faults.add({ match: { operation: 'finance' }, retryAfter: 0, ...fault });
          const client = clientFor(mock, {
            maxRetries: 1,
            backoff: { initialDelayMs: 0, maxDelayMs: 0 },
            maxRetryAfterMs: 0,
          });
          const bad = new Set(invalidAt);
          const records = Array.from({ length: count }, (_, i) =>
            bad.has(i) ? financeRecord(i, { amount: 'NaN' }) : financeRecord(i),
          ) as FinanceRecordInput[];
          const report = await client.finance.publish(mock.appId, asAsync ? toAsync(records) : records, {
            onInvalid: 'skip',
            batchSize,
            concurrency,
          });
          expectAccounted(report, count);
          expect(report.invalid.map((r) => r.index)).toEqual([...bad].filter((i) => i < count).sort((a, b) => a - b));
          expect(report.batches.map((b) => b.index)).toEqual(report.batches.map((_, i) => i));
          const stored = mock.state.records(mock.appId).map((r) => r.transactionNumber);
          expect(new Set(stored).size).toBe(stored.length);
          // Injected statuses are answered before the service stores anything.
          expect(stored.length).toBe(report.recordsSent);
        },
      ),
      { numRuns: 60 },
    );
  });
});
