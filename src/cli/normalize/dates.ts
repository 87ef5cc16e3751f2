import { FINANCE_FIELDS } from '../../finance/fields.js';
import { type LocalTimeResolver, localTimeResolver, utcWallClock } from './zone.js';

/** The bounds of `created` in Unix milliseconds, from the table of the record's fields. */
const CREATED_LIMITS = FINANCE_FIELDS.created;

/** What reading one date cell says: the instant in Unix milliseconds, or why it is not a date. */
export type DateReading = { ok: true; ms: number } | { ok: false; message: string };

/**
 * Reads one `created` value (text, or a number from JSON) into Unix milliseconds. A successful
 * reading is one object per reader, overwritten by the next call: read it before reading again.
 * A reader runs once per row, and a million short-lived objects make V8 grow its young generation.
 */
export type DateReader = (value: string | number) => DateReading;

/** The reusable successful reading of one reader. */
function successSlot(): (ms: number) => DateReading {
  const success = { ok: true as const, ms: 0 };
  return (ms) => {
    success.ms = ms;
    return success;
  };
}

/** A pattern given to `--date-format` that cannot be used; the message names the problem. */
export class DateFormatError extends Error {
  override name = 'DateFormatError';
}

type Field = 'year' | 'month' | 'day' | 'hour' | 'hour12' | 'meridiem' | 'minute' | 'second' | 'millisecond';

/**
 * One piece of a compiled pattern: a number of `min` to `max` digits (a meridiem is two letters),
 * or a literal character that must match.
 */
type Piece = TokenPiece | { literal: number };

interface TokenPiece {
  field: Field;
  min: number;
  max: number;
  /** Read as letters rather than digits: a month's English name, abbreviated (`Jan`) or whole. */
  name?: 'abbreviated' | 'whole';
  /** Two digits of a year: 69–99 are 1969–1999 and 00–68 are 2000–2068, as POSIX `strptime` reads `%y`. */
  century?: 'pivot';
}

/**
 * The tokens of day.js's format strings that a date cell can hold. Doubled tokens are that many
 * digits exactly; single ones (`M`, `D`, `H`, `h`) one or two, as in `1/31/2025 9:30 AM`.
 */
const TOKENS: Record<string, TokenPiece> = {
  YYYY: { field: 'year', min: 4, max: 4 },
  YY: { field: 'year', min: 2, max: 2, century: 'pivot' },
  MMMM: { field: 'month', min: 3, max: 9, name: 'whole' },
  MMM: { field: 'month', min: 3, max: 3, name: 'abbreviated' },
  MM: { field: 'month', min: 2, max: 2 },
  M: { field: 'month', min: 1, max: 2 },
  DD: { field: 'day', min: 2, max: 2 },
  D: { field: 'day', min: 1, max: 2 },
  HH: { field: 'hour', min: 2, max: 2 },
  H: { field: 'hour', min: 1, max: 2 },
  hh: { field: 'hour12', min: 2, max: 2 },
  h: { field: 'hour12', min: 1, max: 2 },
  A: { field: 'meridiem', min: 2, max: 2 },
  a: { field: 'meridiem', min: 2, max: 2 },
  mm: { field: 'minute', min: 2, max: 2 },
  ss: { field: 'second', min: 2, max: 2 },
  SSS: { field: 'millisecond', min: 3, max: 3 },
};

const DIGIT_0 = 48;

/** English month names, as bank and ERP exports write them (`03 Jan 2025`, `31-JAN-25`), any case. */
const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** The month (1–12) named at `at` in `text`, and its length; undefined when none is. */
function monthNameAt(text: string, at: number, piece: TokenPiece): { month: number; length: number } | undefined {
  let end = at;
  while (end < text.length && end - at < piece.max && isLetter(text[end] as string)) end++;
  const word = text.slice(at, end).toLowerCase();
  const index = MONTH_NAMES.findIndex((name) => (piece.name === 'whole' ? name : name.slice(0, 3)) === word);
  return index < 0 ? undefined : { month: index + 1, length: end - at };
}

/** A year written with two digits, read with the POSIX pivot (see {@link TokenPiece.century}). */
function pivotYear(twoDigits: number): number {
  return twoDigits + (twoDigits >= 69 ? 1900 : 2000);
}

