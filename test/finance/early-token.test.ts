/**
 * The first request leaves at once: publish asks for its token before it reads or checks the
 * input, so that the token's round trip overlaps that work. The order is read from the client's
 * own hook events and from a getter on a record, which notes when it is read: no clock is compared.
 */

import type { FinanceRecordInput } from 'push-api-client';
import { PublishStoppedError, RecordValidationError, TokenError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecords, toAsync } from '../support/records.js';

const COUNT = 3_000;

/** `records` with the one at `index` noting in `log` each time its amount is read. */
function noting(log: string[], records: FinanceRecordInput[], index: number, note: string): FinanceRecordInput[] {
  const record: Record<string, unknown> = { ...records[index] };
  const amount = record.amount;
  Object.defineProperty(record, 'amount', {
    enumerable: true,
    get() {
      log.push(note);
      return amount;
    },
  });
  const copy = [...records];
  copy[index] = record as FinanceRecordInput;
  return copy;
}

function loggingClient(log: string[], tokenDelayMs = 50) {
  const mock = createPushApiMock();
  // The token endpoint answers late: the check has every chance to finish before the token comes.
  mock.faults.add({ match: { operation: 'token' }, delayMs: tokenDelayMs, times: 1 });
  const client = clientFor(mock, {
    hooks: {
      request: (event) => log.push(`${event.operation} request`),
      response: (event) => log.push(`${event.operation} answered`),
    },
  });
  return { mock, client };
}

const tokenRequests = (mock: ReturnType<typeof createPushApiMock>) =>
  mock.state.requests.filter((request) => request.operation === 'token').length;

describe('the token request of a publish', () => {
  it('leaves before the array is checked, and the first batch as soon as both are done', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    let records = noting(log, financeRecords(COUNT), 0, 'first record read');
    records = noting(log, records, COUNT - 1, 'last record read');
    const report = await client.finance.publish(mock.appId, records);
    expect(report.recordsSent).toBe(COUNT);

    const tokenSent = log.indexOf('token request');
    expect(tokenSent).toBeGreaterThanOrEqual(0);
    expect(tokenSent).toBeLessThan(log.indexOf('first record read'));
    expect(log.indexOf('finance request')).toBeGreaterThan(
      Math.max(log.indexOf('last record read'), log.indexOf('token answered')),
    );
    expect(tokenRequests(mock)).toBe(1);
  });

  it('leaves before the first record of a stream is read', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = noting(log, financeRecords(10), 0, 'first record read');
    const report = await client.finance.publish(mock.appId, toAsync(records));
    expect(report.recordsSent).toBe(10);
    expect(log.indexOf('token request')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('token request')).toBeLessThan(log.indexOf('first record read'));
  });

  it('costs no turn of the event loop when the token is at hand: the check starts at once', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log, 0);
    await client.tokens.getToken();
    const records = noting(log, financeRecords(10), 0, 'first record read');
    setImmediate(() => log.push('a turn of the event loop'));
    await client.finance.publish(mock.appId, records);
    await new Promise((resolve) => setImmediate(resolve));
    const firstRead = log.indexOf('first record read');
    expect(firstRead).toBeGreaterThanOrEqual(0);
    expect(firstRead).toBeLessThan(log.indexOf('a turn of the event loop'));
    expect(tokenRequests(mock)).toBe(1);
  });

  it('is only cached when the check finds an invalid record: nothing is sent, and the error is unchanged', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = financeRecords(COUNT);
    records[COUNT - 1] = { ...records[COUNT - 1], currency: 'euro' } as unknown as FinanceRecordInput;
    const failed = await client.finance.publish(mock.appId, records).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    expect((failed as RecordValidationError).invalid.map((entry) => entry.index)).toEqual([COUNT - 1]);
    expect((failed as RecordValidationError).report).toBeUndefined();
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
    // The token asked for meanwhile (perhaps still on its way) is the one the client keeps.
    expect(log).toContain('token request');
    await client.finance.publish(mock.appId, records.slice(0, 10));
    expect(tokenRequests(mock)).toBe(1);
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
    expect(tokenRequests(mock)).toBeGreaterThanOrEqual(1);
    expect(tokenRequests(mock)).toBeLessThanOrEqual(2);
  });

  it('is not made for an empty array, which sends nothing', async () => {
    const mock = createPushApiMock();
    const report = await clientFor(mock).finance.publish(mock.appId, []);
    expect(report.recordsSent).toBe(0);
    expect(mock.state.requests).toHaveLength(0);
  });
});
