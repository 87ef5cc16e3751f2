import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/exit-codes.js';
import { checkRow } from '../../../src/cli/normalize/check-row.js';
import { parseSets } from '../../../src/cli/normalize/columns.js';
import { rowRules } from '../../../src/cli/normalize/rules.js';

const row = {
  created: ' 2025-01-31 ',
  amount: '42.50',
  currency: 'eur',
  identifier: ' jane@example.com ',
  type: 'Expense',
  vendor: 'Acme',
};

describe('the record normaliser', () => {
  it('trims text, lower-cases type and upper-cases currency', () => {
    const { record, issues } = rowRules().normalize(row);
    expect(issues).toEqual([]);
    expect(record).toEqual({
      created: Date.UTC(2025, 0, 31),
      amount: 42.5,
      currency: 'EUR',
      identifier: 'jane@example.com',
      type: 'expense',
      vendor: 'Acme',
    });
  });

  it('fills currency from a code in the amount, and reports a contradicting one under currency', () => {
    const rules = rowRules();
    expect(rules.normalize({ ...row, currency: '', amount: '4.00 usd' }).record).toMatchObject({
      amount: 4,
      currency: 'USD',
    });
    const { issues } = rules.normalize({ ...row, amount: 'USD 4.00' });
    expect(issues).toEqual([{ field: 'currency', message: 'the amount is in USD, the currency says EUR' }]);
  });

  it('holds a currency symbol to the row: one that names another currency makes the row invalid', () => {
    const rules = rowRules();
    expect(rules.normalize({ ...row, currency: '', amount: '€4.00' })).toMatchObject({
      record: { currency: 'EUR' },
      issues: [],
    });
    expect(rules.normalize({ ...row, currency: 'USD', amount: '€5.00' }).issues).toEqual([
      { field: 'currency', message: 'the amount is in EUR, the currency says USD' },
    ]);
    expect(rules.normalize({ ...row, currency: 'EGP', amount: '£7' }).issues).toEqual([]);
    expect(rules.normalize({ ...row, currency: 'EUR', amount: '¥500' }).issues).toEqual([
      { field: 'currency', message: 'the amount is in JPY or CNY, the currency says EUR' },
    ]);
    // A symbol that stands for a few currencies fills none of them.
    expect(rules.normalize({ ...row, currency: '', amount: '¥500' }).record.currency).toBeUndefined();
    expect(rules.normalize({ ...row, currency: 'USD', amount: '50¢' }).issues).toEqual([
      { field: 'amount', message: expect.stringMatching(/hundredths/) },
    ]);
    expect(() => rowRules({ sets: parseSets(['amount=€5']) })).toThrow(/--set currency=EUR/);
  });

  it('takes three letters that are no ISO 4217 code only when the row says the same currency', () => {
    const rules = rowRules();
    expect(rules.normalize({ ...row, currency: 'BTC', amount: '0.5 BTC' })).toMatchObject({
      record: { amount: 0.5, currency: 'BTC' },
      issues: [],
    });
    expect(rules.normalize({ ...row, currency: '', amount: '12.50 net' }).issues).toEqual([
      { field: 'amount', message: expect.stringMatching(/^"12.50 net": NET is no ISO 4217 code/) },
    ]);
    expect(rules.normalize({ ...row, currency: 'USD', amount: '12.50 VAT' }).issues).toEqual([
      { field: 'currency', message: 'the amount is in VAT, the currency says USD' },
    ]);
    expect(rules.normalize({ ...row, currency: 'BTC', amount: '฿0.5' }).issues).toEqual([]);
    expect(rules.normalize({ ...row, currency: 'JEP', amount: '£5' }).issues).toEqual([]);
  });

  it('lets --set win over the row, and refuses a --set value that cannot be read', () => {
    const rules = rowRules({ sets: parseSets(['type=Invoice', 'currency=chf']) });
    expect(rules.normalize(row).record).toMatchObject({ type: 'invoice', currency: 'CHF' });
    expect(() => rowRules({ sets: parseSets(['amount=abc']) })).toThrow(UsageError);
    expect(() => rowRules({ sets: parseSets(['created=31/01/2025']) })).toThrow(/--set created/);
  });

  it('refuses bad option values with a message naming the option', () => {
    expect(() => rowRules({ timeZone: 'Europe/Atlantis' })).toThrow(/--timezone/);
    expect(() => rowRules({ dateFormat: 'DD/MM/YYY' })).toThrow(/--date-format/);
    expect(() => rowRules({ decimal: ';' })).toThrow(/--decimal/);
    expect(() => rowRules({ thousands: '_' })).toThrow(/--thousands/);
    expect(() => rowRules({ decimal: ',', thousands: ',' })).toThrow(/--thousands and --decimal/);
  });
});

describe('checkRow', () => {
  it('reports every problem of a row at once, each under its field', async () => {
    const rules = rowRules({ dateFormat: 'DD/MM/YYYY' });
    const { record, issues } = rules.normalize({
      created: '31/02/2025',
      amount: 'abc',
      currency: 'euro',
      type: 'refund',
      vendor: 'Acme',
    });
    const check = await checkRow(record, issues);
    expect(check.ok).toBe(false);
    const fields = check.ok ? [] : check.issues.map((issue) => [issue.field, issue.message.slice(0, 12)]);
    expect(fields).toEqual([
      ['created', 'not a date: '],
      ['amount', 'not an amoun'],
      ['currency', 'expected an '],
      ['identifier', 'missing'],
      ['type', 'expected "ex'],
    ]);
  });

  it('says "missing" for an empty required cell', async () => {
    const { record, issues } = rowRules().normalize({ ...row, amount: '  ' });
    const check = await checkRow(record, issues);
    expect(check).toEqual({ ok: false, issues: [{ field: 'amount', message: 'missing' }] });
  });
});
