import { CsvError } from 'csv-parse';
import { HeaderError, planColumns } from '../normalize/columns.js';
import { REQUIRED_FIELDS } from '../normalize/fields.js';
import { rowRules } from '../normalize/rules.js';
import { csvBytes, type Utf16 } from './csv-bytes.js';
import { ResyncingCsvParser } from './csv-resync.js';
import { csvBytesOptions, type TextEncoding, UTF8, utf16Encoding } from './encoding.js';
import { afterLines } from './skip-lines.js';
import { InputError, MAX_ROW_BYTES, type RowIssue, type RowRules, type SourceRow } from './types.js';

export interface CsvReadOptions {
  /** How rows become records (`--map`, `--set`, formats, `--transform`). @default rowRules() */
  rules?: RowRules;
  /** The cell separator. @default ',' */
  delimiter?: string;
  /** Refuse a header with no column for a required field (the CLI's runs). @default false */
  requireFields?: boolean;
}

export { REQUIRED_FIELDS } from '../normalize/fields.js';

/**
 * A cell that needs a closer look: a byte of 0x80 or more (read as latin1), or a line break
 * (only a quoted cell holds one). Most cells have neither: they are ASCII, which every encoding
 * read here keeps as it is, and skip the round trip through a Buffer (two copies and a strict
 * decode per cell).
 */
const SPECIAL = /[\r\n\u0080-\u00ff]/;
const NON_ASCII = /[\u0080-\u00ff]/;

/** Line breaks inside a cell: LF, CRLF and a lone CR, one each. */
function lineBreaks(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 || (code === 13 && text.charCodeAt(i + 1) !== 10)) count++;
  }
  return count;
}

/**
 * The key csv-parse gives a `__proto__` column in a raw row (for `--transform`): csv-parse assigns
 * cells by name, which would set the object's prototype and drop the cell. Turned back into a
 * plain `__proto__` key before the transform sees the row.
 */
const PROTO_COLUMN_KEY = '\u0000__proto__';
/** Keys of columns with no name start with a NUL, which no header name read from a file can hold after trim. */
const UNNAMED_PREFIX = '\u0000unnamed';
/** Keys of columns that fill no field start with U+0001, for the same reason. */
const IGNORED_PREFIX = '\u0001ignored';

/** The line of the header: the first after the lines `--skip-lines` dropped. */
function headerLine(rules: RowRules): number {
  return (rules.skipLines ?? 0) + 1;
}

function headerNames(file: string, header: unknown[], rules: RowRules): string[] {
  const encoding = rules.encoding ?? UTF8;
  return header.map((cell, position) => {
    const name = encoding.decodeCell(String(cell));
    if (name === undefined) {
      throw new InputError(`${file}:${headerLine(rules)}: header column ${position + 1} is ${invalidIn(encoding)}`);
    }
    return name;
  });
}

/** What a cell whose bytes do not decode is, with the way out when the file may be in another encoding. */
function invalidIn(encoding: TextEncoding): string {
  return encoding === UTF8
    ? 'not valid UTF-8 (saved in a code page? --encoding <name>, such as windows-1252)'
    : `not valid ${encoding.name}`;
}

/**
 * The keys of a header's cells. Without a transform, each column is matched to a record field
 * (planColumns); columns that fill none are dropped and listed in `rules.ignoredColumns`. With a
 * transform, the row keeps every column under its trimmed name. A bad header is fatal.
 */
