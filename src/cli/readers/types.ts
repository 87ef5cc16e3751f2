import type { ColumnRules } from '../normalize/columns.js';
import type { NormalizedRow } from '../normalize/record.js';
import type { RowTransform } from '../normalize/transform.js';
import type { TextEncoding } from './encoding.js';

/** One problem with one row: the field it concerns (empty for the row as a whole) and why. */
export interface RowIssue {
  field: string;
  message: string;
}

/** A row that parsed into a candidate record. `line` is the 1-based line where the row starts. */
export interface ParsedRow {
  kind: 'record';
  file: string;
  line: number;
  record: Record<string, unknown>;
}

/** A row that could not become a record; it goes to the rejects file, never silently dropped. */
export interface RejectedRow {
  kind: 'reject';
  file: string;
  line: number;
  issues: RowIssue[];
  /** What of the row could be read: it is checked too, so that every problem of the row is reported at once. */
  record?: Record<string, unknown>;
  /** The row as read, before `--transform`, for the rejects file only. */
  source?: Record<string, unknown>;
  /** The line as read, for a row the CSV parser could not split into cells. */
  raw?: string;
}

/** A row that `--transform` skipped by returning null: counted, neither sent nor invalid. */
export interface FilteredRow {
  kind: 'filtered';
  file: string;
  line: number;
}

export type SourceRow = ParsedRow | RejectedRow | FilteredRow;

export type InputFormat = 'csv' | 'jsonl' | 'json';

/** How rows become candidate records: shared by every reader of a run. */
export interface RowRules {
  /** The header's columns for CSV; see planColumns. */
  columns: ColumnRules;
  /** Normalises a candidate record (CSV cells by field, a JSON object, or a transform's result). */
  normalize: (input: Record<string, unknown>) => NormalizedRow;
  /** `--transform`: raw rows go through it first, and what it returns is normalised. */
  transform?: RowTransform;
  /** Columns left out, trimmed, added to as headers are read. */
  ignoredColumns: Set<string>;
  /** `--encoding`: how a CSV file's bytes are read as text. @default UTF-8, strictly */
  encoding?: TextEncoding;
  /**
   * `--require-final-newline`: a CSV row at the end of its input with no line break after it is
   * invalid. A producer killed mid-write leaves its last cell cut short (`1234.56` as `12`), and
   * such a row reads as valid; an input that ends with a line break cannot end inside a row.
   */
  requireFinalNewline?: boolean;
  /** `--skip-lines`: lines before a CSV file's header (an export's title lines), dropped unread. @default 0 */
  skipLines?: number;
  /** CSV rows that ended their input with no line break after them, added to as inputs end. */
  rowsWithoutFinalNewline: { file: string; line: number }[];
}

/** A fatal problem with a whole input (a broken header, an unreadable file): the run stops reading. */
export class InputError extends Error {
  override name = 'InputError';
}

/** Rows longer than this are rejected rather than buffered: it keeps memory bounded on hostile input. */
export const MAX_ROW_BYTES = 1024 * 1024;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 strictly, so invalid bytes become a named rejection instead of U+FFFD in the data. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
