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
  info: { lines: number; bytes: number };
  raw: string;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Drops a leading UTF-8 BOM, even split over chunks. csv-parse's own `bom` option switches its
 * decoding to UTF-8 when it meets one, which breaks the latin1 round trip below: every non-ASCII
 * cell of a file saved with a BOM was then rejected as invalid UTF-8.
 */
async function* withoutBom(source: AsyncIterable<Buffer | string>): AsyncGenerator<Buffer> {
  let head: Buffer | undefined = Buffer.alloc(0);
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (head === undefined) {
      yield bytes;
      continue;
    }
    head = Buffer.concat([head, bytes]);
    if (head.length < UTF8_BOM.length && UTF8_BOM.subarray(0, head.length).equals(head)) continue;
    yield head.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? head.subarray(UTF8_BOM.length) : head;
    head = undefined;
  }
  if (head !== undefined && head.length > 0) yield head;
}

function utf8FromLatin1(text: string): string | undefined {
  return decodeUtf8(Buffer.from(text, 'latin1'));
}

/**
 * A byte of 0x80 or more, read as latin1. A row without one is ASCII, which is UTF-8 as it is: its
 * cells skip the round trip through a Buffer (two copies and a strict decode per cell, the largest
 * cost of reading a CSV), and only rows with other bytes are checked.
 */
const NON_ASCII = /[\u0080-\u00ff]/;

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
  // latin1: one char per byte, so this is the row's size in bytes.
  if (chunk.raw.length > MAX_ROW_BYTES) {
    return {
      kind: 'reject',
      file,
      line,
      issues: [{ field: '', message: `row is longer than ${MAX_ROW_BYTES} bytes` }],
    };
  }
  const cells: Record<string, string> = {};
  const issues: RowIssue[] = [];
  const ascii = !NON_ASCII.test(chunk.raw);
  // for...in rather than Object.entries: no pair array per cell (a tenth of the CLI's garbage).
  for (const field in chunk.record) {
    const cell = chunk.record[field] as string;
    const text = ascii ? cell : utf8FromLatin1(cell);
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
 * A row still open at twice that size (an unbalanced quote swallowing the file) is a fatal
 * InputError, after every row before it. Cells are read as latin1 and then decoded as strict UTF-8, so that invalid UTF-8 is reported per
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
    bom: false, // stripped by withoutBom
    encoding: 'latin1',
    info: true,
    raw: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    columns: (header: unknown[]) => headerToFields(file, options.columnMap, header),
    on_skip: (error: CsvError | undefined) => {
      if (error === undefined) return;
      const line = typeof error.lines === 'number' ? error.lines : 0;
      // A wrong cell count concerns the row as a whole; csv-parse's `column` there is just where it stopped.
      const wholeRow =
        error.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' || error.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH';
      const field = !wholeRow && typeof error.column === 'string' ? error.column : '';
      if (typeof error.bytes === 'number') rowEnd = error.bytes;
      out.write({ kind: 'reject', file, line, issues: [{ field, message: error.message }] } satisfies RejectedRow);
    },
  });
  // csv-parse's max_record_size is not used: with skip_records_with_error it abandons the rest of
  // the chunk, silently losing the rows after an over-long one. Rows over the limit are rejected in
  // toRow; a row still growing far past it (an unbalanced quote) stops reading, to bound memory.
  let rowEnd = 0;
  let written = 0;
  parser.on('data', (chunk: CsvChunk) => {
    rowEnd = chunk.info.bytes;
    out.write(toRow(file, chunk));
  });
  parser.on('end', () => out.end());
  parser.on('error', (error) => out.destroy(error));
  const stop = new AbortController();
  const pump = async (): Promise<void> => {
    const { signal } = stop;
    for await (const bytes of withoutBom(source)) {
      written += bytes.length;
      if (!parser.write(bytes)) await once(parser, 'drain', { signal });
      if (written - rowEnd > 2 * MAX_ROW_BYTES + bytes.length) {
        // Queued after the rows already parsed, so that those still reach the caller first.
        parser.destroy();
        out.end(
          new InputError(
            `${file}:${parser.info.lines}: a row is longer than ${MAX_ROW_BYTES} bytes (an unbalanced quote?); stopped reading`,
          ),
        );
        return;
      }
      if (out.writableNeedDrain) await once(out, 'drain', { signal });
    }
    parser.end();
  };
  pump().catch((error: unknown) => {
    if (!stop.signal.aborted) out.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    for await (const row of out) {
      if (row instanceof InputError) throw row;
      yield row as SourceRow;
    }
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
