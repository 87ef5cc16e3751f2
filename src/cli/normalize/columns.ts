import { UsageError } from '../exit-codes.js';
import { notAFieldMessage, REQUIRED_FIELDS, type RecordField, recordField } from './fields.js';

/** `--map vendor=Supplier,amount=Total`: returned as column (as written, trimmed) -> field. */
export function parseColumnMap(spec: string | undefined): Map<string, RecordField> {
  const map = new Map<string, RecordField>();
  if (spec === undefined) return map;
  if (spec.trimEnd().endsWith(',')) {
    throw new UsageError(
      `--map: expected field=Column pairs separated by commas, got an empty pair after the last comma`,
    );
  }
  // A comma separates pairs only where a `name=` follows it: `amount=Amount (EUR, net)` is one pair.
  for (const pair of spec.split(/,(?=\s*[A-Za-z_]\w*\s*=)/)) {
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const column = pair.slice(eq + 1).trim();
    if (eq < 1 || name === '' || column === '') {
      throw new UsageError(`--map: expected field=Column pairs separated by commas, got ${JSON.stringify(pair)}`);
    }
    const field = recordField(name);
    if (field === undefined) throw new UsageError(`--map: ${notAFieldMessage(name)}`);
    if ([...map.keys()].some((known) => columnKey(known) === columnKey(column))) {
      throw new UsageError(`--map: column ${JSON.stringify(column)} is mapped twice`);
    }
    map.set(column, field);
  }
  return map;
}

/** `--set field=value`, repeatable: a constant for every row, which wins over any column. */
export function parseSets(pairs: string[] | undefined): Map<RecordField, string> {
  const sets = new Map<RecordField, string>();
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set: expected field=value, got ${JSON.stringify(pair)}`);
    const name = pair.slice(0, eq).trim();
    const field = recordField(name);
    if (field === undefined) throw new UsageError(`--set: ${notAFieldMessage(name)}`);
    if (sets.has(field)) throw new UsageError(`--set: "${field}" is set twice`);
    sets.set(field, pair.slice(eq + 1));
  }
  return sets;
}

/** No-break spaces, which French-locale tools put before a bracket or a colon (`Montant (EUR)`). */
const NO_BREAK_SPACES = /[\u00a0\u202f]/g;

/**
 * A column name as it is compared: lower-cased, composed (NFC) and with no-break spaces as spaces.
 * A header from a macOS tool may spell `ä` as `a` and U+0308 while the terminal sends the composed
 * `ä`, and `--map` is typed with plain spaces: each pair looks the same in every message.
 */
export function columnKey(name: string): string {
  return name.normalize('NFC').replace(NO_BREAK_SPACES, ' ').toLowerCase();
}

/** `--map` keyed by {@link columnKey}, for matching names case-insensitively and in either Unicode form. */
export function byLowerCase(columnMap: ReadonlyMap<string, RecordField>): Map<string, RecordField> {
  return new Map([...columnMap].map(([column, field]) => [columnKey(column), field]));
}

/** How the columns of a CSV header are read. */
export interface ColumnRules {
  /** Column (as written in `--map`, trimmed) -> field. */
  columnMap: Map<string, RecordField>;
  /** Fields given by `--set`: a column for them is ignored. */
  sets: ReadonlyMap<RecordField, string>;
  /** `--strict-columns`: a named column that fills no field refuses the header. */
  strict: boolean;
}

/** Column names quoted for a message, at most 20 of them and 60 characters each: a header read in the wrong encoding can be one 64 KiB name. */
function listed(names: string[]): string {
  const shown = names.slice(0, 20).map((name) => JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name));
  return names.length > 20 ? `${shown.join(', ')} and ${names.length - 20} more` : shown.join(', ');
}

/** The key of a column with no name: its cells must stay empty (Excel saves such columns). */
const UNNAMED_COLUMN = '\u0000unnamed';

/** A header read: the key of each column (a field, {@link UNNAMED_COLUMN}, or false to drop it), and what was left out. */
export interface ColumnPlan {
  keys: (string | false)[];
  /** Named columns that fill no field, trimmed, in header order. */
  ignored: string[];
  /** Every column name found, trimmed, for messages. */
  names: string[];
}

/** A header that cannot be read: the run stops before anything is sent. */
export class HeaderError extends Error {
  override name = 'HeaderError';
}

/**
 * Matches header cells to record fields: case-insensitively and ignoring surrounding spaces, after
 * `--map`. A column that fills no field (`Cost Center`) is dropped and listed, unless `strict`; so is
 * a column for a field that `--set` gives. A column with no name is kept only to check that it is
 * empty. Throws a {@link HeaderError} for a field named twice, a `--map` column that is not there,
 * extra columns under `strict`, or a required field nothing fills (`requireFields`).
 */
export function planColumns(header: string[], rules: ColumnRules, requireFields: boolean): ColumnPlan {
  const filled = new Set<string>();
  const ignored: string[] = [];
  const names = header.map((cell) => cell.trim());
  const mapped = new Set<string>();
  const columnMap = byLowerCase(rules.columnMap);
  const keys = names.map((name): string | false => {
    if (name === '') return UNNAMED_COLUMN;
    const key = columnKey(name);
    const byMap = columnMap.get(key);
    if (byMap !== undefined) mapped.add(key);
    const field = byMap ?? recordField(name);
    if (field === undefined || rules.sets.has(field)) {
      ignored.push(name);
      return false;
    }
    if (filled.has(field)) throw new HeaderError(`the header names the field "${field}" twice`);
    filled.add(field);
    return field;
  });
  const found = `columns found: ${listed(names.filter((name) => name !== ''))}`;
  const unmapped = [...rules.columnMap.keys()].filter((column) => !mapped.has(columnKey(column)));
  if (unmapped.length > 0) {
    const list = unmapped.map((column) => JSON.stringify(column)).join(', ');
    throw new HeaderError(`--map names ${list}, which the header does not have (${found})`);
  }
  if (rules.strict) {
    const extra = ignored.filter((name) => {
      const field = columnMap.get(columnKey(name)) ?? recordField(name);
      return field === undefined;
    });
    if (extra.length > 0) {
      throw new HeaderError(
        `--strict-columns: the header has columns that fill no field: ${extra.map((name) => JSON.stringify(name)).join(', ')}`,
      );
    }
  }
  if (requireFields) {
    const missing = REQUIRED_FIELDS.filter(
      (field) => !filled.has(field) && !rules.sets.has(field) && !(field === 'currency' && filled.has('amount')),
    );
    if (missing.length > 0) {
      const only = names.filter((name) => name !== '');
      const hint =
        only.length === 1 && /[;\t|]/.test(only[0] as string) ? '; is the delimiter right (--delimiter)?' : '';
      throw new HeaderError(
        `the header has no column for ${missing.join(', ')} (${found}; rename with --map field=Column, or give a constant with --set field=value)${hint}`,
      );
    }
  }
  return { keys, ignored, names };
}
