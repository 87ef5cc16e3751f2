import { tooDeepField, tooDeepRow } from './depth.js';
import { hiddenJsonIssues, Utf16Check } from './json-record-text.js';
import { LineSplitter, type RawLine } from './lines.js';
import { decodeUtf8, MAX_ROW_BYTES, type SourceRow } from './types.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** One line as a row; undefined for a blank line, which is not a row. */
function toRow(raw: RawLine, file: string): SourceRow | undefined {
  const { line } = raw;
  if (raw.tooLong) {
    return {
      kind: 'reject',
      file,
      line,
      issues: [{ field: '', message: `line is longer than ${MAX_ROW_BYTES} bytes` }],
    };
  }
  const bytes = line === 1 && raw.bytes.subarray(0, 3).equals(UTF8_BOM) ? raw.bytes.subarray(3) : raw.bytes;
  const text = decodeUtf8(bytes);
  if (text === undefined)
    return { kind: 'reject', file, line, issues: [{ field: '', message: 'line is not valid UTF-8' }] };
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { kind: 'reject', file, line, issues: [{ field: '', message: `invalid JSON: ${reason}` }] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      kind: 'reject',
      file,
      line,
      issues: [{ field: '', message: `expected a JSON object, got ${describe(value)}` }],
    };
  }
  const record = value as Record<string, unknown>;
  const deep = tooDeepField(record);
  if (deep !== undefined) return tooDeepRow(file, line, deep);
  const hidden = hiddenJsonIssues(text);
  if (hidden !== undefined) return { kind: 'reject', file, line, issues: hidden };
  return { kind: 'record', file, line, record };
}

function toRows(lines: RawLine[], file: string): SourceRow[] {
  const rows: SourceRow[] = [];
  for (const raw of lines) {
    const row = toRow(raw, file);
    if (row !== undefined) rows.push(row);
  }
  return rows;
}

/**
 * Streams JSON Lines, one object per line, as arrays of rows (one per chunk of input, so that a
 * consumer awaits once per chunk, not per row). Blank lines are allowed and are not rows. A line
 * that is not valid UTF-8, not JSON, not an object, or longer than {@link MAX_ROW_BYTES} becomes a
 * rejection with its line number.
 */
export async function* readJsonlChunks(
  source: AsyncIterable<Buffer | string>,
  file: string,
): AsyncGenerator<SourceRow[]> {
  const splitter = new LineSplitter();
  const utf16 = new Utf16Check(file);
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    utf16.push(bytes);
    const rows = toRows(splitter.push(bytes), file);
    if (rows.length > 0) yield rows;
  }
  utf16.end();
  const rows = toRows(splitter.end(), file);
  if (rows.length > 0) yield rows;
}
