import { fstatSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { access, constants, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import { UsageError } from '../exit-codes.js';
import { byLowerCase } from '../normalize/columns.js';
import type { RecordField } from '../normalize/fields.js';
import { renameKeys } from './convert.js';
import { detectDelimiter, readCsvChunks } from './csv.js';
import { utf16HeadAsUtf8, utf16Of } from './csv-bytes.js';
import { csvBytesOptions, UTF8 } from './encoding.js';
import { assertUnchanged, type FileIdentity, InputChangedError, identityOf, openUnchanged } from './file-identity.js';
import { readJsonChunks } from './json.js';
import { readJsonlChunks } from './jsonl.js';
import { transformed } from './prepare.js';
import { headAfterLines } from './skip-lines.js';
import { InputError, type InputFormat, type RowRules, type SourceRow } from './types.js';

/** One input named on the command line: a path or `-` for stdin, with its resolved format. */
export interface InputSpec {
  path: string;
  /** The name used in rejects and messages: the path as given, or `<stdin>`. */
  name: string;
  format: InputFormat;
  /** Bytes on disk, or undefined for stdin. */
  size: number | undefined;
  /** CSV only: the cell separator, from `--delimiter`, the extension (`.tsv`) or the header line. */
  delimiter?: string;
  /** The file as it was checked, before anything was read; undefined for stdin. Every read compares. */
  identity?: FileIdentity;
}

/** Enough of a file to hold its header line. */
const HEADER_PEEK_BYTES = 64 * 1024;

/**
 * Checks each CSV file's header before anything is sent: the delimiter (from `--delimiter`, or
 * detected from the header line), `--map` columns that exist, and a column for every required
 * field. A problem is an input error (exit 2) naming the file, the missing columns and the columns
 * found. Stdin is checked when its header arrives; nothing has been sent by then either.
 */
export async function checkCsvHeaders(
  specs: InputSpec[],
  rules: RowRules,
  delimiter: string | undefined,
): Promise<void> {
  for (const spec of specs) {
    if (spec.format !== 'csv') continue;
    if (spec.path === '-') {
      spec.delimiter = delimiter ?? spec.delimiter ?? ',';
      continue;
    }
    const file = await openSpec(spec).catch((error: unknown) => {
      throw error instanceof InputError ? new UsageError(error.message) : error;
    });
    let head: Buffer;
    try {
      const buffer = Buffer.alloc(HEADER_PEEK_BYTES);
      const { bytesRead } = await file.read(buffer, 0, HEADER_PEEK_BYTES, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
    // A UTF-16 file's header is read from its head as UTF-8, as the run will read the file.
    const utf16 = utf16Of(head, csvBytesOptions(rules.encoding ?? UTF8));
    if (utf16 !== undefined) head = utf16HeadAsUtf8(head, utf16);
    const header = headAfterLines(head, rules.skipLines ?? 0);
    spec.delimiter = delimiter ?? spec.delimiter ?? detectDelimiter(firstLine(header).toString('utf8'));
    // The whole head goes to the reader, which finds the header as the run will: past empty lines,
    // and with a quoted line break in a column name.
    // The head ends where the peek ended, not where the file does: what its last row looks like is
    // no news for the run, which reads the file again.
    const headRules = { ...rules, rowsWithoutFinalNewline: [] };
    const chunks = readCsvChunks(once(head), spec.name, {
      // Already UTF-8: read as such, whatever the file was.
      rules: utf16 === undefined ? headRules : { ...headRules, encoding: UTF8 },
      delimiter: spec.delimiter,
      requireFields: true,
    });
    try {
      await chunks.next();
    } catch (error) {
      if (error instanceof InputError) throw new UsageError(error.message);
      throw error;
    } finally {
      await chunks.return(undefined);
    }
  }
}

const EXTENSIONS: Record<string, InputFormat> = {
  '.csv': 'csv',
  '.tsv': 'csv',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'json',
};

/** `--format`: `tsv` is CSV separated by tabs. */
export function parseFormat(value: string): { format: InputFormat; delimiter?: string } {
  if (value === 'csv' || value === 'jsonl' || value === 'json') return { format: value };
  if (value === 'ndjson') return { format: 'jsonl' };
  if (value === 'tsv') return { format: 'csv', delimiter: '\t' };
  throw new UsageError(`unknown format "${value}": use csv, tsv, jsonl or json`);
}

/** Workbook formats of spreadsheet programs: binary files that no reader here understands. */
const SPREADSHEETS = new Set(['.xlsx', '.xlsm', '.xls', '.ods', '.numbers']);

/** A file named `.tsv` is tab-separated, unless `--format` or `--delimiter` says otherwise. */
function isTsv(path: string): boolean {
  return extname(path).toLowerCase() === '.tsv';
}

/**
 * Checks every input before anything is sent: known format, file exists and is readable, and no
 * file is named twice (however spelled or linked). Each problem is a one-line usage error (exit 2).
 */
export async function resolveInputs(
  paths: string[],
  given: { format: InputFormat; delimiter?: string } | undefined,
): Promise<InputSpec[]> {
  const format = given?.format;
  if (paths.length === 0) throw new UsageError('no input file given (use - for stdin)');
  if (paths.filter((path) => path === '-').length > 1) throw new UsageError('stdin (-) can be read only once');
  const specs: InputSpec[] = [];
  for (const path of paths) {
    const byExtension = EXTENSIONS[extname(path).toLowerCase()];
    const resolved = format ?? byExtension;
    if (path === '-') {
      if (resolved === undefined) throw new UsageError('reading stdin (-) needs --format csv|tsv|jsonl|json');
      specs.push({ path, name: '<stdin>', format: resolved, size: undefined, delimiter: given?.delimiter });
      continue;
    }
    if (resolved === undefined) {
      // A finance team's first try is often the workbook itself; --format csv would read its zip bytes.
      if (SPREADSHEETS.has(extname(path).toLowerCase())) {
        throw new UsageError(
          `${path}: a spreadsheet workbook, which push-api does not read: save the sheet as CSV (in Excel, "CSV UTF-8") and publish the .csv`,
        );
      }
      throw new UsageError(
        `${path}: unknown format "${extname(path) || '(no extension)'}": use --format csv|tsv|jsonl|json`,
      );
    }
    let identity: FileIdentity;
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new UsageError(`${path}: not a file`);
      await access(path, constants.R_OK);
      identity = identityOf(info);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        `${path}: ${code === 'ENOENT' ? 'no such file' : 'cannot read file'}${code ? ` (${code})` : ''}`,
      );
    }
    // One file named twice (`x.csv ./x.csv`, a link, globs that overlap) would have every record
    // sent twice, and this API has no idempotency key to catch it.
    const earlier = specs.find((spec) => spec.identity?.dev === identity.dev && spec.identity.ino === identity.ino);
    if (earlier !== undefined) {
      throw new UsageError(
        `${path} and ${earlier.path} are the same file; name each input once, or its records are sent twice`,
      );
    }
    const delimiter = given?.delimiter ?? (given === undefined && isTsv(path) ? '\t' : undefined);
    specs.push({ path, name: path, format: resolved, size: identity.size, delimiter, identity });
  }
  return specs;
}

/** The first line of `head` that is not empty, up to its line break (LF, CRLF or a lone CR). */
function firstLine(head: Buffer): Buffer {
  let start = 0;
  while (start < head.length && (head[start] === 0x0a || head[start] === 0x0d)) start++;
  let end = start;
  while (end < head.length && head[end] !== 0x0a && head[end] !== 0x0d) end++;
  return head.subarray(start, end);
}

async function* once(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

export interface ReadOptions {
  rules: RowRules;
  /** Counts raw bytes read, for progress by input size. */
  onBytes?: (bytes: number) => void;
  stdin?: Readable;
}

/**
 * Bytes read from a file at a time (Node's default is 64 KiB). Measured on a 1,000,000-row CSV
 * published with `--concurrency 8`: peak RSS about 158 MB with 64 KiB reads, 147 MB with 16 KiB,
 * 138 MB with 8 KiB, for about 15% of the speed. Parsing a 64 KiB read 8 KiB at a time did not
 * help (156 MB): it is the read buffers themselves, allocated outside V8's heap, that pile up while
 * the publisher waits for a free request slot, and smaller ones leave fewer and smaller holes.
 */
const FILE_READ_BYTES = 8 * 1024;

/**
 * Opens a file input as it was checked by {@link resolveInputs}: refused ({@link InputChangedError})
 * when the path now names another file, a FIFO put there included, which is never waited on.
 */
export function openSpec(spec: InputSpec): Promise<FileHandle> {
  return openUnchanged(spec.path, spec.name, spec.identity);
}

/** Byte chunks of one input. Iterating with for-await keeps backpressure and closes the file on early exit. */
async function* open(spec: InputSpec, options: ReadOptions): AsyncGenerator<Buffer> {
  if (spec.path !== '-') {
    yield* fileChunks(spec, options);
    return;
  }
  for await (const chunk of (options.stdin ?? process.stdin) as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    options.onBytes?.(bytes.length);
    yield bytes;
  }
}

/**
 * A file's chunks, each handed on only once the file is seen unchanged after it was read: an
 * exporter still writing the file, or rewriting it in place, must not have its half-written rows
 * sent, nor a run end "finished" on a file cut short. The check is an `fstat` of the open file per
 * chunk, a few microseconds, and one at the end that every byte seen at the start was read.
 */
async function* fileChunks(spec: InputSpec, options: ReadOptions): AsyncGenerator<Buffer> {
  const seen = spec.identity;
  const file = await openSpec(spec);
  try {
    const check = () => seen && assertUnchanged(spec.name, seen, fstatSync(file.fd));
    check();
    let read = 0;
    for await (const chunk of file.createReadStream({ highWaterMark: FILE_READ_BYTES, autoClose: false })) {
      check();
      const bytes = chunk as Buffer;
      read += bytes.length;
      options.onBytes?.(bytes.length);
      yield bytes;
    }
    check();
    if (seen && read !== seen.size) {
      throw new InputChangedError(spec.name, `${read} of its ${seen.size} bytes could be read`);
    }
  } finally {
    await file.close();
  }
}

/**
 * The rows of one input, in order, in bounded memory: an array of rows per chunk read, so that
 * reading costs one `await` per chunk rather than one per row at every stage.
 */
export function readInput(spec: InputSpec, options: ReadOptions): AsyncGenerator<SourceRow[]> {
  const source = open(spec, options);
  const { rules } = options;
  // No stage is added that has nothing to do: each async generator layer costs a few promises per
  // chunk, and the young generation grew by a third with one more layer on a million-row CSV.
  switch (spec.format) {
    case 'csv': {
      const rows = readCsvChunks(source, spec.name, { rules, delimiter: spec.delimiter, requireFields: true });
      return rules.transform === undefined ? rows : transformed(rows, rules);
    }
    case 'jsonl':
      return transformed(renamed(readJsonlChunks(source, spec.name), rules), rules);
    case 'json':
      return transformed(renamed(readJsonChunks(source, spec.name), rules), rules);
  }
}

/** `--map` for JSON input: the same renames as CSV columns, applied to each object's top-level keys. */
function renamed(chunks: AsyncGenerator<SourceRow[]>, rules: RowRules): AsyncGenerator<SourceRow[]> {
  // A transform gets the row as read; --map is refused with it.
  if (rules.columns.columnMap.size === 0 || rules.transform !== undefined) return chunks;
  return renaming(chunks, byLowerCase(rules.columns.columnMap));
}

async function* renaming(
  chunks: AsyncGenerator<SourceRow[]>,
  columnMap: Map<string, RecordField>,
): AsyncGenerator<SourceRow[]> {
  for await (const rows of chunks) yield rows.map((row) => renameKeys(row, columnMap));
}
