import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/exit-codes.js';
import { HeaderError, parseColumnMap, parseSets, planColumns } from '../../../src/cli/normalize/columns.js';

const rules = (map?: string, sets: string[] = [], strict = false) => ({
  columnMap: parseColumnMap(map),
  sets: parseSets(sets),
  strict,
});

describe('planColumns', () => {
  it('lists at most 20 columns found, each cut at 60 characters, when the header lacks a field', () => {
    const names = [`x${'y'.repeat(70_000)}`, ...Array.from({ length: 29 }, (_, i) => `col${i}`)];
    let message = '';
    try {
      planColumns(names, rules(), true);
    } catch (error) {
      message = (error as HeaderError).message;
    }
    expect(message).toContain(`columns found: "x${'y'.repeat(59)}…", "col0"`);
    expect(message).toMatch(/"col18" and 10 more/);
    expect(message.length).toBeLessThan(1000);
  });

  it('matches header names case-insensitively, ignoring surrounding spaces', () => {
    const plan = planColumns(
      ['Created', ' Amount ', 'CURRENCY', 'identifier', 'Type', 'vendor', 'transactionnumber'],
      rules(),
      true,
    );
    expect(plan.keys).toEqual(['created', 'amount', 'currency', 'identifier', 'type', 'vendor', 'transactionNumber']);
    expect(plan.ignored).toEqual([]);
  });

  it('matches a --map column in either Unicode form: composed (NFC) or decomposed (NFD)', () => {
    const nfd = 'Währung'.normalize('NFD');
    expect(planColumns([nfd], rules('currency=Währung'), false).keys).toEqual(['currency']);
    expect(planColumns(['Währung'], rules(`currency=${nfd}`), false).keys).toEqual(['currency']);
    expect(() => parseColumnMap(`currency=Währung,vendor=${nfd}`)).toThrow(/mapped twice/);
  });

  it('matches a --map column with spaces to a header with no-break spaces (U+00A0, U+202F)', () => {
    expect(planColumns(['Montant\u00a0(EUR)'], rules('amount=Montant (EUR)'), false).keys).toEqual(['amount']);
    expect(planColumns(['Montant\u202f(EUR)'], rules('amount=Montant (EUR)'), false).keys).toEqual(['amount']);
  });

  it('ignores and lists columns that fill no field; empty trailing ones are not listed', () => {
    const plan = planColumns(
      ['Date', 'Cost Center ', 'Amount', 'Supplier', '', ''],
      rules('created=date,vendor=SUPPLIER'),
      false,
    );
    expect(plan.keys.slice(0, 4)).toEqual(['created', false, 'amount', 'vendor']);
    expect(plan.ignored).toEqual(['Cost Center']);
  });

  it('lets --set win over a column for the same field, and lists that column', () => {
    const plan = planColumns(
      ['created', 'amount', 'Type', 'vendor', 'identifier'],
      rules(undefined, ['type=expense', 'currency=EUR']),
      true,
    );
    expect(plan.keys).toEqual(['created', 'amount', false, 'vendor', 'identifier']);
    expect(plan.ignored).toEqual(['Type']);
  });

  it('counts an amount column as the source of currency in the required-field check', () => {
    expect(() => planColumns(['created', 'amount', 'identifier', 'type', 'vendor'], rules(), true)).not.toThrow();
    expect(() => planColumns(['created', 'identifier', 'type', 'vendor'], rules(), true)).toThrow(
      /no column for amount, currency/,
    );
  });

  it('refuses extra columns under --strict-columns, naming them, but not empty trailing ones', () => {
    const header = ['created', 'amount', 'currency', 'identifier', 'type', 'vendor', 'Cost Center', 'Notes', '', ''];
    expect(() => planColumns(header, rules(undefined, [], true), true)).toThrow(HeaderError);
    expect(() => planColumns(header, rules(undefined, [], true), true)).toThrow(/"Cost Center", "Notes"/);
    expect(() =>
      planColumns(
        header.filter((name) => !/Cost|Notes/.test(name)),
        rules(undefined, [], true),
        true,
      ),
    ).not.toThrow();
  });

  it('refuses a --map column the header lacks and a field named twice', () => {
    expect(() => planColumns(['vendor'], rules('amount=Total'), false)).toThrow(/--map names "Total"/);
    expect(() => planColumns(['Vendor', 'Supplier'], rules('vendor=Supplier'), false)).toThrow(/twice/);
  });
});

describe('--map and --set', () => {
  it('says that merchant is not a field, and suggests vendor', () => {
    expect(() => parseColumnMap('merchant=Supplier')).toThrow(UsageError);
    expect(() => parseColumnMap('merchant=Supplier')).toThrow(/"merchant" is not a field.*did you mean "vendor"/);
    expect(() => parseSets(['colour=red'])).toThrow(/--set: "colour" is not a field/);
  });

  it('matches --map and --set fields case-insensitively', () => {
    expect([...parseColumnMap('Vendor=Supplier')]).toEqual([['Supplier', 'vendor']]);
    expect(() => parseColumnMap('vendor=Supplier,name=SUPPLIER')).toThrow(/mapped twice/);
    expect([...parseSets(['TYPE=expense'])]).toEqual([['type', 'expense']]);
  });
});
