import { type CsvError, type Parser, parse } from 'csv-parse';
import { type TextEncoding, UTF8 } from './encoding.js';
import { InputError, MAX_ROW_BYTES } from './types.js';

const LF = 0x0a;
const CR = 0x0d;

/** csv-parse reports these when a record has ended; its state is sound and it reads on. */
const RECORD_END_ERROR = /^CSV_RECORD_/;

export interface CsvRecordHandlers {
  /** Names the fields from the header row (after `--map`); throws an InputError for a bad header. */
  header: (cells: unknown[]) => string[];
  /** One record, keyed by field, cells as latin1 text; `endLine` is the line it ends on. */
  record: (cells: Record<string, string>, endLine: number) => void;
  /** A record that could not be read, by the line it starts on, with that line as read (`raw`) when known. */
  reject: (line: number, field: string, message: string, raw?: string) => void;
}

/**
 * Thrown from `on_skip` once a record is lost, which makes csv-parse stop parsing the bytes it was
 * given: a new parser reads them again from the lost record's next line anyway. Left to go on, the
 * lost parser (inside a quote, with `skip_records_with_error`) built an error for every quote that
 * followed in its bytes, each with a stack and copies of its state; a file whose every line opens a
 * quote cost that for each of its lines, once per line before it in the chunk: a 150 KB file took
 * minutes. One instance: it is never shown, and a stack is what made each error cost.
 */
const STOP_LOST_PARSER = new Error('stop: this parser lost its record');

/** A record csv-parse lost track of: it is rejected, and reading starts again on the line after `line`. */
interface LostRecord {
  line: number;
  /** Byte offset of its first line, in the current parser's input. */
  offset: number;
  field: string;
  message: string;
}

/**
 * csv-parse's reason without its line number: the reject carries the line the record starts on,
 * and csv-parse counts a CRLF inside a quoted cell as two lines.
 */
function describe(error: CsvError): string {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED')
    return 'Quote Not Closed: a quoted cell that opens on this line never closes';
  if (error.code === 'CSV_INVALID_CLOSING_QUOTE') {
    const found = /got ("[^"]*"|"")/.exec(error.message)?.[1] ?? 'a character';
    return `Invalid Closing Quote: a quoted cell that opens on this line is followed by ${found} instead of a comma or a line break`;
  }
  const lengths = /columns length is (\d+), got (\d+)/.exec(error.message);
  if (error.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' && lengths !== null) {
    const [, header, row] = lengths;
    return `Invalid Record Length: the header has ${header} columns, this row ${row}`;
  }
  return error.message.replace(/ (at|on) line \d+/g, '');
}

/**
 * A row with one cell more than the header, the last one empty: the row ends with a separator the
 * header does not have, as some bank exports write every row. Said outright, since it looks
 * like a row with one cell too many.
 */
function trailingSeparatorHint(message: string, raw: string | undefined, delimiter: string): string {
  const lengths = /the header has (\d+) columns, this row (\d+)$/.exec(message);
  if (lengths === null || Number(lengths[2]) !== Number(lengths[1]) + 1) return '';
  const line = (raw ?? '').replace(/[\r\n]+$/, '').trimEnd();
  return line.endsWith(delimiter)
    ? ` (it ends with a ${JSON.stringify(delimiter)} the header does not have: give the header line one at its end too)`
    : '';
}

/** CRLF pairs in a cell (only a quoted cell holds one). */
function crlfs(cell: string): number {
  let count = 0;
  for (let at = cell.indexOf('\r\n'); at !== -1; at = cell.indexOf('\r\n', at + 2)) count++;
  return count;
}

/** Longest raw line copied into a rejects entry, in bytes: a runaway row must not make a huge line. */
const MAX_RAW_BYTES = 4096;

/** How bytes are shown as text (the file's encoding, invalid sequences replaced). */
type ShowBytes = TextEncoding['show'];

/** A broken row's first line as text, without its line break, for the rejects file. */
function rawText(bytes: Buffer, show: ShowBytes): string {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === LF || bytes[end - 1] === CR)) end--;
  const firstBreak = bytes.subarray(0, end).findIndex((byte) => byte === LF || byte === CR);
  if (firstBreak !== -1) end = firstBreak;
  const shown = show(bytes.subarray(0, Math.min(end, MAX_RAW_BYTES)));
  return end > MAX_RAW_BYTES ? `${shown}…` : shown;
}

/**
 * Where the line starting at `from` ends: the offset after its line break (LF, CRLF or a lone CR),
 * -1 when the bytes end first, or -2 when they end on a CR that an LF may follow.
 */
