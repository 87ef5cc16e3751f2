/**
 * What is validated is what is sent: a record is read once per check into a new plain object, and
 * that object is what the request carries. A getter or a Proxy that answers differently on each
 * read cannot get a value past the check into the body, and nothing done to the record afterwards
 * reaches it.
 */

import type { FinanceRecordInput } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecord, toAsync } from '../support/records.js';

/** A valid record whose `amount` is 5 on the first read, 'ten' on the second, and so on. */
function flipFlopAmount(i: number): { record: FinanceRecordInput; reads: () => number } {
  let reads = 0;
  const record = Object.defineProperty({ ...financeRecord(i) }, 'amount', {
    enumerable: true,
    get() {
      reads++;
      return reads % 2 === 1 ? 5 : 'ten';
    },
  });
  return { record, reads: () => reads };
}

/** A Proxy over a valid record: every field reads as valid once, then `vendor` reads as ''. */
function proxyThatChanges(i: number): FinanceRecordInput {
  const seen = new Set<PropertyKey>();
  return new Proxy(financeRecord(i), {
    get(target, key, receiver) {
      const first = !seen.has(key);
      seen.add(key);
      if (key === 'vendor' && !first) return '';
      return Reflect.get(target, key, receiver);
    },
  });
}

/**
 * A Proxy over a full record whose every field answers differently on each read (a suffix, or a
 * number plus the count of reads), counting the reads of each field.
 */
function proxyCountingReads(i: number): { record: FinanceRecordInput; reads: Map<PropertyKey, number> } {
  const reads = new Map<PropertyKey, number>();
  const target = financeRecord(i, { name: 'Trip "A"\n', category: 'travel:air', description: 'Café 東京 🚀 \ud800' });
  const record = new Proxy(target, {
    get(object, key, receiver) {
      const count = (reads.get(key) ?? 0) + 1;
      reads.set(key, count);
      const value: unknown = Reflect.get(object, key, receiver);
      if (count === 1 || key === 'type') return value;
      return typeof value === 'number' ? value + count : typeof value === 'string' ? `${value} (read ${count})` : value;
    },
  });
  return { record, reads };
}

const inputs = {
  array: <T>(records: T[]) => records,
  'async iterable': <T>(records: T[]) => toAsync(records),
};

describe.each(Object.entries(inputs))('from an %s, what is validated is what is sent', (_kind, asInput) => {
  it('a getter is read once, and the value it gave the check is the value sent', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const flaky = flipFlopAmount(1);
    const records = [financeRecord(0), flaky.record, financeRecord(2)];
    const report = await client.finance.publish(mock.appId, asInput(records), { onInvalid: 'skip' });
    expect(report.recordsSent).toBe(3);
    expect(flaky.reads()).toBe(1);
    expect(mock.state.records(mock.appId).map((record) => record.amount)).toEqual([0.25, 5, 2.25]);
  });

  it('a Proxy that answers differently on a second read sends what it answered the check', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records = [financeRecord(0), proxyThatChanges(1)];
    const report = await client.finance.publish(mock.appId, asInput(records), { onInvalid: 'skip' });
    expect(report.recordsSent).toBe(2);
    expect(mock.state.records(mock.appId).map((record) => record.vendor)).toEqual(['Vendor 0', 'Vendor 1']);
  });

  it('reads each field of a record once, and sends the values of those reads, byte for byte', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const proxied = proxyCountingReads(1);
    const report = await client.finance.publish(mock.appId, asInput([financeRecord(0), proxied.record]), {
      onInvalid: 'skip',
    });
    expect(report.recordsSent).toBe(2);
    // Every field once (an async generator also looks up `then` on what it yields: not a field).
    for (const field of Object.keys(proxied.record)) expect(proxied.reads.get(field), field).toBe(1);
    const stored = mock.state.records(mock.appId)[1];
    expect(stored).toEqual(
      financeRecord(1, { name: 'Trip "A"\n', category: 'travel:air', description: 'Café 東京 🚀 \ud800' }),
    );
  });

  it('sends what was checked, whatever is done to the records after the check', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records = [financeRecord(0), financeRecord(1), financeRecord(2)];
    const report = await client.finance.publish(mock.appId, asInput(records), {
      onInvalid: 'skip',
      // Called after the batch was checked and written, before it is sent.
      onBatchSending: () => {
        for (const record of records) {
          record.amount = 999;
          record.vendor = '';
        }
      },
    });
    expect(report.recordsSent).toBe(3);
    expect(mock.state.records(mock.appId)).toEqual([financeRecord(0), financeRecord(1), financeRecord(2)]);
  });

  it('with every record checked before sending (the default), each pass sends only what it checked', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const flaky = flipFlopAmount(1);
    const outcome = await client.finance.publish(mock.appId, asInput([flaky.record])).then(
      (report) => report,
      (error: { report?: { recordsSent: number; recordsInvalid: number } }) => error.report,
    );
    expect(outcome && outcome.recordsSent + outcome.recordsInvalid).toBe(1);
    for (const record of mock.state.records(mock.appId)) expect(record.amount).toBe(5);
  });
});
