/**
 * zod is loaded on first need (src/finance/batch-source.ts): valid records never load it, and the first record
 * the fast path does not accept loads it before it is judged, whatever the input's form. Vitest
 * isolates this file's modules (vitest.config.ts), so the schema starts unloaded here; the tests
 * run in order. lazy-schema.e2e.test.ts checks the same in a process where zod cannot load at all.
 */

import type { financeRecordSchema } from 'push-api-client/schema';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordSchemaLoaded } from '../../src/finance/batch-source.js';
import {
  type FinanceRecord,
  type FinanceRecordInput,
  ISO_DATE_PATTERN,
  ISO_DATE_TIME_PATTERN,
} from '../../src/finance/fields.js';
import { clientFor } from '../support/clients.js';
import { financeRecords, toAsync } from '../support/records.js';

describe('zod, loaded on first need', () => {
  it('is not loaded to publish valid records from an async iterable', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const report = await client.finance.publish(mock.appId, toAsync(financeRecords(1500)));
    expect(report.recordsSent).toBe(1500);
    expect(recordSchemaLoaded()).toBe(false);
  });

  it('is loaded, without an internal error, for a record whose getter answers differently on each read', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    let reads = 0;
    const flaky = {
      ...financeRecords(1)[0],
      get amount() {
        reads++;
        return reads % 2 === 1 ? 'ten' : 5;
      },
    };
    const report = await client.finance.publish(mock.appId, toAsync([flaky]) as AsyncIterable<never>, {
      onInvalid: 'skip',
    });
    expect(recordSchemaLoaded()).toBe(true);
    // Read once while zod was missing (refused: nothing was read), once more once it was loaded (5).
    expect(report.recordsSent).toBe(1);
    expect(mock.state.records(mock.appId).map((record) => record.amount)).toEqual([5]);
  });

  it('explains by field the records only zod can judge', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const records: unknown[] = financeRecords(3);
    records[1] = { ...(records[1] as object), amount: 'ten' };
    const report = await client.finance.publish(mock.appId, toAsync(records) as AsyncIterable<never>, {
      onInvalid: 'skip',
    });
    expect(recordSchemaLoaded()).toBe(true);
    expect(report.recordsSent).toBe(2);
    expect(report.invalid).toEqual([{ index: 1, issues: [{ path: 'amount', message: 'expected a finite number' }] }]);
  });
});

describe('the fast path ISO patterns', () => {
  it('are the very patterns zod checks ISO dates and date-times with', () => {
    const zodDate = z.iso.date()._zod.def.pattern;
    const zodDateTime = z.iso.datetime({ offset: true })._zod.def.pattern;
    expect([ISO_DATE_PATTERN.source, ISO_DATE_PATTERN.flags]).toEqual([zodDate?.source, zodDate?.flags]);
    expect([ISO_DATE_TIME_PATTERN.source, ISO_DATE_TIME_PATTERN.flags]).toEqual([
      zodDateTime?.source,
      zodDateTime?.flags,
    ]);
  });
});

describe('the record types', () => {
  it('are exactly what the schema takes in and gives out (checked by the type checker)', () => {
    // Each assignable to the other, with the same keys (an optional key is still a key).
    type Same<A, B> = [A] extends [B]
      ? [B] extends [A]
        ? [keyof A] extends [keyof B]
          ? true
          : false
        : false
      : false;
    const input: Same<FinanceRecordInput, z.input<typeof financeRecordSchema>> = true;
    const output: Same<FinanceRecord, z.output<typeof financeRecordSchema>> = true;
    expect([input, output]).toEqual([true, true]);
  });
});
