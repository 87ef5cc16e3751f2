/**
 * The first request leaves at once: publish asks for the token as it starts, beside the up-front
 * check of an array (`onInvalid: 'throw'`), so the first batch goes as soon as both are done. The
 * order is read from the client's own hook events and from a getter on the last record, which
 * notes when the check reads it: no clock is compared.
 */

import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { PublishStoppedError, RecordValidationError, TokenError } from '../../src/errors.js';
import type { FinanceRecordInput } from '../../src/finance/schema.js';
import { clientFor } from '../support/clients.js';
import { financeRecords } from '../support/records.js';

/** Large enough that the check gives the event loop several turns. */
const COUNT = 20_000;

/** The records, the last one noting in `log` each time its amount is read (the check reads it first). */
function recordsLogging(log: string[], last: Partial<Record<string, unknown>> = {}): FinanceRecordInput[] {
  const records = financeRecords(COUNT);
  const lastRecord = { ...records[COUNT - 1], ...last };
  const amount = lastRecord.amount;
  Object.defineProperty(lastRecord, 'amount', {
    enumerable: true,
    get() {
      log.push('last record read');
      return amount;
    },
  });
  records[COUNT - 1] = lastRecord as FinanceRecordInput;
  return records;
}

function loggingClient(log: string[]) {
  const mock = createPushApiMock();
  // The token endpoint answers late: the check has every chance to finish before the token comes.
  mock.faults.add({ match: { operation: 'token' }, delayMs: 50, times: 1 });
  const client = clientFor(mock, {
    hooks: {
      request: (event) => log.push(`${event.operation} request`),
      response: (event) => log.push(`${event.operation} answered`),
    },
  });
  return { mock, client };
}

describe('the token request of a publish', () => {
  it('leaves while the array is still being checked, and the first batch as soon as both are done', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = recordsLogging(log);
    const report = await client.finance.publish(mock.appId, records);
    expect(report.recordsSent).toBe(COUNT);

    const tokenSent = log.indexOf('token request');
    const checkEnded = log.indexOf('last record read');
    const tokenAnswered = log.indexOf('token answered');
    const firstBatch = log.indexOf('finance request');
    expect(tokenSent).toBeGreaterThanOrEqual(0);
    expect(tokenSent).toBeLessThan(checkEnded);
    expect(firstBatch).toBeGreaterThan(Math.max(checkEnded, tokenAnswered));
    expect(log.filter((entry) => entry === 'token request')).toHaveLength(1);
  });

  it('is only cached when the check finds an invalid record: no batch is sent, and the error is unchanged', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = recordsLogging(log, { currency: 'euro' });
    const failed = await client.finance.publish(mock.appId, records).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    expect((failed as RecordValidationError).invalid.map((entry) => entry.index)).toEqual([COUNT - 1]);
    expect((failed as RecordValidationError).report).toBeUndefined();
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
    // The token asked for meanwhile (perhaps still on its way) is the one the client keeps: asking
    // for it and publishing again make no second token request.
    expect(log).toContain('token request');
    await client.tokens.getToken();
    expect(mock.state.requests.filter((request) => request.operation === 'token')).toHaveLength(1);
    await client.finance.publish(mock.appId, records.slice(0, 10));
    expect(mock.state.requests.filter((request) => request.operation === 'token')).toHaveLength(1);
    expect(mock.state.records(mock.appId)).toHaveLength(10);
  });

  it('when refused, stops the publish with the TokenError as before, asking at most once more', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock, { clientSecret: 'wrong' });
    const failed = await client.finance.publish(mock.appId, financeRecords(COUNT)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(TokenError);
    expect((failed as PublishStoppedError).report.recordsSent).toBe(0);
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
    // The early request, and the first batch's own when the early one had already failed.
    const tokenRequests = mock.state.requests.filter((request) => request.operation === 'token').length;
    expect(tokenRequests).toBeGreaterThanOrEqual(1);
    expect(tokenRequests).toBeLessThanOrEqual(2);
  });

  it('is not made for an empty array, which sends nothing', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const report = await client.finance.publish(mock.appId, []);
    expect(report.recordsSent).toBe(0);
    expect(mock.state.requests).toHaveLength(0);
  });
});