function afterLineBreak(bytes: Buffer, from: number): number {
  const lf = bytes.indexOf(LF, from);
  const cr = bytes.indexOf(CR, from);
  if (cr === -1 || (lf !== -1 && lf < cr)) return lf === -1 ? -1 : lf + 1;
  if (cr === bytes.length - 1) return -2;
  return bytes[cr + 1] === LF ? cr + 2 : cr + 1;
}

/**
 * csv-parse, restarted after a record it cannot read. With `skip_records_with_error`, csv-parse
 * reports an invalid closing quote (`"bad"quote`) and then stays inside the quote, so one stray
 * quote swallowed every later row up to the next quote in the file. Here, a record that breaks
 * mid-way (a quote error), that never ends (a quote left open to the end of the input, or a row
 * over twice {@link MAX_ROW_BYTES}), or that spans lines and has the wrong number of cells is
 * rejected by the line it starts on, and a new parser reads again from the next line: every line
 * after a broken one is read as a row of its own, never silently skipped.
 *
 * The bytes since the last complete record are kept for that restart; the runaway limit bounds them.
 * Line numbers come from the parser's running counters (`parser.info`), read as each record is
 * emitted: `info: true` and `raw: true` copy and convert every row, which cost as much as parsing.
 */
export class ResyncingCsvParser {
  /** The first error that ends the input (a bad header, a parser failure). */
  failure: unknown;
  #fields: string[] | undefined;
  #parser: Parser;
  /** Settles once the current parser flows: from then on each record is emitted while it is parsed. */
  #flowing: Promise<void> = Promise.resolve();
  /** Lines before the current parser's first line: a restarted parser counts from 1 again. */
  #lineOffset = 0;
  /** Bytes given to the current parser from `pendingStart` on, kept until a record ends past them. */
  #pending: Buffer[] = [];
  #pendingStart = 0;
  #written = 0;
  /** Where the last complete record (or the header) ended: byte offset and absolute line. */
  #rowEnd = 0;
  #rowEndLine = 0;
  /**
   * CRLFs inside the quoted cells the current parser has read: csv-parse counts each as two lines,
   * which every line after it would carry. Subtracted from its counter wherever a line is made.
   */
  #crlfsInCells = 0;
  #lost: LostRecord | undefined;
  /** After a lost record whose first line had not ended yet: drop bytes up to its line break. */
  #discarding: 'line' | 'cr' | undefined;
  /** Where the current parser's last record ended (its byte offset), -1 before its first. */
  #lastRecordEnd = -1;

  readonly #file: string;
  readonly #handlers: CsvRecordHandlers;
  /** The cell separator: `,` unless the header or `--delimiter` says otherwise. */
  readonly #delimiter: string;
  readonly #show: ShowBytes;

  /** `firstLine`: the line of the file the first byte given is on (past lines a caller skipped). */
  constructor(file: string, handlers: CsvRecordHandlers, delimiter = ',', show: ShowBytes = UTF8.show, firstLine = 1) {
    this.#lineOffset = firstLine - 1;
    this.#file = file;
    this.#handlers = handlers;
    this.#delimiter = delimiter;
    this.#show = show;
    this.#parser = this.#startParser();
  }

