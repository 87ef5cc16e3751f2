import { checkFinanceRecord } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { makeRecord, mockWithClient } from './helpers.js';

describe('checkFinanceRecord', () => {
  it('accepts a valid record and answers the wire form a publish sends', async () => {
    const input = makeRecord(1, { created: '2025-01-31' });
    const check = await checkFinanceRecord(input);
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.record).not.toBe(input);
    expect(check.record.created).toBe(Date.UTC(2025, 0, 31));
    const { mock, client } = mockWithClient();
    await client.finance.publish(mock.appId, [input]);
    expect(mock.state.records(mock.appId)).toEqual([JSON.parse(JSON.stringify(check.record))]);
  });

  it('names each bad field with the messages a publish reports', async () => {
    const bad = [
      makeRecord(1, { amount: 'twelve' }),
      makeRecord(2, { currency: 'eur', merchant: 'Acme' }),
      { created: 1 },
      'not a record',
    ];
    const checks = await Promise.all(bad.map((record) => checkFinanceRecord(record)));
    const { mock, client } = mockWithClient();
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