function isLetter(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Whether these fields name a real calendar date and a time of a 24-hour day (31/02 is not one). */
function isRealDateTime(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): boolean {
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59
  );
}

/**
 * Splits a day.js-style pattern (`DD/MM/YYYY HH:mm`) into pieces. Runs of one letter are tokens and
 * must be known; `[text]` is literal text, as in day.js; any other character is a literal separator.
 */
export function compilePattern(pattern: string): Piece[] {
  const pieces: Piece[] = [];
  const seen = new Set<Field>();
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i] as string;
    if (ch === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close === -1) throw new DateFormatError(`"[" at position ${i + 1} is never closed`);
      for (let j = i + 1; j < close; j++) pieces.push({ literal: pattern.charCodeAt(j) });
      i = close + 1;
      continue;
    }
    if (!isLetter(ch)) {
      pieces.push({ literal: pattern.charCodeAt(i) });
      i++;
      continue;
    }
    let end = i;
    while (end < pattern.length && pattern[end] === ch) end++;
    const token = pattern.slice(i, end);
    const known = TOKENS[token];
    if (known === undefined) {
      throw new DateFormatError(
        `unknown token "${token}" (known: ${Object.keys(TOKENS).join(' ')}; put literal text in [brackets])`,
      );
    }
    if (seen.has(known.field)) throw new DateFormatError(`"${token}" appears twice`);
    seen.add(known.field);
    pieces.push(known);
    i = end;
  }
  for (const field of ['year', 'month', 'day'] as const) {
    if (!seen.has(field)) {
      throw new DateFormatError(
        'a pattern needs a year (YYYY or YY), a month (MM, M, MMM or MMMM) and a day (DD or D)',
      );
    }
  }
  if (seen.has('hour') && (seen.has('hour12') || seen.has('meridiem'))) {
    throw new DateFormatError('HH is a 24-hour clock: use hh with A, or HH alone');
  }
  if (seen.has('hour12') !== seen.has('meridiem')) {
    throw new DateFormatError('a 12-hour clock needs both hh (or h) and A');
  }
  const hours = seen.has('hour') || seen.has('hour12');
  if (seen.has('minute') && !hours) throw new DateFormatError('a pattern with minutes needs hours too');
  if (seen.has('second') && !seen.has('minute')) throw new DateFormatError('a pattern with seconds needs minutes too');
  if (seen.has('millisecond') && !seen.has('second')) {
    throw new DateFormatError('a pattern with milliseconds needs seconds too');
  }
  return pieces;
}

function invalid(text: string, expected: string): DateReading {
  return { ok: false, message: `not a date: ${shownDate(text)} (expected ${expected})` };
}

function shownDate(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

const EARLIEST = new Date(CREATED_LIMITS.min).toISOString();

/**
 * A calendar date before the earliest `created` is refused here, by its date: handed on as a number
 * of milliseconds, the record check would take it for Unix seconds and say so.
 */
function tooEarly(text: string): DateReading {
  return { ok: false, message: `${shownDate(text)} is before ${EARLIEST}, the earliest created accepted` };
}

/**
 * Seconds this large are 5138 or later: such a value is milliseconds read as seconds, the mirror of
 * the milliseconds below {@link CREATED_LIMITS.min} that the record check calls seconds.
 */
function looksLikeMilliseconds(text: string): DateReading {
  return { ok: false, message: `${shownDate(text)} looks like milliseconds: use --date-format unix-ms` };
}

/**
 * Digits read as Unix milliseconds stop at 2286-11-20, where they reach 14 digits: past it, digits
 * are microseconds, or a date and time written without separators (SAP's YYYYMMDDhhmmss), read as
 * an instant centuries away. Numbers from JSON meet the same limit.
 */
const LATEST_DIGITS_MS = 10_000_000_000_000;
const LATEST_DIGITS = new Date(LATEST_DIGITS_MS).toISOString().slice(0, 10);

function tooLateForMilliseconds(text: string, unit = 'Unix milliseconds'): DateReading {
  return {
    ok: false,
    message: `${shownDate(text)} is after ${LATEST_DIGITS} as ${unit}: microseconds, or a date written as digits? --date-format reads other forms`,
  };
}

/** Years a date written as digits (YYYYMMDD…) is taken to be in, for the hint below. */
const DIGIT_DATE_YEARS = { min: 1900, max: 2099 };

/**
 * The pattern a cell of digits matches as a calendar date without separators (YYYYMMDD,
 * YYYYMMDDHHmm, YYYYMMDDHHmmss, as SAP and many ledgers export them), or undefined. Such a cell read
 * as Unix milliseconds lands in the 1970s or after 2286, never where it means.
 */
function digitDatePattern(text: string): string | undefined {
  const pattern =
    text.length === 8
      ? 'YYYYMMDD'
      : text.length === 12
        ? 'YYYYMMDDHHmm'
        : text.length === 14
          ? 'YYYYMMDDHHmmss'
          : undefined;
  if (pattern === undefined) return undefined;
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(4, 6));
  const day = Number(text.slice(6, 8));
  const hour = text.length > 8 ? Number(text.slice(8, 10)) : 0;
  const minute = text.length > 8 ? Number(text.slice(10, 12)) : 0;
  const second = text.length > 12 ? Number(text.slice(12, 14)) : 0;
  const real =
    year >= DIGIT_DATE_YEARS.min &&
    year <= DIGIT_DATE_YEARS.max &&
    isRealDateTime(year, month, day, hour, minute, second);
  return real ? pattern : undefined;
}

