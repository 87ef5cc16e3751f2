import { checkFinanceRecord } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { financeRecord } from '../support/records.js';

describe('checkFinanceRecord', () => {
  it('accepts a valid record and answers the wire form a publish sends', async () => {
    const input = financeRecord(1, { created: '2025-01-31' });
    const check = await checkFinanceRecord(input);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.record).not.toBe(input);
    expect(check.record.created).toBe(Date.UTC(2025, 0, 31));
    const mock = createPushApiMock();
    const client = clientFor(mock);
    await client.finance.publish(mock.appId, [input]);
    expect(mock.state.records(mock.appId)).toEqual([JSON.parse(JSON.stringify(check.record))]);
  });

  it('names each bad field with the messages a publish reports', async () => {
    const bad = [
      financeRecord(1, { amount: 'twelve' }),
      financeRecord(2, { currency: 'eur', merchant: 'Acme' }),
      { created: 1 },
      'not a record',
    ];
    const checks = await Promise.all(bad.map((record) => checkFinanceRecord(record)));
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const report = await client.finance.publish(mock.appId, bad as never[], { onInvalid: 'skip' });
    expect(report.invalid).toHaveLength(bad.length);
    checks.forEach((check, index) => {
      expect(check.ok).toBe(false);
      if (check.ok) return;
      expect(check.issues.length).toBeGreaterThan(0);
      expect(check.issues).toEqual(report.invalid[index]?.issues);
    });
    const [amount] = checks;
    expect(amount?.ok === false && amount.issues.map((issue) => issue.path)).toEqual(['amount']);
  });
});
