import { financeRecordSchema } from 'push-api-client/schema';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type RecordVerdict } from '../../src/finance/batch-source.js';
import { financeRecord } from '../support/records.js';

// The first record only zod can judge loads it; from then on every check answers at once.
beforeAll(() => checkRecord({}));

function validateFinanceRecord(input: unknown): RecordVerdict {
  const verdict = checkRecord(input);
  if (verdict instanceof Promise) throw new Error('zod is loaded: the check must answer at once');
  return verdict;
}

function issuesOf(input: unknown) {
  const result = validateFinanceRecord(input);
  if (result.ok) throw new Error('expected the record to be invalid');
  return result.issues;
}

describe('finance record schema', () => {
  it('accepts a record with every property of the spec table and outputs it unchanged', () => {
    const input = { ...financeRecord(1), name: 'n', category: 'a:b', description: 'd' };
    const result = validateFinanceRecord(input);
    expect(result).toMatchObject({ ok: true, record: input });
  });

  it('lists every missing required property by name', () => {
    const paths = issuesOf({}).map((issue) => issue.path);
    expect(paths.sort()).toEqual(['amount', 'created', 'currency', 'identifier', 'type', 'vendor']);
  });

  it('answers merchant with a message pointing to vendor', () => {
    const { vendor: _, ...rest } = financeRecord(1) as Record<string, unknown>;
    const issues = issuesOf({ ...rest, merchant: 'ACME' });
    expect(issues).toContainEqual({ path: 'merchant', message: expect.stringContaining('"vendor"') });
    expect(issues.map((issue) => issue.path)).toContain('vendor');
  });

  it('rejects unknown properties, one issue per property', () => {
    const issues = issuesOf({ ...financeRecord(1), vendorr: 'x', amout: 1 });
    expect(issues.map((issue) => issue.path).sort()).toEqual(['amout', 'vendorr']);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, '12.50', null])(
    'rejects amount %s as not a finite number',
    (amount) => {
      expect(issuesOf({ ...financeRecord(1), amount })).toEqual([
        { path: 'amount', message: 'expected a finite number' },
      ]);
    },
  );

  it.each(['usd', 'EURO', 'E1R', ''])('rejects currency %j as not an ISO 4217 code', (currency) => {
    expect(issuesOf({ ...financeRecord(1), currency })[0]?.path).toBe('currency');
  });

  it('accepts only the two record types of the spec', () => {
    expect(validateFinanceRecord({ ...financeRecord(1), type: 'invoice' }).ok).toBe(true);
    expect(issuesOf({ ...financeRecord(1), type: 'refund' })).toEqual([
      { path: 'type', message: 'expected "expense" or "invoice"' },
    ]);
  });

  it('rejects empty required strings and non-string optional ones', () => {
    const issues = issuesOf({ ...financeRecord(1), vendor: '', identifier: '', name: 5 });
    expect(issues.map((issue) => issue.path).sort()).toEqual(['identifier', 'name', 'vendor']);
  });

  it('refuses as created an object that only looks like a Date, rather than throwing', () => {
    for (const created of [Object.create(Date.prototype), new Proxy(new Date(1_700_000_000_000), {})]) {
      expect(issuesOf({ ...financeRecord(1), created })).toEqual([
        { path: 'created', message: 'expected a Date, got an object that only looks like one' },
      ]);
    }
  });

  it('sends created as Unix milliseconds from a number, a Date, an ISO date or an ISO date-time', () => {
    const ms = Date.UTC(2024, 0, 31, 9, 30);
    const created = (value: unknown) => {
      const result = validateFinanceRecord({ ...financeRecord(1), created: value });
      return result.ok ? result.record.created : result.issues;
    };
    expect(created(ms)).toBe(ms);
    expect(created(new Date(ms))).toBe(ms);
    expect(created('2024-01-31T09:30:00Z')).toBe(ms);
    expect(created('2024-01-31T10:30:00.000+01:00')).toBe(ms);
    expect(created('2024-01-31')).toBe(Date.UTC(2024, 0, 31));
  });

  it.each([
    ['a local date-time without a zone', '2024-01-31T09:30:00'],
    ['an impossible date', '2024-02-30'],
    ['free text', 'yesterday'],
    ['Unix seconds', 1_700_000_000],
    ['a fraction of a millisecond', 1_700_000_000_000.5],
    ['an Invalid Date', new Date(Number.NaN)],
    ['a boolean', true],
  ])('rejects created given as %s', (_, value) => {
    const issues = issuesOf({ ...financeRecord(1), created: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('created');
  });

  it.each([
    ['an ISO date before 1970', '1969-12-31'],
    ['an ISO date-time before 1970', '1969-12-31T23:59:59Z'],
    ['a Date before 1970', new Date(-1)],
    ['an ISO date before the 1973-03-03 floor', '1972-12-31'],
    ['a Date before the 1973-03-03 floor', new Date(Date.UTC(1972, 0, 1))],
    ['a number before the 1973-03-03 floor', 99_999_999_999],
  ])('refuses created given as %s: one minimum for numbers, Dates and strings', (_, value) => {
    const issues = issuesOf({ ...financeRecord(1), created: value });
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('created');
    if (typeof value !== 'number') expect(issues[0]?.message).toContain('on or after 1973-03-03T09:46:40.000Z');
  });

  it('accepts created exactly at the 1973-03-03 floor in every form', () => {
    for (const value of [100_000_000_000, new Date(100_000_000_000), '1973-03-03T09:46:40Z']) {
      const result = validateFinanceRecord({ ...financeRecord(1), created: value });
      expect(result.ok && result.record.created).toBe(100_000_000_000);
    }
  });

  it('says a seconds timestamp looks like seconds', () => {
    expect(issuesOf({ ...financeRecord(1), created: 1_700_000_000 })[0]?.message).toMatch(/looks like seconds/);
    for (const created of [20_251_231, 45_657]) {
      const message = issuesOf({ ...financeRecord(1), created })[0]?.message;
      expect(message).toMatch(/is not a timestamp/);
      expect(message).not.toMatch(/multiply by 1000/);
    }
  });

  it('rejects a value that is not an object', () => {
    expect(issuesOf('record')).toEqual([{ path: '', message: 'expected a finance record object' }]);
    expect(issuesOf(null)[0]?.path).toBe('');
  });

  it('exports a zod schema usable on its own', () => {
    expect(financeRecordSchema.safeParse(financeRecord(3)).success).toBe(true);
  });
});

describe('financeRecordSchema of push-api-client/schema', () => {
  it('is a classic zod schema, although the builder also serves zod/mini', () => {
    const withNote = financeRecordSchema.extend({ note: financeRecordSchema.shape.vendor.optional() });
    const parsed = withNote.safeParse({ ...financeRecord(1), note: 'n' });
    expect(parsed.success && parsed.data.note).toBe('n');
  });
});
