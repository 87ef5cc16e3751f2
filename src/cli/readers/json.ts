import { tooDeepField, tooDeepRow } from './depth.js';
import { hiddenJsonIssues, Utf16Check } from './json-record-text.js';
import { InputError, MAX_ROW_BYTES, type SourceRow } from './types.js';

type State = 'start' | 'key' | 'colon' | 'value' | 'skip' | 'array' | 'element' | 'after-array' | 'done';

/**
 * Splits a JSON document, `[record, …]` or `{"records": [record, …]}`, into its records while it
 * streams, so that a large .json file is read in bounded memory like CSV and JSONL. It tracks only
 * strings and bracket depth; each element is then handed to `JSON.parse`. A broken element is a
 * rejection with the line it starts on; a broken outer structure is fatal, since no later element
 * could be located with confidence.
 */
export class JsonRecordSplitter {
  #state: State = 'start';
  #inObject = false;
  #line = 1;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #parts: string[] = [];
  #size = 0;
  #tooLarge = false;
  #startLine = 0;
  #key = '';
  #sawRecords = false;
  /** Set after `"records":`, until its opening bracket. */
  #expectArray = false;

  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  push(text: string): SourceRow[] {
    const rows: SourceRow[] = [];
    let captureFrom = this.#state === 'element' || this.#state === 'key' ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i] as string;
      if (this.#state === 'element' || this.#state === 'skip' || this.#state === 'key') {
        if (this.#inString) {
          if (this.#escaped) this.#escaped = false;
          else if (ch === '\\') this.#escaped = true;
          else if (ch === '"') {
            this.#inString = false;
            if (this.#state === 'key') {
              this.#capture(text.slice(captureFrom, i + 1));
              if (this.#tooLarge) {
                throw new InputError(
                  `${this.#file}:${this.#line}: a key of the top-level object is longer than ${MAX_ROW_BYTES} characters`,
                );
              }
              this.#key = this.#takeCapture();
              captureFrom = -1;
              this.#state = 'colon';
            }
          } else if (ch === '\n') this.#line++;
          continue;
        }
        if (ch === '"') this.#inString = true;
        else if (ch === '{' || ch === '[') this.#depth++;
        else if ((ch === '}' || ch === ']') && this.#depth > 0) this.#depth--;
        else if (this.#depth === 0 && (ch === ',' || ch === ']' || ch === '}')) {
          if (this.#state === 'element') {
            if (ch === '}') this.#fail(ch);
            this.#capture(text.slice(captureFrom, i));
            captureFrom = -1;
            rows.push(this.#finishElement());
            this.#state = ch === ',' ? 'array' : this.#inObject ? 'after-array' : 'done';
          } else {
            // The end of a skipped (non-"records") member of the top-level object.
            if (ch === ']') this.#fail(ch);
            this.#state = ch === ',' ? 'value' : 'done';
          }
          continue;
        }
        if (ch === '\n') this.#line++;
        continue;
      }
      if (ch === '\n') {
        this.#line++;
        continue;
      }
      if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\uFEFF') continue;
      switch (this.#state) {
        case 'start':
          if (ch === '[') this.#state = 'array';
          else if (ch === '{') {
            this.#inObject = true;
            this.#state = 'value';
          } else this.#fail(ch);
          break;
        case 'value':
          // 'value' here means: inside the top-level object, expecting a key or the closing brace.
          if (ch === '"') {
            this.#state = 'key';
            this.#inString = true;
            captureFrom = i;
          } else if (ch === '}') this.#state = 'done';
          else this.#fail(ch);
          break;
        case 'colon':
          if (ch !== ':') this.#fail(ch);
          if (JSON.parse(this.#key) === 'records') {
            if (this.#sawRecords) {
              throw new InputError(
                `${this.#file}:${this.#line}: "records" is written twice in the top-level object; JSON keeps only the last, so which array is meant is unclear`,
              );
            }
            this.#state = 'array';
            this.#expectArray = true;
          } else this.#state = 'skip';
          break;
        case 'array':
          if (this.#expectArray) {
            this.#expectArray = false;
            if (ch !== '[') throw new InputError(`${this.#file}:${this.#line}: "records" must be an array`);
            this.#sawRecords = true;
            break;
          }
          if (ch === ']') this.#state = this.#inObject ? 'after-array' : 'done';
          else if (ch === ',') this.#fail(ch);
          else {
            this.#state = 'element';
            this.#startLine = this.#line;
            captureFrom = i;
            i--;
          }
          break;
        case 'after-array':
          if (ch === ',') this.#state = 'value';
          else if (ch === '}') this.#state = 'done';
          else this.#fail(ch);
          break;
        default:
          this.#fail(ch);
      }
    }
    if (captureFrom !== -1) this.#capture(text.slice(captureFrom));
    return rows;
  }

  /** Checks that the document ended where a document may end. */
  end(): void {
    if (this.#state !== 'done') throw new InputError(`${this.#file}:${this.#line}: unexpected end of JSON input`);
    if (this.#inObject && !this.#sawRecords) {
      throw new InputError(`${this.#file}:1: expected an array or an object with a "records" array`);
    }
  }

  #fail(ch: string): never {
    const where = this.#state === 'start' ? 'expected "[" or "{"' : `unexpected ${JSON.stringify(ch)}`;
    throw new InputError(`${this.#file}:${this.#line}: ${where}`);
  }

  #capture(piece: string): void {
    if (this.#tooLarge || piece.length === 0) return;
    this.#size += piece.length;
    if (this.#size > MAX_ROW_BYTES) {
      this.#tooLarge = true;
      this.#parts = [];
      return;
    }
    this.#parts.push(piece);
  }

  #takeCapture(): string {
    const text = this.#parts.join('');
    this.#parts = [];
    this.#size = 0;
    return text;
  }

  #finishElement(): SourceRow {
    const line = this.#startLine;
    const tooLarge = this.#tooLarge;
    this.#tooLarge = false;
    const text = this.#takeCapture();
    const reject = (message: string): SourceRow => ({
      kind: 'reject',
      file: this.#file,
      line,
      issues: [{ field: '', message }],
    });
    if (tooLarge) return reject(`element is larger than ${MAX_ROW_BYTES} characters`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return reject(`invalid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return reject('expected a JSON object');
    const record = value as Record<string, unknown>;
    const deep = tooDeepField(record);
    if (deep !== undefined) return tooDeepRow(this.#file, line, deep);
    const hidden = hiddenJsonIssues(text);
    if (hidden !== undefined) return { kind: 'reject', file: this.#file, line, issues: hidden };
    return { kind: 'record', file: this.#file, line, record };
  }
}

/**
 * Streams the records of a .json file as arrays of rows, one per chunk of input; see
 * {@link JsonRecordSplitter}.
 */
export async function* readJsonChunks(
  source: AsyncIterable<Buffer | string>,
  file: string,
): AsyncGenerator<SourceRow[]> {
  const splitter = new JsonRecordSplitter(file);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const utf16 = new Utf16Check(file);
  const notUtf8 = () => new InputError(`${file}: not valid UTF-8`);
  // A UTF-16 mark is not UTF-8 either: the file's first bytes say which error it gets.
  let invalid = false;
  let held = '';
  for await (const chunk of source) {
    let text: string;
    if (typeof chunk === 'string') text = chunk;
    else {
      utf16.push(chunk);
      if (invalid) {
        if (utf16.judged) throw notUtf8();
        continue;
      }
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch {
        if (utf16.judged) throw notUtf8();
        invalid = true;
        continue;
      }
    }
    // Nothing is parsed before the first bytes are judged: UTF-16 without a mark decodes as NULs.
    held += text;
    if (!utf16.judged && typeof chunk !== 'string') continue;
    const rows = splitter.push(held);
    held = '';
    if (rows.length > 0) yield rows;
  }
  utf16.end();
  if (invalid) throw notUtf8();
  if (held !== '') {
    const rows = splitter.push(held);
    if (rows.length > 0) yield rows;
  }
  splitter.end();
}
