/**
 * What the JSON readers check beyond `JSON.parse`. What it settles without a word, read from a record's own text: a key written twice (the
 * last one wins) and a number with more significant digits than a double holds (it is rounded to
 * another number). Either would store a value the file does not say, so the row is refused instead,
 * as a CSV cell with the same text is. Only the record's own members are looked at: a nested value
 * is not a field.
 */
import { InputError, type RowIssue } from './types.js';

/** Significant digits every double holds exactly (DBL_DIG), as the CSV amount reader allows. */
const MAX_SIGNIFICANT_DIGITS = 15;

const QUOTE = 34;
const BACKSLASH = 92;
const COLON = 58;

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

function startsNumber(code: number): boolean {
  return code === 45 /* - */ || (code >= 48 && code <= 57);
}

/** Significant digits of a JSON number token: its mantissa without sign, point, leading or trailing zeros. */
function significantDigits(token: string): number {
  let end = token.length;
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i) | 0x20;
    if (code === 0x65 /* e */) {
      end = i;
      break;
    }
  }
  let first = -1;
  let last = -1;
  let count = 0;
  for (let i = 0; i < end; i++) {
    const code = token.charCodeAt(i);
    if (code < 48 || code > 57) continue;
    if (code !== 48) {
      if (first === -1) first = count;
      last = count;
    }
    count++;
  }
  return first === -1 ? 0 : last - first + 1;
}

function shown(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * The problems of one JSON object's text that `JSON.parse` hides, or undefined when it has none.
 * `text` must already have parsed as an object.
 */
export function hiddenJsonIssues(text: string): RowIssue[] | undefined {
  const issues: RowIssue[] = [];
  const keys = new Set<string>();
  let depth = 0;
  let key = '';
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
      if (depth !== 1) continue;
      let next = i;
      while (next < text.length && isSpace(text.charCodeAt(next))) next++;
      if (text.charCodeAt(next) !== COLON) continue;
      key = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
      if (keys.has(key)) {
        issues.push({
          field: key,
          message: `${JSON.stringify(shown(key))} is written twice in this object; JSON keeps only the last, so which value is meant is unclear`,
        });
      }
      keys.add(key);
      continue;
    }
    if (code === 123 /* { */ || code === 91 /* [ */) depth++;
    else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
    else if (depth === 1 && startsNumber(code)) {
      const start = i;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === 44 /* , */ || c === 125 || c === 93 || isSpace(c)) break;
        i++;
      }
      const token = text.slice(start, i);
      if (significantDigits(token) > MAX_SIGNIFICANT_DIGITS) {
        issues.push({
          field: key,
          message: `more digits than can be stored exactly: ${shown(token)} (at most ${MAX_SIGNIFICANT_DIGITS} significant digits; JSON would round it to ${JSON.parse(token) as number})`,
        });
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
