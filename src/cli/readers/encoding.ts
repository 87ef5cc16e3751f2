/**
 * The character encoding of CSV and TSV files (`--encoding`). A CSV file is parsed byte for byte
 * (as latin1, one character per byte) and each cell is decoded afterwards, so any encoding that
 * keeps ASCII as ASCII, one byte per character, reads correctly: delimiters, quotes and line ends
 * keep their bytes. That is UTF-8, decoded strictly (invalid bytes are a rejection naming the
 * field, never U+FFFD in the data), and the single-byte code pages spreadsheets save in, such as
 * windows-1252, what Excel's plain "CSV" format writes on Western European Windows. UTF-16 is
 * transcoded to UTF-8 before parsing (csv-bytes.ts). Other encodings of more than one byte per
 * character (Shift_JIS, GBK, Big5) could hide a delimiter inside a character, and are refused.
 */
import { UsageError } from '../exit-codes.js';
import type { CsvBytesOptions, Utf16 } from './csv-bytes.js';
import { decodeUtf8 } from './types.js';

export interface TextEncoding {
  /** The WHATWG name of the encoding: `utf-8`, `windows-1252`, `iso-8859-2`… */
  name: string;
  /** A cell read as latin1 (one character per byte), as text; undefined when its bytes are invalid. */
  decodeCell(latin1: string): string | undefined;
  /** Bytes as text, any invalid sequence replaced: for showing a raw line in the rejects file. */
  show(bytes: Uint8Array): string;
  /** UTF-16 in this byte order: the file is transcoded to UTF-8, which the cells are then read as. */
  utf16?: Utf16;
  /** A character as the parser sees it: its bytes in this encoding, as latin1; '' when it has none. */
  parserText(char: string): string;
}

export const UTF8: TextEncoding = {
  name: 'utf-8',
  decodeCell: (latin1) => decodeUtf8(Buffer.from(latin1, 'latin1')),
  show: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  parserText: (char) => Buffer.from(char, 'utf8').toString('latin1'),
};

/** `parserText` of a single-byte code page: the byte that decodes to the character. */
function codePageParserText(decodeCell: (latin1: string) => string | undefined): (char: string) => string {
  let byteOf: Map<string, string> | undefined;
  return (char) => {
    if (byteOf === undefined) {
      byteOf = new Map();
      for (let byte = 0; byte < 256; byte++) {
        const decoded = decodeCell(String.fromCharCode(byte));
        if (decoded !== undefined) byteOf.set(decoded, String.fromCharCode(byte));
      }
    }
    return byteOf.get(char) ?? '';
  };
}

const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, byte) => byte);

/**
 * windows-1252's bytes 0x80 to 0x9F, as the WHATWG Encoding Standard maps them (€ ‚ ƒ „ … † ‡ ˆ ‰ Š
 * ‹ Œ Ž ‘ ’ “ ” • – — ˜ ™ š › œ ž Ÿ, and five C1 controls). Node 20's TextDecoder reads them as
 * latin1 control characters instead; Node 22 and later follow the standard, and a test checks this
 * table against them.
 */
const WINDOWS_1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Text read as latin1 made windows-1252: the characters U+0080–U+009F become what those bytes are in it. */
export function latin1ToWindows1252(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (char) => WINDOWS_1252_HIGH[char.charCodeAt(0) - 0x80] as string);
}

/** A windows-1252 decode, fixed where the runtime read 0x80–0x9F as latin1. */
function windows1252(decoder: TextDecoder): (bytes: Uint8Array) => string {
  if (decoder.decode(Uint8Array.of(0x80)) === '\u20ac') return (bytes) => decoder.decode(bytes);
  return (bytes) => latin1ToWindows1252(decoder.decode(bytes));
}

/**
 * Whether `decoder` reads each byte as one character, and the bytes CSV is made of (tab, line
 * ends, printable ASCII) as themselves. Other control bytes may differ: ibm866 maps a few to
 * graphic characters, which only changes what a cell holding them reads as.
 */
function isSingleByteAscii(decoder: TextDecoder): boolean {
  const text = decoder.decode(EVERY_BYTE);
  if (text.length !== 256) return false;
  for (let byte = 0; byte < 128; byte++) {
    const structural = byte === 9 || byte === 10 || byte === 13 || (byte >= 0x20 && byte < 0x7f);
    if (structural && text.charCodeAt(byte) !== byte) return false;
  }
  return true;
}

/** The encoding `--encoding` names (any WHATWG label: `utf8`, `latin1`, `cp1252`…), or a usage error. */
export function textEncoding(label: string): TextEncoding {
  let lenient: TextDecoder;
  try {
    lenient = new TextDecoder(label.trim());
  } catch {
    throw new UsageError(
      `--encoding: unknown encoding ${JSON.stringify(label)} (use utf-8, or a code page such as windows-1252 or iso-8859-2)`,
    );
  }
  const name = lenient.encoding;
  if (name === 'utf-8') return UTF8;
  if (name === 'utf-16le' || name === 'utf-16be') return utf16Encoding(name);
  // ISO-2022-JP reads each byte alone as ASCII, but an escape sequence switches it to two bytes a character.
  if (name === 'iso-2022-jp' || !isSingleByteAscii(lenient)) {
    throw new UsageError(
      `--encoding: ${name} cannot be read: CSV is read as UTF-8, UTF-16 or a code page of one byte per character, with ASCII unchanged; save the file as UTF-8`,
    );
  }
  if (name === 'windows-1252') {
    // Every byte has a character in windows-1252: no cell is invalid.
    const decode = windows1252(lenient);
    const decodeCell = (latin1: string) => decode(Buffer.from(latin1, 'latin1'));
    return { name, decodeCell, show: decode, parserText: codePageParserText(decodeCell) };
  }
  // A byte the code page leaves undefined is a rejection naming its field, as invalid UTF-8 is.
  const strict = new TextDecoder(name, { fatal: true });
  const decodeCell = (latin1: string): string | undefined => {
    try {
      return strict.decode(Buffer.from(latin1, 'latin1'));
    } catch {
      return undefined;
    }
  };
  return { name, decodeCell, show: (bytes) => lenient.decode(bytes), parserText: codePageParserText(decodeCell) };
}

/**
 * UTF-16, read from its transcoding to UTF-8 (csv-bytes.ts), where a unit that was not UTF-16 is
 * U+FFFD: a cell holding one is invalid. (U+FFFD itself is never finance data: it is what a
 * decoder leaves where it lost a character.)
 */
export function utf16Encoding(name: Utf16): TextEncoding {
  return {
    ...UTF8,
    name,
    utf16: name,
    decodeCell: (latin1) => {
      const text = UTF8.decodeCell(latin1);
      return text === undefined || text.includes('\uFFFD') ? undefined : text;
    },
  };
}

/** What the CSV byte stage needs to know of an encoding. */
export function csvBytesOptions(encoding: TextEncoding): CsvBytesOptions {
  const codePage = encoding === UTF8 || encoding.utf16 !== undefined ? undefined : encoding.name;
  return { utf16: encoding.utf16, codePage };
}
