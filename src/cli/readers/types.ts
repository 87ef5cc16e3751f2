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
}

export type SourceRow = ParsedRow | RejectedRow;

export type InputFormat = 'csv' | 'jsonl' | 'json';

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
