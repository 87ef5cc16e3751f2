/**
 * Reads a text the way a JSON service or a form would unescape it, in one left-to-right pass:
 * `\uXXXX` (either case of `u` and of the hex digits), the JSON short escapes (`\/`, `\"`, `\\`,
 * `\b`, `\f`, `\n`, `\r`, `\t`), percent-encoded UTF-8 (`%c3%a9`, either case) and `+` for a space.
 * Each decoded UTF-16 unit remembers where its source began, so that a match found in the decoded
 * text can be cut out of the source. Work and memory are linear in the text: no backtracking, no
 * second pass.
 */

/** A text read through every escape it may carry. */
export interface DecodedText {
  /** The decoded UTF-16 code units, with `+` and space read as one and the same unit (a space). */
  readonly units: Uint16Array;
  /**
   * `starts[i]` is the source index where unit `i` begins; `starts[length]` is the source length.
   * Two units decoded from one escape (an astral character) share a start.
   */
  readonly starts: Int32Array;
  /** The number of decoded units. */
  readonly length: number;
}

const SPACE = 0x20;
const PLUS = 0x2b;
const PERCENT = 0x25;
const BACKSLASH = 0x5c;

/** `\X` short escapes of JSON (RFC 8259 §7), by the code of X. */
const SHORT_ESCAPES = new Map<number, number>([
  [0x22, 0x22], // \"
  [0x5c, 0x5c], // \\
  [0x2f, 0x2f], // \/
  [0x62, 0x08], // \b
  [0x66, 0x0c], // \f
  [0x6e, 0x0a], // \n
  [0x72, 0x0d], // \r
  [0x74, 0x09], // \t
]);

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The value of `count` hex digits at `at`, or -1 when any is missing or not a hex digit. */
function hexAt(text: string, at: number, count: number): number {
  if (at + count > text.length) return -1;
  let value = 0;
  for (let i = 0; i < count; i++) {
    const digit = hexDigit(text.charCodeAt(at + i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** One escape read at a position: the code point it stands for and how many source characters it took. */
interface Escape {
  codePoint: number;
  length: number;
}

function jsonEscapeAt(text: string, at: number, reading: BackslashReading): Escape | undefined {
  const next = text.charCodeAt(at + 1);
  if (next === 0x75 || next === 0x55) {
    const unit = hexAt(text, at + 2, 4);
    return unit < 0 ? undefined : { codePoint: unit, length: 6 };
  }
  if (reading === 'unicode' || (reading === 'lone' && next === BACKSLASH)) return undefined;
  const short = SHORT_ESCAPES.get(next);
  return short === undefined ? undefined : { codePoint: short, length: 2 };
}

/** The number of bytes a UTF-8 sequence with this lead byte takes, or 0 when it cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** `%XX` bytes forming one UTF-8 character; a broken sequence is no escape (its `%` is read as itself). */
function percentEscapeAt(text: string, at: number): Escape | undefined {
  const lead = hexAt(text, at + 1, 2);
  const bytes = lead < 0 ? 0 : sequenceLength(lead);
  if (bytes === 0) return undefined;
  if (bytes === 1) return { codePoint: lead, length: 3 };
  let codePoint = lead & (0xff >> (bytes + 1));
  for (let i = 1; i < bytes; i++) {
    const pos = at + 3 * i;
    if (text.charCodeAt(pos) !== PERCENT) return undefined;
    const byte = hexAt(text, pos + 1, 2);
    if (byte < 0x80 || byte > 0xbf) return undefined;
    codePoint = (codePoint << 6) | (byte & 0x3f);
  }
  return codePoint > 0x10ffff ? undefined : { codePoint, length: 3 * bytes };
}

/** Whether the text holds anything the decoder would change: without it, decoding is the identity. */
export function hasEscapes(text: string): boolean {
  return text.includes('\\') || text.includes('%') || text.includes('+');
}

/**
 * Whether the {@link BackslashReading}s may read the text differently: only a backslash that is not
 * the start of `\\uXXXX` is read differently by one of them.
 */
export function readingsDiffer(text: string): boolean {
  for (let at = text.indexOf('\\'); at >= 0; at = text.indexOf('\\', at + 1)) {
    const next = text.charCodeAt(at + 1);
    if (next !== 0x75 && next !== 0x55) return true;
    // `\\uXXXX`: all three readings take it whole; skip past it so its digits are not looked at again.
    if (hexAt(text, at + 2, 4) >= 0) at += 5;
    else return true;
  }
  return false;
}

/**
 * How a backslash is read. A secret holding a backslash may be echoed with it raw, escaped as `\\`,
 * or next to escaped characters, and one reading cannot tell these apart, so three are searched:
 * - `json`, as a JSON parser reads: `\\` is one backslash, so `\\u0061` is a backslash and `u0061`;
 * - `lone`: a backslash never escapes a backslash, so `\\u0061` is a backslash and `a`;
 * - `unicode`: only `\uXXXX` is an escape, as a person scanning for it reads: `\n` is `\` and `n`.
 * In every reading a run of backslashes counts as one, so that `\\` and `\` compare alike.
 */
export type BackslashReading = 'json' | 'lone' | 'unicode';

/** Every {@link BackslashReading}. */
export const BACKSLASH_READINGS: readonly BackslashReading[] = ['json', 'lone', 'unicode'];

/** Decodes `text` in one pass; see the module comment for what is read. */
export function decodeEscapedText(text: string, reading: BackslashReading = 'json'): DecodedText {
  // Every source character yields at most one unit, except a 4-byte percent escape (12 characters, 2 units).
  const units = new Uint16Array(text.length);
  const starts = new Int32Array(text.length + 1);
  let length = 0;
  let at = 0;
  while (at < text.length) {
    const start = at;
    const code = text.charCodeAt(at);
    const found =
      code === BACKSLASH ? jsonEscapeAt(text, at, reading) : code === PERCENT ? percentEscapeAt(text, at) : undefined;
    const codePoint = found === undefined ? code : found.codePoint;
    at += found === undefined ? 1 : found.length;
    // A backslash after a backslash joins it: its source ends where the next unit starts.
    if (codePoint === BACKSLASH && length > 0 && units[length - 1] === BACKSLASH) continue;
    if (codePoint >= 0x10000) {
      units[length] = 0xd800 + ((codePoint - 0x10000) >> 10);
      starts[length++] = start;
      units[length] = 0xdc00 + ((codePoint - 0x10000) & 0x3ff);
    } else {
      units[length] = codePoint === PLUS ? SPACE : codePoint;
    }
    starts[length++] = start;
  }
  starts[length] = text.length;
  return { units, starts, length };
}

/** Where the source of unit `index` ends (exclusive). */
export function sourceEnd(decoded: DecodedText, index: number): number {
  const start = decoded.starts[index] as number;
  let next = index + 1;
  while ((decoded.starts[next] as number) === start) next++;
  return decoded.starts[next] as number;
}

/**
 * The UTF-16 units of `text` unescaped, but compared the way {@link decodeEscapedText} compares: `+`
 * read as a space, a run of backslashes as one.
 */
export function comparableUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === BACKSLASH && length > 0 && units[length - 1] === BACKSLASH) continue;
    units[length++] = code === PLUS ? SPACE : code;
  }
  return units.slice(0, length);
}

/** The UTF-16 units of `text` as they are. */
export function rawUnits(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}
