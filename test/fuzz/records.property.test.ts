/**
 * Random records, valid and invalid, through the schema and the publisher: nothing throws an
 * untyped error, every rejection names its index and field, valid records are never rejected and
 * reach the emulator exactly once.
 */
import fc from 'fast-check';
import { type PushClient, PushError, RecordValidationError } from 'push-api-client';
import { financeRecordSchema } from 'push-api-client/schema';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { brokenRecord, FUZZ_SEED, notARecord, validRecord } from './arbitraries.js';

function noRetryClient(mock: ReturnType<typeof createPushApiHandler>): PushClient {
  return clientFor(mock, { maxRetries: 0 });
}

describe('schema', () => {
  it('accepts every valid record', () => {
    fc.assert(
      fc.property(validRecord, (record) => {
        const result = financeRecordSchema.safeParse(record);
        expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
      }),
      { seed: FUZZ_SEED, numRuns: 500 },
    );
  });

  it('rejects a record broken in one field, naming that field', () => {
    fc.assert(
      fc.property(brokenRecord, ({ field, record }) => {
        const result = financeRecordSchema.safeParse(record);
        expect(result.success).toBe(false);
        const fields = (result.error?.issues ?? []).flatMap((issue) =>
          issue.code === 'unrecognized_keys' ? issue.keys : [issue.path.join('.')],
        );
        expect(fields).toContain(field);
      }),
      { seed: FUZZ_SEED, numRuns: 500 },
    );
  });
});

describe('publisher', () => {
  const mixed = fc.array(
    fc.oneof(
      { weight: 4, arbitrary: validRecord.map((record) => ({ valid: true, field: '', record: record as unknown })) },
      {
        weight: 1,
        arbitrary: brokenRecord.map(({ field, record }) => ({ valid: false, field, record: record as unknown })),
      },
      { weight: 1, arbitrary: notARecord.map((record) => ({ valid: false, field: '', record })) },
    ),
    { maxLength: 40 },
  );

  it('onInvalid skip: sends exactly the valid records, lists exactly the invalid ones by index and field', async () => {
    await fc.assert(
      fc.asyncProperty(mixed, fc.integer({ min: 1, max: 7 }), async (items, batchSize) => {
        const mock = createPushApiHandler();
        const input = items.map((item, i) =>
          item.valid ? { ...(item.record as object), transactionNumber: `fz-${i}` } : item.record,
        );
        const report = await noRetryClient(mock).finance.publish(mock.appId, input as never[], {
          onInvalid: 'skip',
          batchSize,
        });
        const invalidIndexes = items.flatMap((item, i) => (item.valid ? [] : [i]));
        expect(report.invalid.map((entry) => entry.index)).toEqual(invalidIndexes);
        for (const entry of report.invalid) {
          const item = items[entry.index];
          expect(entry.issues.length).toBeGreaterThan(0);
          if (item?.field) expect(entry.issues.map((issue) => issue.path)).toContain(item.field);
        }
        expect(report.recordsSent).toBe(items.length - invalidIndexes.length);
        expect(report.recordsFailed + report.recordsUnknown).toBe(0);
        const stored = mock.state.records(mock.appId).map((r) => r.transactionNumber);
        expect(stored.sort()).toEqual(items.flatMap((item, i) => (item.valid ? [`fz-${i}`] : [])).sort());
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });

  it('onInvalid throw: a typed RecordValidationError naming every bad index, and nothing sent', async () => {
    await fc.assert(
      fc.asyncProperty(mixed, async (items) => {
        const mock = createPushApiHandler();
        const invalidIndexes = items.flatMap((item, i) => (item.valid ? [] : [i]));
        let thrown: unknown;
        try {
          await noRetryClient(mock).finance.publish(mock.appId, items.map((item) => item.record) as never[]);
        } catch (error) {
          thrown = error;
        }
        if (invalidIndexes.length === 0) {
          expect(thrown).toBeUndefined();
          return;
        }
        expect(thrown).toBeInstanceOf(RecordValidationError);
        expect(thrown).toBeInstanceOf(PushError);
        expect((thrown as RecordValidationError).invalid.map((entry) => entry.index)).toEqual(invalidIndexes);
        expect(mock.state.recordCount(mock.appId)).toBe(0);
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });

  it('publishBatch never throws anything but a PushError', async () => {
    const mock = createPushApiHandler();
    const client = noRetryClient(mock);
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            validRecord,
            brokenRecord.map((b) => b.record),
            notARecord,
          ),
        ),
        async (records) => {
          try {
            await client.finance.publishBatch(mock.appId, records as never[]);
          } catch (error) {
            expect(error).toBeInstanceOf(PushError);
          }
        },
      ),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });
});