/**
 * A spreadsheet's serial day number (45657 is 2024-12-31 in Excel): what a date cell becomes when
 * the column is exported as a number. Five digits cover 1927 to 2173.
 */
const SERIAL_DAY = /^\d{5}$/;

/**
 * Without `--date-format`, Unix milliseconds are 13 digits (2001-09-09 to 2286-11-20). Twelve
 * digits would be 1973 to 2001, where dates written as digits land (`240315143000` is yyMMddHHmmss,
 * not 1977): those need `--date-format unix-ms`. Fewer than 12 are left to the record check, which
 * names seconds.
 */
const EARLIEST_DIGITS_MS = 1_000_000_000_000;
const EARLIEST_DIGITS = new Date(EARLIEST_DIGITS_MS).toISOString().slice(0, 10);

function notThirteenDigits(text: string): DateReading {
  return {
    ok: false,
    message: `${shownDate(text)} is before ${EARLIEST_DIGITS} as Unix milliseconds, where dates written as digits land: give its pattern with --date-format, or --date-format unix-ms if it is milliseconds`,
  };
}

/**
 * Milliseconds this small are Unix seconds of 1973 to 2286 (Stripe's `created`, most APIs' epoch):
 * the record check would say to multiply by 1000, where the CLI has an option that reads them.
 */
function looksLikeSeconds(ms: number): boolean {
  return ms < CREATED_LIMITS.min && ms * 1000 >= CREATED_LIMITS.min && ms * 1000 < LATEST_DIGITS_MS;
}

/** Unix milliseconds as the default reader takes them, text or JSON number; see above. */
function plausibleMilliseconds(ms: number, text: string, ok: (ms: number) => DateReading): DateReading {
  if (ms >= LATEST_DIGITS_MS) return tooLateForMilliseconds(text);
  if (looksLikeSeconds(ms)) {
    return { ok: false, message: `${shownDate(text)} looks like Unix seconds: use --date-format unix` };
  }
  if (ms >= CREATED_LIMITS.min && ms < EARLIEST_DIGITS_MS) return notThirteenDigits(text);
  return ok(ms);
}

/** A cell of digits read as Unix milliseconds, unless it is plainly something else. */
function digitsAsMilliseconds(text: string, ok: (ms: number) => DateReading): DateReading {
  const pattern = digitDatePattern(text);
  if (pattern !== undefined) {
    // Twelve digits may also be milliseconds of 1976 (199601151030); the hint names both readings.
    const orMs = text.length === 12 ? ', or --date-format unix-ms if it is milliseconds' : '';
    return {
      ok: false,
      message: `${shownDate(text)} looks like a date written as ${pattern}: use --date-format ${pattern}${orMs}`,
    };
  }
  if (SERIAL_DAY.test(text)) {
    return {
      ok: false,
      message: `${shownDate(text)} looks like a spreadsheet's serial day number, not a timestamp: export the column as a date (YYYY-MM-DD)`,
    };
  }
  return plausibleMilliseconds(Number(text), text, ok);
}

