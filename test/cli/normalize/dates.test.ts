import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DateFormatError, dateReader } from '../../../src/cli/normalize/dates.js';

const ms = (reader: ReturnType<typeof dateReader>, text: string | number) => {
  const reading = reader(text);
  return reading.ok ? reading.ms : reading.message;
};

describe('dateReader with a --date-format pattern', () => {
  it('reads day-first, month-first, dotted and slashed dates as midnight in the zone', () => {
    expect(ms(dateReader('DD/MM/YYYY', 'UTC'), '31/01/2025')).toBe(Date.UTC(2025, 0, 31));
    expect(ms(dateReader('MM/DD/YYYY', 'UTC'), '01/31/2025')).toBe(Date.UTC(2025, 0, 31));
    expect(ms(dateReader('DD.MM.YYYY', 'UTC'), '31.01.2025')).toBe(Date.UTC(2025, 0, 31));
    expect(ms(dateReader('YYYY/MM/DD', 'UTC'), '2025/01/31')).toBe(Date.UTC(2025, 0, 31));
    expect(ms(dateReader('DD.MM.YYYY', 'Europe/Berlin'), '31.01.2025')).toBe(Date.UTC(2025, 0, 30, 23));
  });

  it('reads a time of day after the date, with or without seconds', () => {
    expect(ms(dateReader('DD/MM/YYYY HH:mm', 'UTC'), '31/01/2025 09:30')).toBe(Date.UTC(2025, 0, 31, 9, 30));
    expect(ms(dateReader('MM/DD/YYYY HH:mm:ss', 'America/New_York'), '07/04/2025 12:00:05')).toBe(
      Date.UTC(2025, 6, 4, 16, 0, 5),
    );
  });

  it('refuses impossible dates instead of rolling them over', () => {
    const reader = dateReader('DD/MM/YYYY', 'UTC');
    expect(ms(reader, '31/02/2025')).toMatch(/^not a date: "31\/02\/2025"/);
    expect(ms(reader, '29/02/2025')).toMatch(/^not a date/);
    expect(ms(reader, '29/02/2024')).toBe(Date.UTC(2024, 1, 29));
    expect(ms(reader, '00/01/2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD/MM/YYYY HH:mm', 'UTC'), '01/01/2025 24:00')).toMatch(/^not a date/);
  });

  it('needs the separators of the pattern and tries no other format', () => {
    const reader = dateReader('DD/MM/YYYY', 'UTC');
    expect(ms(reader, '31-01-2025')).toMatch(/^not a date/);
    expect(ms(reader, '31.01.2025')).toMatch(/^not a date/);
    expect(ms(reader, '2025-01-31')).toMatch(/^not a date/);
    expect(ms(reader, '1738281600000')).toMatch(/^not a date/);
    expect(ms(reader, '1/1/2025')).toMatch(/^not a date/);
    expect(ms(reader, 1738281600000)).toMatch(/^not a date/);
  });

  it('reads unix seconds and unix-ms', () => {
    expect(ms(dateReader('unix', 'UTC'), '1738281600')).toBe(1738281600000);
    expect(ms(dateReader('unix', 'UTC'), 1738281600)).toBe(1738281600000);
    expect(ms(dateReader('unix-ms', 'UTC'), '1738281600123')).toBe(1738281600123);
    expect(ms(dateReader('unix', 'UTC'), '2025-01-31')).toMatch(/^not a date/);
  });

  it('refuses unknown tokens and patterns without a whole date', () => {
    expect(() => dateReader('DD/MMMMM/YYYY', 'UTC')).toThrow(DateFormatError);
    expect(() => dateReader('DD/MMMMM/YYYY', 'UTC')).toThrow(/unknown token "MMMMM"/);
    expect(() => dateReader('DD/MM/YYY', 'UTC')).toThrow(/unknown token "YYY"/);
    expect(() => dateReader('DD/MM', 'UTC')).toThrow(/needs a year \(YYYY or YY\), a month/);
    expect(() => dateReader('DD/MMM/YY/YYYY', 'UTC')).toThrow(/appears twice/);
    expect(() => dateReader('YYYY-MM-DD mm', 'UTC')).toThrow(/hours/);
    expect(() => dateReader('YYYY-MM-DD[T]HH:mm', 'UTC')).not.toThrow();
  });

  it('round-trips: a valid date written with the pattern reads back as the same instant', () => {
    const patterns = ['YYYY-MM-DD', 'DD/MM/YYYY', 'MM/DD/YYYY', 'DD.MM.YYYY', 'YYYY/MM/DD'];
    const withTimes = patterns.flatMap((p) => [p, `${p} HH:mm`, `${p} HH:mm:ss`]);
    const pad = (n: number, width = 2) => String(n).padStart(width, '0');
    fc.assert(
      fc.property(
        fc.constantFrom(...withTimes),
        fc.date({ min: new Date('1973-03-04T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }),
        (pattern, date) => {
          const seconds = pattern.endsWith('ss');
          const minutes = pattern.includes('HH');
          const text = pattern
            .replace('YYYY', pad(date.getUTCFullYear(), 4))
            .replace('MM', pad(date.getUTCMonth() + 1))
            .replace('DD', pad(date.getUTCDate()))
            .replace('HH', pad(date.getUTCHours()))
            .replace('mm', pad(date.getUTCMinutes()))
            .replace('ss', pad(date.getUTCSeconds()));
          const expected = new Date(date);
          expected.setUTCMilliseconds(0);
          if (!seconds) expected.setUTCSeconds(0);
          if (!minutes) expected.setUTCHours(0, 0);
          expect(ms(dateReader(pattern, 'UTC'), text)).toBe(expected.getTime());
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('dateReader with month names and two-digit years', () => {
  it('reads English month names in any case, abbreviated (MMM) or whole (MMMM)', () => {
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '03 Jan 2025')).toBe(Date.UTC(2025, 0, 3));
    expect(ms(dateReader('DD-MMM-YYYY', 'UTC'), '31-DEC-2024')).toBe(Date.UTC(2024, 11, 31));
    expect(ms(dateReader('MMM D, YYYY', 'UTC'), 'sep 5, 2025')).toBe(Date.UTC(2025, 8, 5));
    expect(ms(dateReader('D MMMM YYYY', 'Europe/London'), '1 July 2025')).toBe(Date.UTC(2025, 5, 30, 23));
    expect(ms(dateReader('MMMM D, YYYY h:mm A', 'UTC'), 'May 9, 2025 3:05 PM')).toBe(Date.UTC(2025, 4, 9, 15, 5));
  });

  it('refuses what is not a month of the form the pattern names', () => {
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '03 Janu 2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '03 January 2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD MMMM YYYY', 'UTC'), '03 Sept 2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '03 Mär 2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '03 01 2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD MMM YYYY', 'UTC'), '31 Feb 2025')).toMatch(/^not a date/);
  });

  it('reads YY with the POSIX pivot: 69-99 are the 1900s, 00-68 the 2000s', () => {
    const reader = dateReader('DD/MM/YY', 'UTC');
    expect(ms(reader, '31/01/25')).toBe(Date.UTC(2025, 0, 31));
    expect(ms(reader, '31/12/99')).toBe(Date.UTC(1999, 11, 31));
    expect(ms(reader, '01/01/00')).toBe(Date.UTC(2000, 0, 1));
    expect(ms(reader, '01/01/68')).toBe(Date.UTC(2068, 0, 1));
    expect(ms(reader, '31/12/2025')).toMatch(/^not a date/);
    expect(ms(dateReader('DD-MMM-YY', 'UTC'), '29-FEB-24')).toBe(Date.UTC(2024, 1, 29));
    expect(ms(dateReader('DD-MMM-YY', 'UTC'), '29-FEB-25')).toMatch(/^not a date/);
  });

  it('round-trips: a date written with month names and a two-digit year reads back as that day', () => {
    const months = [
      'January',
      'February',
      'March',
      'April',
      'May',
      'June',
      'July',
      'August',
      'September',
      'October',
      'November',
      'December',
    ];
    const pad = (n: number) => String(n).padStart(2, '0');
    const cased = (text: string, how: number) =>
      how === 0 ? text : how === 1 ? text.toUpperCase() : text.toLowerCase();
    fc.assert(
      fc.property(
        fc.constantFrom('DD-MMM-YY', 'DD MMMM YYYY', 'MMM DD, YYYY', 'DD/MM/YY'),
        fc.date({ min: new Date('1973-03-04T00:00:00Z'), max: new Date('2068-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 2 }),
        (pattern, date, how) => {
          const month = months[date.getUTCMonth()] as string;
          const text = pattern
            .replace('YYYY', String(date.getUTCFullYear()))
            .replace('YY', pad(date.getUTCFullYear() % 100))
            .replace('MMMM', cased(month, how))
            .replace('MMM', cased(month.slice(0, 3), how))
            .replace('MM', pad(date.getUTCMonth() + 1))
            .replace('DD', pad(date.getUTCDate()));
          const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
          expect(ms(dateReader(pattern, 'UTC'), text)).toBe(day);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('dateReader without a pattern (ISO 8601 or Unix milliseconds)', () => {
  const berlin = dateReader(undefined, 'Europe/Berlin');

  it('reads date-only and offset-less date-times in the zone, and leaves offsets alone', () => {
    expect(ms(berlin, '2025-07-01')).toBe(Date.UTC(2025, 5, 30, 22));
    expect(ms(berlin, '2025-07-01T09:30:00')).toBe(Date.UTC(2025, 6, 1, 7, 30));
    expect(ms(berlin, '2025-07-01T09:30:00Z')).toBe(Date.UTC(2025, 6, 1, 9, 30));
    expect(ms(berlin, '2025-07-01T09:30:00.250-04:00')).toBe(Date.UTC(2025, 6, 1, 13, 30, 0, 250));
    expect(ms(berlin, '1738281600000')).toBe(1738281600000);
    expect(ms(dateReader(undefined, 'UTC'), '2025-01-31')).toBe(Date.UTC(2025, 0, 31));
  });

  it('refuses impossible ISO dates and other forms', () => {
    expect(ms(berlin, '2025-02-30')).toMatch(/^not a date/);
    expect(ms(berlin, '31/01/2025')).toMatch(/--date-format/);
  });
});

describe('dateReader for years before 100', () => {
  it('keeps the year as written instead of moving it to the 1900s, so it is refused as too early', () => {
    // Moved to 1975, either date would be accepted.
    const reading = dateReader('DD/MM/YYYY', 'UTC')('01/01/0075');
    expect(!reading.ok && reading.message).toMatch(/"01\/01\/0075" is before 1973-03-03/);
    const iso = dateReader(undefined, 'Europe/Berlin')('0075-06-01T12:00:00Z');
    expect(!iso.ok && iso.message).toMatch(/"0075-06-01T12:00:00Z" is before 1973-03-03/);
  });
});

describe('dateReader with one-or-two-digit tokens and a 12-hour clock', () => {
  it('reads 1/31/2025 9:30 AM as US exports write it', () => {
    const reader = dateReader('M/D/YYYY h:mm A', 'UTC');
    const ms = (text: string) => {
      const reading = reader(text);
      return reading.ok ? new Date(reading.ms).toISOString() : reading.message;
    };
    expect(ms('1/31/2025 9:30 AM')).toBe('2025-01-31T09:30:00.000Z');
    expect(ms('12/1/2025 12:05 am')).toBe('2025-12-01T00:05:00.000Z');
    expect(ms('12/01/2025 12:05 PM')).toBe('2025-12-01T12:05:00.000Z');
    expect(ms('2/3/2025 11:59 pm')).toBe('2025-02-03T23:59:00.000Z');
    expect(ms('2/30/2025 1:00 PM')).toMatch(/^not a date/);
    expect(ms('2/3/2025 13:00 PM')).toMatch(/^not a date/);
    expect(ms('2/3/2025 1:00')).toMatch(/^not a date/);
    expect(ms('123/3/2025 1:00 PM')).toMatch(/^not a date/);
  });

  it('refuses a 12-hour clock without A, and HH with A', () => {
    expect(() => dateReader('M/D/YYYY h:mm', 'UTC')).toThrow(/12-hour/);
    expect(() => dateReader('M/D/YYYY HH:mm A', 'UTC')).toThrow(/24-hour/);
  });
});
