import type { FinanceRecordInput, PublishReport, SettledBatch } from 'push-api-client';
import { ConfigurationError, NotFoundError, PublishStoppedError, RecordValidationError } from 'push-api-client';
import { financeRecordSchema } from 'push-api-client/schema';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { expectAccounted, financeStatuses } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecord, financeRecords, toAsync } from '../support/records.js';

describe('FinancePublisher.publish', () => {
  it('sends 2,500 records as 1000 + 1000 + 500 and the service stores them in input order', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records = financeRecords(2500);
    const report = await client.finance.publish(mock.appId, records);
    expect(report.batches.map((b) => [b.firstRecord, b.lastRecord, b.recordCount, b.status])).toEqual([
      [0, 999, 1000, 'sent'],
      [1000, 1999, 1000, 'sent'],
      [2000, 2499, 500, 'sent'],
    ]);
    expect(mock.state.records(mock.appId).map((r) => r.transactionNumber)).toEqual(
      records.map((r) => r.transactionNumber),
    );
    expectAccounted(report, 2500);
  });

  it('sends what each record held when it was read, even from an iterable that yields one object changed each time', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    function* reused() {
      const row = financeRecord(0) as Record<string, unknown>;
      for (let i = 0; i < 1500; i++) {
        row.transactionNumber = `tx-${i}`;
        yield row as FinanceRecordInput;
      }
    }
    for (const onInvalid of ['throw', 'skip'] as const) {
      mock.reset();
      await client.finance.publish(mock.appId, reused(), { onInvalid });
      expect(mock.state.records(mock.appId).map((r) => r.transactionNumber)).toEqual(
        Array.from({ length: 1500 }, (_, i) => `tx-${i}`),
      );
    }
  });

  it('sends an array of records in wire form as they are and converts the rest, with the same JSON as zod', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records: FinanceRecordInput[] = [
      financeRecord(0),
      financeRecord(1, { created: new Date(1_700_000_000_001) }),
      financeRecord(2, { created: '2024-01-31T09:30:00Z', name: undefined }),
      Object.assign(Object.create(null), financeRecord(3)),
    ];
    await client.finance.publish(mock.appId, records);
    expect(mock.state.records(mock.appId)).toEqual(records.map((record) => financeRecordSchema.parse(record)));
  });

  it('sends 1000 records in one request and 1001 in two', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    expect((await client.finance.publish(mock.appId, financeRecords(1000))).batches).toHaveLength(1);
    const report = await client.finance.publish(mock.appId, financeRecords(1001));
    expect(report.batches.map((b) => b.recordCount)).toEqual([1000, 1]);
    expect(financeStatuses(mock)).toEqual([200, 200, 200]);
  });

  it('refuses a batchSize above the spec limit of 1000 before any request', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    await expect(client.finance.publish(mock.appId, financeRecords(1), { batchSize: 1001 })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    expect(financeStatuses(mock)).toEqual([]);
  });

  it('fills a request body to exactly maxBatchBytes and not a byte more', async () => {
    const records = financeRecords(3);
    const bodyBytes = Buffer.byteLength(JSON.stringify({ records }), 'utf8');
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const exact = await client.finance.publish(mock.appId, records, { maxBatchBytes: bodyBytes });
    expect(exact.batches.map((b) => b.recordCount)).toEqual([3]);
    const under = await client.finance.publish(mock.appId, records, { maxBatchBytes: bodyBytes - 1 });
    expect(under.batches.map((b) => b.recordCount)).toEqual([2, 1]);
  });

  it('reports a record too large for maxBatchBytes as invalid instead of dropping it', async () => {
    const records = [financeRecord(0), financeRecord(1, { description: 'x'.repeat(500) }), financeRecord(2)];
    const mock = createPushApiMock();
    const client = clientFor(mock);
    await expect(client.finance.publish(mock.appId, records, { maxBatchBytes: 400 })).rejects.toMatchObject({
      invalid: [{ index: 1, issues: [{ path: '', message: expect.stringContaining('maxBatchBytes (400)') }] }],
    });
    const report = await client.finance.publish(mock.appId, records, { maxBatchBytes: 400, onInvalid: 'skip' });
    expect(report.invalid.map((r) => r.index)).toEqual([1]);
    expect(report.recordsSent).toBe(2);
    expectAccounted(report, 3);
  });

  it('reports a created before 1970 as invalid instead of failing its whole batch with 422', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records = [
      financeRecord(0),
      financeRecord(1, { created: '1969-12-31' }),
      financeRecord(2, { created: new Date(-1) }),
      financeRecord(3),
    ];
    const report = await client.finance.publish(mock.appId, records, { onInvalid: 'skip' });
    expect(report.invalid.map((r) => [r.index, r.issues[0]?.path])).toEqual([
      [1, 'created'],
      [2, 'created'],
    ]);
    expect(report.recordsSent).toBe(2);
    expect(financeStatuses(mock)).toEqual([200]);
    expectAccounted(report, 4);
  });

  it('validates a whole array before the first request and lists every bad record', async () => {
    const records = financeRecords(10);
    records[3] = financeRecord(3, { amount: Number.POSITIVE_INFINITY });
    records[7] = financeRecord(7, { merchant: 'ACME' });
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const error = await client.finance.publish(mock.appId, records).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordValidationError);
    const invalid = (error as RecordValidationError).invalid;
    expect(invalid.map((r) => r.index)).toEqual([3, 7]);
    expect((error as Error).message).toContain('amount: expected a finite number');
    expect(financeStatuses(mock)).toEqual([]);
  });

  it('stops an async iterable at its first invalid record; the error carries the report of what was sent', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    let closed = false;
    async function* input() {
      try {
        for (let i = 0; i < 5000; i++) yield i === 2500 ? financeRecord(i, { currency: 'euro' }) : financeRecord(i);
      } finally {
        closed = true;
      }
    }
    const error = await client.finance.publish(mock.appId, input(), { concurrency: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordValidationError);
    const { invalid, report } = error as RecordValidationError<PublishReport>;
    expect(invalid).toEqual([{ index: 2500, issues: [expect.objectContaining({ path: 'currency' })] }]);
    expect(report?.recordsSent).toBe(2000);
    // Records 2000 to 2499 were read into a batch that was never sent.
    expect(report?.batches.map((b) => b.status)).toEqual(['sent', 'sent']);
    expect(report?.recordsNotRead).toBe(500);
    expectAccounted(report as PublishReport, 2501);
    expect(mock.state.recordCount(mock.appId)).toBe(2000);
    expect(closed).toBe(true);
  });

  it('in skip mode sends the valid records and counts every record exactly once', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records = financeRecords(25).map((r, i) => (i % 5 === 0 ? { ...r, type: 'refund' } : r));
    const report = await client.finance.publish(mock.appId, toAsync(records as never), {
      onInvalid: 'skip',
      batchSize: 10,
    });
    expect(report.invalid.map((r) => r.index)).toEqual([0, 5, 10, 15, 20]);
    expect(report.recordsSent).toBe(20);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
    expectAccounted(report, 25);
  });

  it('keeps input order in the report when batches finish out of order', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, times: 1, delayMs: 150 });
    const settled: number[] = [];
    const report = await client.finance.publish(mock.appId, financeRecords(40), {
      batchSize: 10,
      concurrency: 4,
      onBatchSettled: (batch: SettledBatch) => {
        settled.push(batch.index);
        expect(batch.indexes).toEqual(Array.from({ length: 10 }, (_, i) => batch.index * 10 + i));
        expect(batch.records[0]?.transactionNumber).toBe(`tx-${batch.index * 10}`);
      },
    });
    expect(settled[settled.length - 1]).toBe(0);
    expect(report.batches.map((b) => b.index)).toEqual([0, 1, 2, 3]);
  });

  it('gives onBatchSettled the records exactly as the service received them, failed batches included', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, times: 1, status: 400 });
    const records: FinanceRecordInput[] = financeRecords(20).map((record, i) =>
      i === 3 ? { ...record, name: undefined, created: new Date(record.created) } : record,
    );
    const settled: SettledBatch[] = [];
    await client.finance.publish(mock.appId, toAsync(records), {
      batchSize: 10,
      concurrency: 1,
      onBatchSettled: (batch) => {
        settled.push(batch);
      },
    });
    expect(settled.map((batch) => batch.status)).toEqual(['failed', 'sent']);
    const wire = (record: FinanceRecordInput) => JSON.parse(JSON.stringify(financeRecordSchema.parse(record)));
    expect(settled[0]?.records).toEqual(records.slice(0, 10).map(wire));
    // An undefined optional field is absent, as on the wire; a Date is sent as milliseconds.
    expect(Object.keys(settled[0]?.records[3] ?? {})).not.toContain('name');
    expect(settled[0]?.records[3]?.created).toBe(new Date(records[3]?.created as number).getTime());
    expect(settled[1]?.records).toEqual(mock.state.records(mock.appId));
    expect(JSON.parse(JSON.stringify(settled[1])).records).toHaveLength(10);
  });

  it('lets onBatchSettled replace the records it was given', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const seen: string[] = [];
    await client.finance.publish(mock.appId, financeRecords(10), {
      onBatchSettled: (batch) => {
        batch.records = batch.records.map((record) => ({ ...record, identifier: 'redacted' }));
        seen.push(...batch.records.map((record) => record.identifier));
      },
    });
    expect(seen).toEqual(Array.from({ length: 10 }, () => 'redacted'));
  });

  it('reports progress after every batch', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const sent: number[] = [];
    await client.finance.publish(mock.appId, financeRecords(30), {
      batchSize: 10,
      concurrency: 1,
      onProgress: (progress) => sent.push(progress.recordsSent),
    });
    expect(sent).toEqual([10, 20, 30]);
  });

  it('stops at an unknown app instead of sending every batch into a 404: rejects with PublishStoppedError, its cause the 404', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const error = await client.finance
      .publish('no-such-app', financeRecords(50), { batchSize: 10, concurrency: 1 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { report, cause } = error as PublishStoppedError;
    expect(cause).toBeInstanceOf(NotFoundError);
    expect(report.stoppedBy).toBe(cause);
    expect(financeStatuses(mock)).toEqual([404]);
    expect(mock.state.recordCount()).toBe(0);
    // The whole array is accounted for: the one batch sent failed, the rest was never sent.
    expect(report.recordsFailed).toBe(10);
    expect(report.recordsSent + report.recordsUnknown + report.recordsInvalid).toBe(0);
    expect(report.recordsNotRead).toBe(40);
    expect(report.batches).toMatchObject([{ index: 0, status: 'failed', recordCount: 10 }]);
    expectAccounted(report, 50);
  });
});
