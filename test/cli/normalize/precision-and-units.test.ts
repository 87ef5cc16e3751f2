import { describe, expect, it } from 'vitest';
import { amountReader } from '../../../src/cli/normalize/amounts.js';
import { dateReader } from '../../../src/cli/normalize/dates.js';
import { notAFieldMessage } from '../../../src/cli/normalize/fields.js';

const amount = (text: string, decimal: '.' | ',' = '.', thousands?: string) => {
  const reading = amountReader({ decimal, thousands: thousands as never })(text);
  return reading.ok ? reading.value : reading.message;
};
const date = (format: string | undefined, text: string | number) => {
  const reading = dateReader(format, 'UTC')(text);
  return reading.ok ? reading.ms : reading.message;
};

describe('amounts a double cannot hold exactly', () => {
  it('refuses more than 15 significant digits instead of rounding them', () => {
    expect(amount('99999999999999999999999,99', ',', '.')).toMatch(/more digits than can be stored exactly/);
    expect(amount('1234567890123456')).toMatch(/more digits than can be stored exactly/);
    expect(amount('0.1234567890123456')).toMatch(/more digits than can be stored exactly/);
  });

  it('still reads 15 significant digits, and zeros that add no precision', () => {
    expect(amount('123456789012345')).toBe(123456789012345);
    expect(amount('1234567890123.45')).toBe(1234567890123.45);
    expect(amount('0.000000000012345')).toBe(0.000000000012345);
    expect(amount('42.5000000000000000000')).toBe(42.5);
    expect(amount('-1.000.000,00', ',', '.')).toBe(-1_000_000);
    // Zeros that end the integer add no precision either: 10^15 and 10^21 are stored exactly.
    expect(amount('1000000000000000')).toBe(1e15);
    expect(amount('1,000,000,000,000,000,000,000.00', '.', ',')).toBe(1e21);
  });
});

describe('Unix seconds and early calendar dates', () => {
  it('refuses milliseconds given as --date-format unix, text or number', () => {
    expect(date('unix', '1700000000000')).toMatch(/looks like milliseconds: use --date-format unix-ms/);
    expect(date('unix', 1_700_000_000_000)).toMatch(/looks like milliseconds/);
    expect(date('unix', '1700000000')).toBe(1_700_000_000_000);
    expect(date('unix', '1700000000.5')).toBe(1_700_000_000_500);
  });

  it('names --date-format unix for Unix seconds read as milliseconds, text or number', () => {
    expect(date(undefined, '1738315800')).toBe('"1738315800" looks like Unix seconds: use --date-format unix');
    expect(date(undefined, 1_738_315_800)).toMatch(/looks like Unix seconds: use --date-format unix/);
    expect(date(undefined, 1_738_315_800.5)).toMatch(/looks like Unix seconds/);
    expect(date('unix', '1738315800')).toBe(1_738_315_800_000);
    // Before 1973-03-03 as seconds too: no option reads it, and the record check refuses it.
    expect(date(undefined, '99999999')).toBe(99_999_999);
  });

  it('says a calendar date before 1973 is too early, not that it looks like seconds', () => {
    for (const [format, text] of [
      ['DD/MM/YYYY', '01/01/0000'],
      ['DD/MM/YYYY', '31/12/1969'],
      [undefined, '0000-01-01'],
      [undefined, '1970-01-01T00:00:00Z'],
    ] as const) {
      const message = date(format, text);
      expect(message).toMatch(/is before 1973-03-03T09:46:40.000Z/);
      expect(message).not.toMatch(/seconds/);
    }
    expect(date('DD/MM/YYYY', '03/03/1973')).toBeTypeOf('string');
    expect(date('DD/MM/YYYY', '04/03/1973')).toBe(Date.UTC(1973, 2, 4));
  });
});

describe('digits that are not Unix milliseconds', () => {
  it('names a date written as digits (YYYYMMDD…) and the --date-format that reads it', () => {
    for (const [text, pattern, ms] of [
      ['20251231', 'YYYYMMDD', Date.UTC(2025, 11, 31)],
      ['202512311000', 'YYYYMMDDHHmm', Date.UTC(2025, 11, 31, 10)],
      ['20251231100000', 'YYYYMMDDHHmmss', Date.UTC(2025, 11, 31, 10)],
    ] as const) {
      expect(date(undefined, text)).toMatch(
        `"${text}" looks like a date written as ${pattern}: use --date-format ${pattern}`,
      );
      expect(date(pattern, text)).toBe(ms);
    }
  });

  it('refuses a spreadsheet serial day and anything past 2286 instead of storing another year', () => {
    expect(date(undefined, '45657')).toMatch(/serial day number/);
    for (const text of ['1735689600000000', '99999999999999', '20251399100000']) {
      expect(date(undefined, text)).toMatch(/is after 2286-11-20 as Unix milliseconds/);
      expect(date('unix-ms', text)).toMatch(/is after 2286-11-20/);
    }
    expect(date(undefined, 1_735_689_600_000_000)).toMatch(/is after 2286-11-20/);
    expect(date('unix-ms', 20_251_231_100_000)).toMatch(/is after 2286-11-20/);
    expect(date('unix', '99999999999')).toMatch(/is after 2286-11-20 as Unix seconds/);
  });

  it('reads an offset of whole hours as Postgres writes it (+01, -05)', () => {
    expect(date(undefined, '2025-12-31 10:00:00+01')).toBe(Date.UTC(2025, 11, 31, 9));
    expect(date(undefined, '2025-12-31T10:00:00.5-05')).toBe(Date.UTC(2025, 11, 31, 15, 0, 0, 500));
    expect(date(undefined, '2025-12-31T10:00:00+1')).toMatch(/not a date/);
  });

  it('reads 13-digit Unix milliseconds by default, and earlier ones with --date-format unix-ms only', () => {
    for (const ms of [1_000_000_000_000, 1_735_689_600_000, 9_999_999_999_999]) {
      expect(date(undefined, String(ms))).toBe(ms);
      expect(date(undefined, ms)).toBe(ms);
      expect(date('unix-ms', String(ms))).toBe(ms);
    }
    // 12 digits: 1973 to 2001, where yyMMddHHmmss and DDMMYYYYHHmm land.
    for (const text of ['240315143000', '310120250930', '202502300930', '100000000000']) {
      expect(date(undefined, text)).toMatch(/is before 2001-09-09 as Unix milliseconds.*--date-format unix-ms/);
      expect(date(undefined, Number(text))).toMatch(/is before 2001-09-09/);
      expect(date('unix-ms', text)).toBe(Number(text));
    }
    expect(date(undefined, '199601151030')).toMatch(/YYYYMMDDHHmm, or --date-format unix-ms if it is milliseconds$/);
    expect(date('unix-ms', '199601151030')).toBe(199_601_151_030);
  });
});

describe('suggestions for names that are not fields', () => {
  it('never reads Object.prototype', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const message = notAFieldMessage(name);
      expect(message).not.toMatch(/did you mean|\[object|native code/);
      expect(message).toMatch(/fields: created, amount/);
    }
    expect(notAFieldMessage('merchant')).toMatch(/did you mean "vendor"/);
  });
});
