import { type LocalTimeResolver, localTimeResolver, utcWallClock } from './zone.js';

/** What reading one date cell says: the instant in Unix milliseconds, or why it is not a date. */
export type DateReading = { ok: true; ms: number } | { ok: false; message: string };

/** Reads one `created` value (text, or a number from JSON) into Unix milliseconds. */
export type DateReader = (value: string | number) => DateReading;

/** A pattern given to `--date-format` that cannot be used; the message names the problem. */
export class DateFormatError extends Error {
  override name = 'DateFormatError';
}

type Field = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond';

/** One piece of a compiled pattern: a fixed-width number, or a literal character that must match. */
type Piece = { field: Field; width: number } | { literal: number };

/** The tokens of day.js's format strings that a date cell can hold; each is a fixed number of digits. */
const TOKENS: Record<string, { field: Field; width: number }> = {
  YYYY: { field: 'year', width: 4 },
  MM: { field: 'month', width: 2 },
  DD: { field: 'day', width: 2 },
  HH: { field: 'hour', width: 2 },
  mm: { field: 'minute', width: 2 },
  ss: { field: 'second', width: 2 },
  SSS: { field: 'millisecond', width: 3 },
};

const DIGIT_0 = 48;

function isLetter(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Splits a day.js-style pattern (`DD/MM/YYYY HH:mm`) into pieces. Runs of letters are tokens and
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
    if (!seen.has(field)) throw new DateFormatError('a pattern needs YYYY, MM and DD');
  }
  const order: Field[] = ['hour', 'minute', 'second', 'millisecond'];
  for (let i = 1; i < order.length; i++) {
    if (seen.has(order[i] as Field) && !seen.has(order[i - 1] as Field)) {
      throw new DateFormatError(`a pattern with ${order[i]}s needs ${order[i - 1]}s too`);
    }
  }
  return pieces;
}

function invalid(text: string, expected: string): DateReading {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return { ok: false, message: `not a date: ${JSON.stringify(shown)} (expected ${expected})` };
}

/**
 * A reader for cells written exactly as `pattern`: every digit where the pattern has a token,
 * every separator where it has one, and a real calendar date (31/02/2025 is refused, never rolled
 * over to March). Compiled once; reading a cell is one pass over its characters.
 */
function patternReader(pattern: string, resolve: LocalTimeResolver): DateReader {
  const pieces = compilePattern(pattern);
  const length = pieces.reduce((sum, piece) => sum + ('width' in piece ? piece.width : 1), 0);
  return (value) => {
    if (typeof value !== 'string') return invalid(String(value), `a date as ${pattern}`);
    const text = value.trim();
    if (text.length !== length) return invalid(text, `a date as ${pattern}`);
    let year = 0;
    let month = 0;
    let day = 0;
    let hour = 0;
    let minute = 0;
    let second = 0;
    let millisecond = 0;
    let at = 0;
    for (const piece of pieces) {
      if ('literal' in piece) {
        if (text.charCodeAt(at++) !== piece.literal) return invalid(text, `a date as ${pattern}`);
        continue;
      }
      let number = 0;
      for (let k = 0; k < piece.width; k++) {
        const digit = text.charCodeAt(at++) - DIGIT_0;
        if (digit < 0 || digit > 9) return invalid(text, `a date as ${pattern}`);
        number = number * 10 + digit;
      }
      switch (piece.field) {
        case 'year':
          year = number;
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
    if (
      month < 1 ||
      month > 12 ||
      day < 1 ||
      day > daysInMonth(year, month) ||
      hour > 23 ||
      minute > 59 ||
      second > 59
    ) {
      return invalid(text, `a real date and time as ${pattern}`);
    }
    return { ok: true, ms: resolve(year, month, day, hour, minute, second, millisecond) };
  };
}

const UNIX_DIGITS = /^\d{1,16}$/;
const UNIX_SECONDS = /^\d{1,13}(\.\d{1,3})?$/;

/** `unix`: whole or fractional seconds since 1970; `unix-ms`: whole milliseconds. */
function unixReader(unit: 'unix' | 'unix-ms'): DateReader {
  return (value) => {
    if (typeof value === 'number') {
      if (!Number.isFinite(value) || value < 0)
        return invalid(String(value), `Unix ${unit === 'unix' ? 'seconds' : 'milliseconds'}`);
      return { ok: true, ms: unit === 'unix' ? Math.round(value * 1000) : value };
    }
    const text = value.trim();
    if (unit === 'unix-ms') {
      return UNIX_DIGITS.test(text) ? { ok: true, ms: Number(text) } : invalid(text, 'Unix milliseconds');
    }
    return UNIX_SECONDS.test(text) ? { ok: true, ms: Math.round(Number(text) * 1000) } : invalid(text, 'Unix seconds');
  };
}

/**
 * ISO 8601 as `created` has always accepted it, plus local forms read in the zone: a date alone is
 * midnight there, and a date-time without `Z` or an offset is a wall-clock time there. A date-time
 * with an offset is an instant already; the zone does not touch it.
 */
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?$/;
const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/i;
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
    const valid =
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysInMonth(year, month) &&
      hour <= 23 &&
      minute <= 59 &&
      second <= 59;
    return valid ? { year, month, day, hour, minute, second, millisecond } : undefined;
  };
  return (value) => {
    // A number from JSON is Unix milliseconds; the record check judges its range.
    if (typeof value === 'number') return { ok: true, ms: value };
    const text = value.trim();
    if (UNIX_MS.test(text)) return { ok: true, ms: Number(text) };
    const local = ISO_LOCAL.exec(text);
    if (local !== null) {
      const f = fields(local);
      if (f === undefined) return invalid(text, ISO_EXPECTED);
      return { ok: true, ms: resolve(f.year, f.month, f.day, f.hour, f.minute, f.second, f.millisecond) };
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
      return { ok: true, ms: wall - offsetMinutes * 60_000 };
    }
    return invalid(text, ISO_EXPECTED);
  };
}

/** The `--date-format` values that are not patterns. */
export const UNIX_FORMATS = ['unix', 'unix-ms'] as const;

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