  /** Parses one chunk; records and rejects go to the handlers before the promise settles. */
  async write(bytes: Buffer): Promise<void> {
    // An empty chunk says nothing; taken for the next one, it would end a line-break state early.
    if (bytes.length === 0) return;
    let input = this.#discarding === undefined ? bytes : this.#discard(bytes);
    while (input !== undefined && input.length > 0 && this.failure === undefined) {
      this.#pending.push(input);
      this.#written += input.length;
      await this.#feed(input);
      if (this.#lost === undefined && this.#written - this.#rowEnd > 2 * MAX_ROW_BYTES + input.length) {
        const start = this.#nextRecordStart();
        this.#lost = {
          ...start,
          field: '',
          message: `row is longer than ${MAX_ROW_BYTES} bytes (an unbalanced quote?); reading resumed on the next line`,
        };
      }
      if (this.#lost === undefined) {
        this.#trim();
        return;
      }
      input = this.#restart();
    }
  }

  /** Ends the input: a quote still open is a lost record too, and the lines after it are read again. */
  async end(): Promise<void> {
    while (this.failure === undefined && this.#discarding === undefined) {
      await this.#flowing;
      await new Promise<void>((resolve) => {
        this.#parser.once('end', resolve);
        this.#parser.once('error', () => resolve());
        this.#parser.end();
      });
      if (this.#lost === undefined) return;
      const rest = this.#restart();
      if (rest !== undefined) await this.write(rest);
    }
  }

  destroy(): void {
    this.#parser.destroy();
  }

  /**
   * After {@link end}: whether the last record ran to the end of the input. Not so when a line of
   * padding (spaces, a DOS end-of-file byte) follows its line break, though the input then ends
   * with no line break either; csv-parse may emit such a record only at the end, with the padding.
   */
  get lastRecordReachedEnd(): boolean {
    return this.#lastRecordEnd === this.#written;
  }

  #startParser(): Parser {
    let emitted = 0;
    /** csv-parse's line counter after the last record it emitted (or the header). */
    let linesBefore = 0;
    const parser: Parser = parse({
      bom: false, // the caller strips it
      encoding: 'latin1',
      delimiter: this.#delimiter,
      // Every line break ends a record, whichever the first line used: a file assembled from pieces
      // (`cat header.csv rows.csv`) has a CRLF header and LF rows. csv-parse otherwise takes the
      // first one it meets for the whole file. CRLF comes first so it is one break, not two.
      record_delimiter: ['\r\n', '\n', '\r'],
      skip_empty_lines: true,
      skip_records_with_error: true,
      columns:
        this.#fields ??
        ((header: unknown[]) => {
          const fields = this.#handlers.header(header);
          this.#fields = fields;
          for (const cell of header) this.#crlfsInCells += crlfs(String(cell));
          linesBefore = parser.info.lines;
          this.#rowEnd = parser.info.bytes;
          this.#rowEndLine = this.#line(parser);
          return fields;
        }),
      on_skip: (error: CsvError | undefined) => {
        if (parser !== this.#parser || this.#lost !== undefined) throw STOP_LOST_PARSER;
        if (error === undefined) return;
        this.#onSkip(error);
        if (this.#lost !== undefined) throw STOP_LOST_PARSER;
      },
    });
    parser.on('data', (cells: Record<string, string>) => {
      if (parser !== this.#parser || this.#lost !== undefined) return;
      const { info } = parser;
      // The counters describe this record only while the parser has not moved past it, which holds
      // as long as records are emitted as they are parsed. If a future stream ever buffered them,
      // the counts would disagree: stop rather than report wrong line numbers.
      if (info.records !== ++emitted) {
        this.failure ??= new Error('csv-parse emitted a record after parsing past it; line numbers would be wrong');
        return;
      }
      // Only a record that spans lines has line breaks in its cells.
      if (info.lines - linesBefore > 1) for (const key in cells) this.#crlfsInCells += crlfs(cells[key] as string);
      linesBefore = info.lines;
      this.#rowEnd = info.bytes;
      this.#lastRecordEnd = info.bytes;
      this.#rowEndLine = this.#line(parser);
      this.#handlers.record(cells, this.#rowEndLine);
    });
    parser.on('error', (error) => {
      if (parser === this.#parser && error !== STOP_LOST_PARSER) this.failure ??= error;
    });
    // The 'data' listener makes the stream flow from the next tick on; records written before then
    // would be buffered and emitted after the counters have moved past them.
    this.#flowing = new Promise<void>((resolve) => setImmediate(resolve));
    return parser;
  }

  async #feed(bytes: Buffer): Promise<void> {
    await this.#flowing;
    const parser = this.#parser;
    // The callback's error comes before the 'error' event, so it is kept here too.
    return new Promise<void>((resolve) =>
      parser.write(bytes, (error) => {
        if (error && error !== STOP_LOST_PARSER) this.failure ??= error;
        resolve();
      }),
    );
  }

  #onSkip(error: CsvError): void {
    const start = this.#nextRecordStart();
    const endLine = this.#line(this.#parser);
    // A wrong cell count concerns the row as a whole; csv-parse's `column` there is just where it stopped.
    const recordEnd = RECORD_END_ERROR.test(error.code);
    const field = !recordEnd && typeof error.column === 'string' ? error.column : '';
    if (recordEnd && endLine === start.line) {
      // A line of spaces or tabs (a fixed-width export's padding, a DOS end-of-file byte) is an
      // empty line, not a row with too few cells.
      if (!this.#onlyPadding(start.offset, this.#parser.info.bytes)) {
        const raw = this.#rawLine(start.offset, this.#parser.info.bytes);
        const message = describe(error);
        this.#handlers.reject(start.line, field, message + trailingSeparatorHint(message, raw, this.#delimiter), raw);
      }
      this.#rowEnd = this.#parser.info.bytes;
      this.#rowEndLine = endLine;
      return;
    }
    // The record broke mid-way, or it spans lines and is malformed: its quoted cell most likely
    // swallowed the lines after its first, which are read again.
    this.#lost = { ...start, field, message: `${describe(error)}; reading resumed on the next line` };
  }

  /** Whether the pending bytes from `from` to `to` are only spaces, tabs, line breaks, form feeds or DOS's end-of-file byte (0x1A). */
  #onlyPadding(from: number, to: number): boolean {
    let base = this.#pendingStart;
    for (const part of this.#pending) {
      const end = Math.min(to - base, part.length);
      for (let i = Math.max(0, from - base); i < end; i++) {
        const byte = part[i];
        if (byte !== 0x20 && byte !== 0x09 && byte !== CR && byte !== LF && byte !== 0x0c && byte !== 0x1a)
          return false;
      }
      base += part.length;
      if (base >= to) break;
    }
    return true;
  }

  /** The absolute line `parser` has read up to, each CRLF counted once. */
  #line(parser: Parser): number {
    return this.#lineOffset + parser.info.lines - this.#crlfsInCells;
  }

  /** The line and byte offset where the record after the last complete one starts, past empty lines. */
  #nextRecordStart(): { line: number; offset: number } {
    let line = this.#rowEndLine + 1;
    let offset = this.#rowEnd;
    for (let byte = this.#at(offset); byte === LF || byte === CR; byte = this.#at(offset)) {
      offset++;
      if (byte === LF || this.#at(offset) !== LF) line++;
    }
    return { line, offset };
  }

  /**
   * The pending bytes from `from` to `to` (offsets in the current parser's input), as text. Only
   * what a rejects line shows is copied: after a restart the pending bytes can be megabytes, and
   * copying them for every rejected row made a hostile file cost quadratic time.
   */
  #rawLine(from: number, to: number): string | undefined {
    if (from < this.#pendingStart) return undefined;
    const end = Math.min(to, from + MAX_RAW_BYTES + 2);
    const parts: Buffer[] = [];
    let base = this.#pendingStart;
    for (const part of this.#pending) {
      const partEnd = base + part.length;
      if (partEnd > from && base < end)
        parts.push(part.subarray(Math.max(from - base, 0), Math.min(end - base, part.length)));
      if (partEnd >= end) break;
      base = partEnd;
    }
    return rawText(Buffer.concat(parts), this.#show);
  }

  /** The byte at `offset` of the current parser's input, if it is still pending. */
  #at(offset: number): number | undefined {
    let base = this.#pendingStart;
    for (const part of this.#pending) {
      if (offset < base + part.length) return offset >= base ? part[offset - base] : undefined;
      base += part.length;
    }
    return undefined;
  }

  /** Drops the bytes before the end of the last complete record: no restart goes back that far. */
  #trim(): void {
    let drop = this.#rowEnd - this.#pendingStart;
    while (drop > 0 && this.#pending.length > 0) {
      const first = this.#pending[0] as Buffer;
      if (drop >= first.length) {
        this.#pending.shift();
        this.#pendingStart += first.length;
        drop -= first.length;
      } else {
        this.#pending[0] = first.subarray(drop);
        this.#pendingStart += drop;
        drop = 0;
      }
    }
  }

  /**
   * Rejects the lost record by its first line and starts a new parser on the line after it.
   * Returns the bytes after that line for the new parser, or undefined when the line has not ended yet.
   */
  #restart(): Buffer | undefined {
    const lost = this.#lost as LostRecord;
    if (this.#fields === undefined) {
      const reason = lost.message.replace(/; reading resumed on the next line$/, '');
      this.failure ??= new InputError(`${this.#file}:${lost.line}: the header row cannot be read: ${reason}`);
      return undefined;
    }
    // Most often one part, the rest of a chunk a restart gave: read in place, not copied per lost row.
    const buffered = this.#pending.length === 1 ? (this.#pending[0] as Buffer) : Buffer.concat(this.#pending);
    const after = afterLineBreak(buffered, lost.offset - this.#pendingStart);
    const lineEnd = after < 0 ? buffered.length : after;
    this.#handlers.reject(
      lost.line,
      lost.field,
      lost.message,
      rawText(buffered.subarray(lost.offset - this.#pendingStart, lineEnd), this.#show),
    );
    this.#parser.destroy();
    this.#lost = undefined;
    this.#lineOffset = lost.line;
    this.#pending = [];
    this.#pendingStart = 0;
    this.#written = 0;
    this.#rowEnd = 0;
    this.#lastRecordEnd = -1;
    this.#rowEndLine = lost.line;
    this.#crlfsInCells = 0;
    this.#parser = this.#startParser();
    if (after === -1) this.#discarding = 'line';
    else if (after === -2) this.#discarding = 'cr';
    else return buffered.subarray(after);
    return undefined;
  }

  /** Drops the rest of a lost record's first line; returns what follows it, if this chunk holds it. */
  #discard(bytes: Buffer): Buffer | undefined {
    if (this.#discarding === 'cr') {
      this.#discarding = undefined;
      return bytes[0] === LF ? bytes.subarray(1) : bytes;
    }
    const after = afterLineBreak(bytes, 0);
    if (after === -1) return undefined;
    if (after === -2) {
      this.#discarding = 'cr';
      return undefined;
    }
    this.#discarding = undefined;
    return bytes.subarray(after);
  }
}