/** `AM`/`PM` in any case at `at`: 0 for AM, 12 for PM, -1 for neither. */
function meridiemAt(text: string, at: number): number {
  const first = text.charCodeAt(at) | 0x20;
  const second = text.charCodeAt(at + 1) | 0x20;
  if (second !== 0x6d /* m */) return -1;
  return first === 0x61 /* a */ ? 0 : first === 0x70 /* p */ ? 12 : -1;
}

/**
 * A reader for cells written exactly as `pattern`: digits where the pattern has a token (as many
 * as it says), every separator where it has one, and a real calendar date (31/02/2025 is refused,
 * never rolled over to March). Compiled once; reading a cell is one pass over its characters.
 */
function patternReader(pattern: string, resolve: LocalTimeResolver): DateReader {
  const pieces = compilePattern(pattern);
  const expected = `a date as ${pattern}`;
  const ok = successSlot();
  return (value) => {
    if (typeof value !== 'string') return invalid(String(value), expected);
    const text = value.trim();
    let year = 0;
    let month = 0;
    let day = 0;
    let hour = 0;
    let hour12 = -1;
    let meridiem = -1;
    let minute = 0;
    let second = 0;
    let millisecond = 0;
    let at = 0;
    for (const piece of pieces) {
      if ('literal' in piece) {
        if (text.charCodeAt(at++) !== piece.literal) return invalid(text, expected);
        continue;
      }
      if (piece.field === 'meridiem') {
        meridiem = meridiemAt(text, at);
        if (meridiem < 0) return invalid(text, expected);
        at += 2;
        continue;
      }
      if (piece.name !== undefined) {
        const named = monthNameAt(text, at, piece);
        if (named === undefined) return invalid(text, expected);
        month = named.month;
        at += named.length;
        continue;
      }
      let number = 0;
      let digits = 0;
      while (digits < piece.max) {
        const digit = text.charCodeAt(at) - DIGIT_0;
        if (!(digit >= 0 && digit <= 9)) break;
        number = number * 10 + digit;
        digits++;
        at++;
      }
      if (digits < piece.min) return invalid(text, expected);
      switch (piece.field) {
        case 'year':
          year = piece.century === 'pivot' ? pivotYear(number) : number;
          break;
        case 'month':
          month = number;
          break;
        case 'day':
          day = number;
          break;
        case 'hour':
          hour = number;
          break;
        case 'hour12':
          hour12 = number;
          break;
        case 'minute':
          minute = number;
          break;
        case 'second':
          second = number;
          break;
        case 'millisecond':
          millisecond = number;
          break;
      }
    }
    if (at !== text.length) return invalid(text, expected);
    if (hour12 >= 0) {
      if (hour12 < 1 || hour12 > 12) return invalid(text, `a real date and time as ${pattern}`);
      hour = (hour12 % 12) + meridiem;
    }
    if (!isRealDateTime(year, month, day, hour, minute, second)) {
      return invalid(text, `a real date and time as ${pattern}`);
    }
    const ms = resolve(year, month, day, hour, minute, second, millisecond);
    return ms < CREATED_LIMITS.min ? tooEarly(text) : ok(ms);
  };
}

const UNIX_DIGITS = /^\d{1,16}$/;
const UNIX_SECONDS = /^\d{1,13}(\.\d{1,3})?$/;

