import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { convertCsvRow } from './convert.js';
import { decodeUtf8, InputError, MAX_ROW_BYTES, type RejectedRow, type RowIssue, type SourceRow } from './types.js';

export interface CsvReadOptions {
  /** CSV column -> record field, from `--map`. */
  columnMap: Map<string, string>;
}

/** Cells arrive as latin1 text: one char per byte, so the exact bytes can be recovered and decoded strictly. */
interface CsvChunk {
  record: Record<string, string>;
  info: { lines: number };
  raw: string;
}

function utf8FromLatin1(text: string): string | undefined {
  return decodeUtf8(Buffer.from(text, 'latin1'));
}

/** The header names the record fields, after `--map` renames; a header that cannot do so is fatal. */
function headerToFields(file: string, columnMap: Map<string, string>, header: unknown[]): string[] {
  const seen = new Set<string>();
  return header.map((cell, position) => {
    const name = utf8FromLatin1(String(cell));
    if (name === undefined) throw new InputError(`${file}:1: header column ${position + 1} is not valid UTF-8`);
    const column = name.trim();
    if (column === '') throw new InputError(`${file}:1: header column ${position + 1} has no name`);
    const field = columnMap.get(column) ?? column;
    if (seen.has(field)) throw new InputError(`${file}:1: header names the field "${field}" twice`);
    seen.add(field);
    return field;
  });
}

function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** The line a record starts on: `info.lines` is where it ends, and a quoted cell may span lines. */
function startLine(chunk: CsvChunk): number {
  // `raw` also holds the empty lines skipped before the record.
  const raw = chunk.raw.replace(/^(\r?\n)+/, '');
  const inner = countNewlines(raw) - (raw.endsWith('\n') ? 1 : 0);
  return chunk.info.lines - inner;
}

function toRow(file: string, chunk: CsvChunk): SourceRow {
  const line = startLine(chunk);
  const cells: Record<string, string> = {};
  const issues: RowIssue[] = [];
  for (const [field, cell] of Object.entries(chunk.record)) {
    const text = utf8FromLatin1(cell);
    if (text === undefined) issues.push({ field, message: 'not valid UTF-8' });
    else cells[field] = text;
  }
  const converted = convertCsvRow(cells);
  issues.push(...converted.issues);
  if (issues.length > 0) return { kind: 'reject', file, line, issues };
  return { kind: 'record', file, line, record: converted.record };
}

/**
 * Streams a CSV file as rows. A malformed row (wrong cell count, bad quoting, a row over
 * {@link MAX_ROW_BYTES}) becomes a rejection with its line and the parser's reason, and parsing
 * goes on: csv-parse's `skip_records_with_error` reports it through `on_skip` instead of failing.
 * Cells are read as latin1 and then decoded as strict UTF-8, so that invalid UTF-8 is reported per
 * field rather than silently replaced (csv-parse's buffer mode cannot report skipped rows).
 */
export async function* readCsv(
  source: AsyncIterable<Buffer | string>,
  file: string,
  options: CsvReadOptions,
): AsyncGenerator<SourceRow> {
  // Rows and skipped-row errors share one object stream, in order. The pump waits for it to
  // drain after each source chunk, so even a file of nothing but bad rows is read in bounded memory.
  const out = new PassThrough({ objectMode: true, highWaterMark: 256 });
  const parser = parse({
    bom: true,
    encoding: 'latin1',
    info: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_ROW_BYTES,
    columns: (header: unknown[]) => headerToFields(file, options.columnMap, header),
    on_skip: (error: CsvError | undefined) => {
      if (error === undefined) return;
      const line = typeof error.lines === 'number' ? error.lines : 0;
      // A wrong cell count concerns the row as a whole; csv-parse's `column` there is just where it stopped.
      const wholeRow =
        error.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' || error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH';
      const field = !wholeRow && typeof error.column === 'string' ? error.column : '';
      out.write({ kind: 'reject', file, line, issues: [{ field, message: error.message }] } satisfies RejectedRow);
    },
  });
  parser.on('data', (chunk: CsvChunk) => out.write(toRow(file, chunk)));
  parser.on('end', () => out.end());
  parser.on('error', (error) => out.destroy(error));
  const stop = new AbortController();
  const pump = async (): Promise<void> => {
    const { signal } = stop;
    for await (const bytes of source) {
      if (!parser.write(bytes)) await once(parser, 'drain', { signal });
      if (out.writableNeedDrain) await once(out, 'drain', { signal });
    }
    parser.end();
  };
  pump().catch((error: unknown) => {
    if (!stop.signal.aborted) out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    for await (const row of out) yield row as SourceRow;
  } catch (error) {
    throw toInputError(file, error);
  } finally {
    // Stopping early (Ctrl-C, a fatal error elsewhere) ends the pump, which closes the source.
    stop.abort();
    parser.destroy();
  }
}

function toInputError(file: string, error: unknown): InputError {
  if (error instanceof InputError) return error;
  if (error instanceof Error && error.cause instanceof InputError) return error.cause;
  if (error instanceof CsvError) return new InputError(`${file}:${String(error.lines ?? 1)}: ${error.message}`);
  return new InputError(`${file}: ${error instanceof Error ? error.message : String(error)}`);
}
