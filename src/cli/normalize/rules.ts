import { UsageError } from '../exit-codes.js';
import { textEncoding } from '../readers/encoding.js';
import type { RowRules } from '../readers/types.js';
import { type AmountFormat, amountReader } from './amounts.js';
import { DateFormatError, dateReader } from './dates.js';
import type { RecordField } from './fields.js';
import { normalizeSets, recordNormalizer } from './record.js';
import type { RowTransform } from './transform.js';
import { isKnownTimeZone } from './zone.js';

/** The reading options of `finance publish`, as given; every default is here. */
export interface RowRuleOptions {
  /** Column (lower-cased) -> field, from `--map`. @default none */
  columnMap?: Map<string, RecordField>;
  /** `--set` constants, as given. @default none */
  sets?: Map<RecordField, string>;
  /** `--strict-columns`. @default false */
  strictColumns?: boolean;
  /** `--date-format`. @default ISO 8601 or Unix milliseconds */
  dateFormat?: string;
  /** `--timezone`, for times without an offset. @default 'UTC' */
  timeZone?: string;
  /** `--decimal`. @default '.' */
  decimal?: string;
  /** `--thousands`. @default none */
  thousands?: string;
  /** `--encoding` of CSV and TSV files, any WHATWG label. @default 'utf-8' */
  encoding?: string;
  transform?: RowTransform;
  /** `--require-final-newline`. @default false */
  requireFinalNewline?: boolean;
  /** `--skip-lines`. @default 0 */
  skipLines?: number;
}

const DECIMALS = new Set(['.', ',']);
const THOUSANDS = new Map<string, AmountFormat['thousands']>([
  [',', ','],
  ['.', '.'],
  [' ', ' '],
  ['space', ' '],
  ["'", "'"],
]);

/**
 * Compiles the reading options into the rules every reader of the run shares. Each bad value is a
 * usage error naming its option, met before any input is read or anything sent.
 */
export function rowRules(options: RowRuleOptions = {}): RowRules {
  const timeZone = options.timeZone ?? 'UTC';
  if (!isKnownTimeZone(timeZone)) {
    throw new UsageError(
      `--timezone: unknown time zone ${JSON.stringify(timeZone)} (use an IANA name such as Europe/Berlin or UTC, or a fixed offset such as +01:00)`,
    );
  }
  let readDate: ReturnType<typeof dateReader>;
  try {
    readDate = dateReader(options.dateFormat, timeZone);
  } catch (error) {
    if (error instanceof DateFormatError)
      throw new UsageError(`--date-format ${JSON.stringify(options.dateFormat)}: ${error.message}`);
    throw error;
  }
  const decimal = options.decimal ?? '.';
  if (!DECIMALS.has(decimal)) throw new UsageError(`--decimal: expected "." or ",", got ${JSON.stringify(decimal)}`);
  const thousands = options.thousands === undefined ? undefined : THOUSANDS.get(options.thousands);
  if (options.thousands !== undefined && thousands === undefined) {
    throw new UsageError(`--thousands: expected one of , . ' or a space, got ${JSON.stringify(options.thousands)}`);
  }
  if (thousands === decimal)
    throw new UsageError(`--thousands and --decimal cannot both be ${JSON.stringify(decimal)}`);
  const readAmount = amountReader({ decimal: decimal as AmountFormat['decimal'], thousands });
  const sets = normalizeSets(options.sets ?? new Map(), readDate, readAmount);
  return {
    columns: { columnMap: options.columnMap ?? new Map(), sets, strict: options.strictColumns === true },
    normalize: recordNormalizer({ readDate, readAmount, sets }),
    ...(options.transform !== undefined && { transform: options.transform }),
    ...(options.encoding !== undefined && { encoding: textEncoding(options.encoding) }),
    ignoredColumns: new Set(),
    ...(options.requireFinalNewline === true && { requireFinalNewline: true }),
    ...(options.skipLines !== undefined && options.skipLines > 0 && { skipLines: options.skipLines }),
    rowsWithoutFinalNewline: [],
  };
}