/** `unix`: whole or fractional seconds since 1970; `unix-ms`: whole milliseconds. */
function unixReader(unit: 'unix' | 'unix-ms'): DateReader {
  const ok = successSlot();
  return (value) => {
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || value < 0)
        return invalid(String(value), `Unix ${unit === 'unix' ? 'seconds' : 'milliseconds'}`);
      if (unit === 'unix' && value >= CREATED_LIMITS.min) return looksLikeMilliseconds(String(value));
      const ms = unit === 'unix' ? Math.round(value * 1000) : value;
      return ms >= LATEST_DIGITS_MS
        ? tooLateForMilliseconds(String(value), `Unix ${unit === 'unix' ? 'seconds' : 'milliseconds'}`)
        : ok(ms);
    }
    const text = value.trim();
    if (unit === 'unix-ms') {
      if (!UNIX_DIGITS.test(text)) return invalid(text, 'Unix milliseconds');
      const ms = Number(text);
      return ms >= LATEST_DIGITS_MS ? tooLateForMilliseconds(text) : ok(ms);
    }
    if (!UNIX_SECONDS.test(text)) return invalid(text, 'Unix seconds');
    const seconds = Number(text);
    if (seconds >= CREATED_LIMITS.min) return looksLikeMilliseconds(text);
    const ms = Math.round(seconds * 1000);
    return ms >= LATEST_DIGITS_MS ? tooLateForMilliseconds(text, 'Unix seconds') : ok(ms);
  };
}

/**
 * ISO 8601 as `created` has always accepted it, plus local forms read in the zone: a date alone is
 * midnight there, and a date-time without `Z` or an offset is a wall-clock time there. A date-time
 * with an offset is an instant already; the zone does not touch it.
 */
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;
const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)$/i;
const UNIX_MS = /^\d+$/;
const ISO_EXPECTED =
  'an ISO 8601 date or date-time such as 2025-01-31 or 2025-01-31T09:30:00Z, or Unix milliseconds; --date-format reads other forms';

function isoReader(resolve: LocalTimeResolver): DateReader {
  const fields = (match: RegExpExecArray) => {
    const year = Number(match[1]);
    const month = Number(match[2]);
    const day = Number(match[3]);
    const hour = Number(match[4] ?? 0);
    const minute = Number(match[5] ?? 0);
    const second = Number(match[6] ?? 0);
    const millisecond = Number((match[7] ?? '0').slice(0, 3).padEnd(3, '0'));
    return isRealDateTime(year, month, day, hour, minute, second)
      ? { year, month, day, hour, minute, second, millisecond }
      : undefined;
  };
  const ok = successSlot();
  return (value) => {
    // A number from JSON is Unix milliseconds; the record check judges its range, this its plausibility.
    if (typeof value === 'number') return plausibleMilliseconds(value, String(value), ok);
    const text = value.trim();
    if (UNIX_MS.test(text)) return digitsAsMilliseconds(text, ok);
    const local = ISO_LOCAL.exec(text);
    if (local !== null) {
      const f = fields(local);
      if (f === undefined) return invalid(text, ISO_EXPECTED);
      const ms = resolve(f.year, f.month, f.day, f.hour, f.minute, f.second, f.millisecond);
      return ms < CREATED_LIMITS.min ? tooEarly(text) : ok(ms);
    }
    const zoned = ISO_WITH_OFFSET.exec(text);
    if (zoned !== null) {
      const f = fields(zoned);
      const offset = (zoned[8] as string).toUpperCase();
      if (f === undefined) return invalid(text, ISO_EXPECTED);
      let offsetMinutes = 0;
      if (offset !== 'Z') {
        const digits = offset.replace(':', '');
        const hours = Number(digits.slice(1, 3));
        const minutes = Number(digits.slice(3, 5));
        if (hours > 23 || minutes > 59) return invalid(text, ISO_EXPECTED);
        offsetMinutes = (digits[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
      }
      const wall = utcWallClock(f.year, f.month, f.day, f.hour, f.minute, f.second, f.millisecond);
      const ms = wall - offsetMinutes * 60_000;
      return ms < CREATED_LIMITS.min ? tooEarly(text) : ok(ms);
    }
    return invalid(text, ISO_EXPECTED);
  };
}

/**
 * The reader of `created` for a run: `format` is `--date-format` (undefined: ISO 8601 or Unix
 * milliseconds), `zone` is `--timezone`, for times that carry no offset. With a format, no other
 * form is tried: a cell either matches it or is invalid. Throws {@link DateFormatError} for a bad pattern.
 */
export function dateReader(format: string | undefined, zone: string): DateReader {
  if (format === 'unix' || format === 'unix-ms') return unixReader(format);
  const resolve = localTimeResolver(zone);
  return format === undefined ? isoReader(resolve) : patternReader(format, resolve);
}
