import fc from 'fast-check';
import { financeRecordSchema } from 'push-api-client/schema';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { expectAccounted } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecord, toAsync } from '../support/records.js';

const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');
/** `{"records":[]}`, the body of an empty batch. */
const EMPTY_BODY = 14;

/** A client on an in-process emulator that keeps every finance request body exactly as it was sent. */
function capturingClient() {
  const mock = createPushApiMock();
  const bodies: string[] = [];
  const client = clientFor(mock, {
    fetch: async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/finance')) {
        bodies.push(await request.clone().text());
      }
      return mock.fetch(request);
    },
  });
  return { mock, client, bodies };
}

/** Input index of a record on the wire (`transactionNumber` is `tx-<index>`). */
const indexOf = (record: { transactionNumber?: string }) => Number(record.transactionNumber?.slice(3));

describe('publish batching (property)', () => {
  it('puts every record in exactly one request, in order, within batchSize and maxBatchBytes as sent on the wire', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: 'binary', maxLength: 80 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 200, max: 2500 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        async (descriptions, batchSize, maxBatchBytes, concurrency, asAsync) => {
          const records = descriptions.map((description, i) => financeRecord(i, { description }));
          const wire = records.map((record) => JSON.stringify(financeRecordSchema.parse(record)));
          const tooLarge = wire.flatMap((json, i) => (EMPTY_BODY + bytesOf(json) > maxBatchBytes ? [i] : []));
          const { mock, client, bodies } = capturingClient();

          const report = await client.finance.publish(mock.appId, asAsync ? toAsync(records) : records, {
            batchSize,
            maxBatchBytes,
            concurrency,
            onInvalid: 'skip',
          });

          // Requests may leave out of order at concurrency > 1; order them by their first record.
          const sent = bodies
            .map((body) => ({
              body,
              records: (JSON.parse(body) as { records: { transactionNumber: string }[] }).records,
            }))
            .sort((a, b) => indexOf(a.records[0] ?? {}) - indexOf(b.records[0] ?? {}));
          const expected = records.map((_, i) => i).filter((i) => !tooLarge.includes(i));
          expect(sent.flatMap((request) => request.records.map(indexOf))).toEqual(expected);
          for (const [i, request] of sent.entries()) {
            expect(request.records.length).toBeGreaterThan(0);
            expect(request.records.length).toBeLessThanOrEqual(batchSize);
            expect(bytesOf(request.body)).toBeLessThanOrEqual(maxBatchBytes);
            // Each batch is as full as the next record allows.
            const next = sent[i + 1]?.records[0];
            if (next !== undefined) {
              const withNext = bytesOf(request.body) + 1 + bytesOf(wire[indexOf(next)] ?? '');
              expect(request.records.length === batchSize || withNext > maxBatchBytes).toBe(true);
            }
          }
          // A record too large to be sent even alone is reported invalid, never dropped.
          expect(report.invalid.map((r) => r.index)).toEqual(tooLarge);
          expect(report.batches.map((b) => b.recordCount)).toEqual(sent.map((request) => request.records.length));
          expectAccounted(report, records.length);
          // The service stored each record once.
          const stored = mock.state.records(mock.appId).map(indexOf);
          expect([...stored].sort((a, b) => a - b)).toEqual(expected);
        },
      ),
      { numRuns: 80 },
    );
  });
});
