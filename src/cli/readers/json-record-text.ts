/**
 * What the JSON readers check beyond `JSON.parse`. What it settles without a word, read from a
 * record's own text: a key written twice in one object (the last one wins), and a number that is not
 * the number it reads as (more digits than a double holds, or so small it reads as 0). Either
 * would store or hand a transform a value the file does not say, so the row is refused instead, as
 * a CSV cell with the same text is. Nested values count too: a `--transform` may read them.
 */
import { InputError, type RowIssue } from './types.js';

/** Problems reported per record at most: a line of one key written 100,000 times is one row, not 100,000 lines of rejects. */
const MAX_ISSUES = 10;

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

function startsNumber(code: number): boolean {
  return code === 45 /* - */ || (code >= 48 && code <= 57);
}

/** A decimal number as sign, significant digits and the place of its point; zero has no digits. */
interface Decimal {
  negative: boolean;
  digits: string;
  point: number;
}

/** The decimal a JSON number token (or `String(number)`, `1e+21` included) writes. */
function decimalOf(text: string): Decimal {
  const negative = text.charCodeAt(0) === 45;
  const unsigned = negative ? text.slice(1) : text;
  const e = unsigned.search(/[eE]/);
  const mantissa = e === -1 ? unsigned : unsigned.slice(0, e);
  const exponent = e === -1 ? 0 : Number(unsigned.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const whole = dot === -1 ? mantissa : mantissa.slice(0, dot);
  const all = dot === -1 ? mantissa : whole + mantissa.slice(dot + 1);
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === 48) first++;
  let last = all.length;
  while (last > first && all.charCodeAt(last - 1) === 48) last--;
  return { negative, digits: all.slice(first, last), point: whole.length + exponent - first };
}

/** Whether `token` writes exactly the number JSON reads it as: its shortest form says the same decimal. */
function readsAsWritten(token: string, value: number): boolean {
  const written = String(value);
  if (written === token) return true;
  if (!Number.isFinite(value)) return false;
  const a = decimalOf(token);
  const b = decimalOf(written);
  if (a.digits === '' || b.digits === '') return a.digits === b.digits;
  return a.negative === b.negative && a.digits === b.digits && a.point === b.point;
}

function shown(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** One object or array being read: the keys met so far in an object, and the key whose value comes next. */
interface Frame {
  keys: Set<string> | undefined;
  key: string;
}

/**
 * The problems of one JSON object's text that `JSON.parse` hides, or undefined when it has none;
 * each is reported under the record's own key it is in. `text` must already have parsed as an object.
 */
export function hiddenJsonIssues(text: string): RowIssue[] | undefined {
  const issues: RowIssue[] = [];
  const reported = new Set<string>();
  const report = (field: string, what: string, message: string) => {
    if (issues.length >= MAX_ISSUES || reported.has(what)) return;
    reported.add(what);
    issues.push({ field, message });
  };
  const stack: Frame[] = [];
  /** The record's own key the scan is under. */
  const field = () => stack[0]?.key ?? '';
  let i = 0;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const start = i;
      i++;
      let escaped = false;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === BACKSLASH) {
          escaped = true;
          i += 2;
          continue;
        }
        if (c === QUOTE) break;
        i++;
      }
      i++;
      const frame = stack[stack.length - 1];
      if (frame?.keys === undefined) continue;
      let next = i;
      while (next < text.length && isSpace(text.charCodeAt(next))) next++;
      if (text.charCodeAt(next) !== COLON) continue;
      const key = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
      frame.key = key;
      if (frame.keys.has(key)) {
        const where = stack.length === 1 ? 'this object' : `the object under ${JSON.stringify(shown(field()))}`;
        report(
          field(),
          `${field()} key ${stack.length} ${key}`,
          `${JSON.stringify(shown(key))} is written twice in ${where}; JSON keeps only the last, so which value is meant is unclear`,
        );
      }
      frame.keys.add(key);
      continue;
    }
    if (code === 123 /* { */) stack.push({ keys: new Set(), key: '' });
    else if (code === 91 /* [ */) stack.push({ keys: undefined, key: '' });
    else if (code === 125 /* } */ || code === 93 /* ] */) stack.pop();
    else if (startsNumber(code)) {
      const start = i;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === 44 /* , */ || c === 125 || c === 93 || isSpace(c)) break;
        i++;
      }
      const token = text.slice(start, i);
      const value = JSON.parse(token) as number;
      if (!readsAsWritten(token, value)) {
        const why =
          value === 0 || !Number.isFinite(value)
            ? 'beyond the range of a double'
            : 'at most 15 significant digits are always kept';
        report(
          field(),
          `${field()} number ${token}`,
          `${shown(token)} is not a number JSON can hold: it reads as ${value} (${why})`,
        );
      }
      continue;
    }
    i++;
  }
  return issues.length > 0 ? issues : undefined;
}

/**
 * A UTF-16 file (Excel's "Unicode text", PowerShell's default) would be read as lines of NULs and
 * broken JSON, one invalid row per line: it is refused whole, saying what it is. Judged on the
 * file's first four bytes, whatever the chunks they come in: a byte-order mark, or the NUL that
 * UTF-16 puts beside every ASCII character (valid UTF-8 JSON never holds a NUL byte).
 */
export class Utf16Check {
  #head: number[] = [];
  readonly #file: string;

  constructor(file: string) {
    this.#file = file;
  }

  /** Whether the first four bytes (or the whole, shorter, file) have been judged. */
  judged = false;

  push(bytes: Uint8Array): void {
    if (this.judged) return;
    for (let i = 0; i < bytes.length && this.#head.length < 4; i++) this.#head.push(bytes[i] as number);
    if (this.#head.length >= 4) this.#judge();
  }

  end(): void {
    if (!this.judged) this.#judge();
  }

  #judge(): void {
    this.judged = true;
    const [a, b, c, d] = this.#head;
    const mark = (a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff);
    const nuls = d !== undefined && ((a === 0 && c === 0) || (b === 0 && d === 0));
    if (mark || nuls) {
      throw new InputError(
        `${this.#file}: the file is UTF-16; JSON and JSON Lines are read as UTF-8 only: save it as UTF-8`,
      );
    }
  }
}