export function headerToFields(file: string, rules: RowRules, header: unknown[], requireFields = false): string[] {
  const names = headerNames(file, header, rules);
  if (rules.transform !== undefined) {
    const seen = new Set<string>();
    return names.map((cell, position) => {
      const name = cell.trim();
      if (name === '') return `${UNNAMED_PREFIX}${position}`;
      if (seen.has(name)) {
        throw new InputError(`${file}:${headerLine(rules)}: the header names the column "${name}" twice`);
      }
      seen.add(name);
      return name === '__proto__' ? PROTO_COLUMN_KEY : name;
    });
  }
  try {
    const plan = planColumns(names, rules.columns, requireFields);
    for (const name of plan.ignored) rules.ignoredColumns.add(name);
    // An ignored column is still read, not dropped by csv-parse: its cells count towards the row's
    // size and its line breaks towards the line numbers. The normaliser skips it by its key.
    return plan.keys.map((key, position) =>
      key === false ? `${IGNORED_PREFIX}${position}` : key.charCodeAt(0) !== 0 ? key : `${UNNAMED_PREFIX}${position}`,
    );
  } catch (error) {
    if (!(error instanceof HeaderError)) throw error;
    const only = names.map((name) => name.trim()).filter((name) => name !== '');
    // Under a code page a UTF-16 mark is text: ÿþ or þÿ before the first name.
    const marked = /^(\u00ff\u00fe|\u00fe\u00ff)/.test(names[0] ?? '');
    // Excel's export for another locale's separator starts with a line `sep=;`, which is no header.
    const excelSeparatorLine = /^sep=.?$/i.test((names[0] ?? '').trim());
    const hint = excelSeparatorLine
      ? `; the first line is Excel's "sep=" line, not a header: skip it with --skip-lines 1 (and pass --delimiter if it names a separator other than the header's)`
      : marked
        ? '; the file starts with a UTF-16 byte-order mark: leave out --encoding, and it is read as UTF-16'
        : names.some((name) => name.includes('\u0000'))
          ? '; NUL bytes between the letters: is the file UTF-16 without a byte-order mark (--encoding utf-16le)?'
          : only.length === 1 && /[;\t|]/.test(only[0] as string) && !error.message.includes('--delimiter')
            ? '; is the delimiter right (--delimiter)?'
            : '';
    throw new InputError(`${file}:${headerLine(rules)}: ${error.message}${hint}`);
  }
}

/**
 * The delimiter of a CSV file, from its header line: `--delimiter` when given; else a comma if the
 * header has one, else `;` or a tab if it has that (spreadsheets in many locales save with `;`).
 */
export function detectDelimiter(headerLine: string): string {
  let inQuote = false;
  const counts = new Map<string, number>();
  for (const ch of headerLine) {
    if (ch === '"') inQuote = !inQuote;
    else if (!inQuote && (ch === ',' || ch === ';' || ch === '\t')) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  }
  if (counts.has(',')) return ',';
  if ((counts.get(';') ?? 0) >= (counts.get('\t') ?? 0) && counts.has(';')) return ';';
  return counts.has('\t') ? '\t' : ',';
}

