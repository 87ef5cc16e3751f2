import { UsageError } from '../exit-codes.js';
import type { RowIssue, SourceRow } from './types.js';

/** `--map vendor=Supplier,amount=Total`: record field = CSV column. Returned as column -> field. */
export function parseColumnMap(spec: string | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (spec === undefined) return map;
  for (const pair of spec.split(',')) {
    const eq = pair.indexOf('=');
    const field = pair.slice(0, eq).trim();
    const column = pair.slice(eq + 1).trim();
    if (eq < 1 || field === '' || column === '') {
      throw new UsageError(`--map: expected field=Column pairs separated by commas, got "${pair}"`);
    }
    if (map.has(column)) throw new UsageError(`--map: column "${column}" is mapped twice`);
    map.set(column, field);
  }
  return map;
}

/**
 * `--map` applied to a JSON record: each mapped key is renamed to its field. A record holding both
 * the mapped key and the field it maps to is rejected rather than guessing which one counts.
 */
export function renameKeys(row: SourceRow, columnMap: Map<string, string>): SourceRow {
  if (row.kind !== 'record') return row;
  const record: Record<string, unknown> = {};
  const issues: RowIssue[] = [];
  for (const [key, value] of Object.entries(row.record)) {
    const field = columnMap.get(key) ?? key;
    if (Object.hasOwn(record, field)) {
      issues.push({ field, message: `"${field}" is given twice (once through --map)` });
      continue;
    }
    // defineProperty, not assignment: a "__proto__" key in the JSON stays a plain key.
    Object.defineProperty(record, field, { value, enumerable: true, writable: true, configurable: true });
  }
  if (issues.length > 0) return { kind: 'reject', file: row.file, line: row.line, issues };
  return { ...row, record };
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const UNIX_MS = /^\d+$/;

/**
 * `created` from a CSV cell: digits are Unix milliseconds (the wire form); anything else is left
 * as text for the finance schema, which accepts ISO-8601 dates and date-times with an offset.
 */
export function parseCreated(text: string): number | string {
  const trimmed = text.trim();
  return UNIX_MS.test(trimmed) ? Number(trimmed) : trimmed;
}

/** `amount` as a finite number; CSV cells are text, the spec wants a decimal number. */
export function parseAmount(text: string): number | undefined {
  const trimmed = text.trim();
  if (!NUMBER.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/** Quotes a cell for a message, shortened so that a huge field does not make a huge reject line. */
function show(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/**
 * The key a `__proto__` column gets in csv-parse's cell object, which assigns cells by name and
 * would otherwise set the object's prototype and drop the cell. Turned back into a plain
 * `__proto__` key here, so that validation rejects it like any other unknown column.
 */
export const PROTO_COLUMN_KEY = '\u0000__proto__';

/**
 * Turns one CSV row (already keyed by record field names) into a candidate record.
 * Empty cells are omitted, so an empty optional cell is simply absent and an empty required
 * cell is reported by the schema as missing.
 */
export function convertCsvRow(cells: Record<string, string>): { record: Record<string, unknown>; issues: RowIssue[] } {
  const record: Record<string, unknown> = {};
  const issues: RowIssue[] = [];
  for (const field in cells) {
    const text = cells[field] as string;
    if (text === '') continue;
    if (field === 'amount') {
      const amount = parseAmount(text);
      if (amount === undefined) issues.push({ field, message: `not a number: ${show(text)}` });
      else record[field] = amount;
    } else if (field === 'created') {
      record[field] = parseCreated(text);
    } else {
      // defineProperty: a "__proto__" column stays a key, which validation then rejects as unknown.
      const key = field === PROTO_COLUMN_KEY ? '__proto__' : field;
      Object.defineProperty(record, key, { value: text, enumerable: true, writable: true, configurable: true });
    }
  }
  return { record, issues };
}