function show(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** A raw row for `--transform`: cells by header name; a column with no name must be empty. */
function rawRow(cells: Record<string, string>): { row: Record<string, string>; issues: RowIssue[] } {
  const row: Record<string, string> = {};
  const issues: RowIssue[] = [];
  for (const key in cells) {
    const value = cells[key] as string;
    if (key.startsWith(UNNAMED_PREFIX)) {
      if (value.trim() !== '')
        issues.push({ field: '', message: `a column with no name in the header holds ${show(value)}` });
      continue;
    }
    const name = key === PROTO_COLUMN_KEY ? '__proto__' : key;
    Object.defineProperty(row, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { row, issues };
}

/**
 * One parsed CSV record (csv-parse's object, keyed by field, cells as latin1 text) as a row.
 * `endLine` is the line the record ended on; a quoted cell may span lines, and the row starts
 * that many line breaks earlier. The cells are decoded in place: the object is ours.
 * Undefined for a row of blank cells that is no record (see {@link isBlank}).
 */
function toRow(
  file: string,
  rules: RowRules,
  encoding: TextEncoding,
  cells: Record<string, string>,
  endLine: number,
): SourceRow | undefined {
  let issues: RowIssue[] | undefined;
  let breaks = 0;
  let size = 0;
  // for...in rather than Object.entries: no pair array per cell.
  for (const field in cells) {
    const cell = cells[field] as string;
    // latin1: one char per byte. Cells and separators, without quotes: the row's size in bytes, near enough.
    size += cell.length + 1;
    if (!SPECIAL.test(cell)) continue;
    breaks += lineBreaks(cell);
    if (!NON_ASCII.test(cell)) continue;
    const text = encoding.decodeCell(cell);
    if (text !== undefined) cells[field] = text;
    else {
      issues ??= [];
      issues.push({ field: field === PROTO_COLUMN_KEY ? '__proto__' : field, message: invalidIn(encoding) });
    }
  }
  const line = endLine - breaks;
  if (size > MAX_ROW_BYTES) {
    return {
      kind: 'reject',
      file,
      line,
      issues: [{ field: '', message: `row is longer than ${MAX_ROW_BYTES} bytes` }],
    };
  }
  // A cell that is not valid UTF-8 has its issue already; it is not converted as well.
  if (issues !== undefined)
    for (const issue of issues) delete cells[issue.field === '__proto__' ? PROTO_COLUMN_KEY : issue.field];
  if (rules.transform !== undefined) {
    const raw = rawRow(cells);
    const all = [...(issues ?? []), ...raw.issues];
    if (all.length > 0) return { kind: 'reject', file, line, issues: all, source: raw.row };
    return { kind: 'record', file, line, record: raw.row };
  }
  if (issues === undefined && isBlank(cells) && !setsFillEveryRequiredField(rules)) return undefined;
  const converted = rules.normalize(cells);
  if (issues !== undefined || converted.issues.length > 0) {
    return { kind: 'reject', file, line, issues: [...(issues ?? []), ...converted.issues], record: converted.record };
  }
  return { kind: 'record', file, line, record: converted.record };
}

/**
 * A row of empty or blank cells (`;;;;`), ignored columns included: what a spreadsheet writes for a
 * row that was formatted and left empty. Judged on the decoded cells. Such a row is skipped like
 * an empty line instead of being an invalid row; which rows are valid, and so how the checkpoint
 * numbers them, does not change: a blank row that `--set` fills completely is still a record, and
 * a transform still sees every row.
 */
function isBlank(cells: Record<string, string>): boolean {
  for (const key in cells) if ((cells[key] as string).trim() !== '') return false;
  return true;
}

/** Whether `--set` gives every required field, which makes even a blank row a valid record. */
function setsFillEveryRequiredField(rules: RowRules): boolean {
  return REQUIRED_FIELDS.every((field) => rules.columns.sets.has(field));
}

/**
 * Streams a CSV file as arrays of rows, one array per chunk of input, so that a consumer pays for
 * one `await` per chunk rather than per row. A malformed row (wrong cell count, bad quoting, a row
 * over {@link MAX_ROW_BYTES}) becomes a rejection with the line it starts on and the parser's
 * reason, and parsing goes on from the next line (see {@link ResyncingCsvParser}). Cells are read
 * as latin1 and then decoded in the file's encoding (encoding.ts; strict UTF-8 by default), so
 * that invalid bytes are reported per field rather than silently replaced (csv-parse's buffer mode
 * cannot report skipped rows).
 */
export async function* readCsvChunks(
  source: AsyncIterable<Buffer | string>,
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<SourceRow[]> {
  let rows: SourceRow[] = [];
  /** The row of the last record read; undefined for a blank row, which is no row. */
  let lastRecordRow: SourceRow | undefined;
  const rules = options.rules ?? rowRules();
  // A UTF-16 byte-order mark may make the file UTF-16 once its first bytes are read.
  let encoding = rules.encoding ?? UTF8;
  const bytesOptions = {
    ...csvBytesOptions(encoding),
    onUtf16: (order: Utf16) => {
      encoding = utf16Encoding(order);
    },
  };
  // The parser reads bytes as latin1: a delimiter is looked for as its bytes in the file's encoding.
  const delimiter = options.delimiter === undefined ? undefined : encoding.parserText(options.delimiter);
  if (delimiter === '')
    throw new InputError(
      `${file}: --delimiter ${show(options.delimiter ?? '')} is not a character of ${encoding.name}`,
    );
  const parser = new ResyncingCsvParser(
    file,
    {
      header: (header) => headerToFields(file, rules, header, options.requireFields),
      record: (cells, endLine) => {
        const row = toRow(file, rules, encoding, cells, endLine);
        lastRecordRow = row;
        if (row !== undefined) rows.push(row);
      },
      reject: (line, field, message, raw) =>
        rows.push({ kind: 'reject', file, line, issues: [{ field, message }], ...(raw !== undefined && { raw }) }),
    },
    delimiter,
    encoding.show,
    headerLine(rules),
  );
  const take = (): SourceRow[] => {
    const out = rows;
    rows = [];
    return out;
  };
  // Whether the bytes read so far end with a line break (LF, or CR; encodings here keep both as one byte).
  let endsWithLineBreak = true;
  try {
    // Each chunk is parsed before the next is read: memory holds one chunk's rows, whatever the input.
    const read = csvBytes(source, file, bytesOptions);
    const skip = rules.skipLines ?? 0;
    for await (const bytes of skip > 0 ? afterLines(read, skip, file) : read) {
      if (bytes.length > 0) endsWithLineBreak = isLineBreakByte(bytes[bytes.length - 1] as number);
      await parser.write(bytes);
      if (parser.failure !== undefined) break;
      if (rows.length > 0) yield take();
    }
    if (parser.failure === undefined) {
      // A row with no line break after it can only end at the end of the input: it comes out here.
      // It must run to that end: a row emitted here may have ended with its line break, and only
      // padding, which is no row, came after it.
      await parser.end();
      if (
        !endsWithLineBreak &&
        parser.lastRecordReachedEnd &&
        lastRecordRow !== undefined &&
        rows.at(-1) === lastRecordRow
      )
        lastRowUnterminated(rows, rules);
    }
    if (rows.length > 0) yield take();
    if (parser.failure !== undefined) throw parser.failure;
  } catch (error) {
    throw toInputError(file, error, headerLine(rules) - 1);
  } finally {
    // Stopping early (Ctrl-C, a fatal error elsewhere): for-await has closed the source already.
    parser.destroy();
  }
}

function isLineBreakByte(byte: number): boolean {
  return byte === 0x0a || byte === 0x0d;
}

/**
 * The input's last row, which has no line break after it. A producer killed mid-write leaves such a
 * row, cut anywhere (`1234.56` as `12`), and it may still read as valid; so may a complete row of a
 * file saved without a final line break, which is common. It is noted for the run's summary, or,
 * with `--require-final-newline`, made invalid.
 */
function lastRowUnterminated(rows: SourceRow[], rules: RowRules): void {
  const row = rows[rows.length - 1] as SourceRow;
  if (row.kind === 'reject') return;
  rules.rowsWithoutFinalNewline.push({ file: row.file, line: row.line });
  if (row.kind !== 'record' || rules.requireFinalNewline !== true) return;
  const issue = {
    field: '',
    message:
      'the input ends inside this row, with no line break after it: it may have been cut short (--require-final-newline)',
  };
  rows[rows.length - 1] = {
    kind: 'reject',
    file: row.file,
    line: row.line,
    issues: [issue],
    // A transform has not seen the row: it is shown as read.
    ...(rules.transform === undefined ? { record: row.record } : { source: row.record }),
  };
}

/** `skipped`: lines before the parser's first, which csv-parse's own line count leaves out. */
function toInputError(file: string, error: unknown, skipped: number): InputError {
  if (error instanceof InputError) return error;
  if (error instanceof Error && error.cause instanceof InputError) return error.cause;
  if (error instanceof CsvError)
    return new InputError(`${file}:${Number(error.lines ?? 1) + skipped}: ${error.message}`);
  return new InputError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
}
