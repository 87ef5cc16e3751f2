/**
 * A CSV file's bytes as the parser reads them: bytes in which ASCII is one byte (UTF-8 or a
 * single-byte code page), without a byte-order mark. A UTF-8 mark is dropped: csv-parse's own
 * `bom` option would switch its decoding to UTF-8 and break the latin1 reading of cells. UTF-16,
 * what Excel's "Unicode Text" save writes (tab-separated, little-endian, with a mark), is
 * transcoded to UTF-8 as it streams. A file is UTF-16 when `--encoding` says so or, with no
 * single-byte encoding asked for, when it starts with a UTF-16 mark, which no UTF-8 file can; the
 * mark decides the byte order. All in one generator: each layer costs promises per chunk.
 */
import { InputError } from './types.js';

export type Utf16 = 'utf-16le' | 'utf-16be';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The UTF-16 byte order a file's first bytes announce, if they are a UTF-16 byte-order mark. */
export function utf16Mark(head: Uint8Array): Utf16 | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * The head of a UTF-16 file (its first bytes, maybe cut mid-character) as UTF-8, for reading its
 * header line before the run: a character cut at the end is dropped, not reported.
 */
export function utf16HeadAsUtf8(head: Uint8Array, order: Utf16): Buffer {
  return Buffer.from(new TextDecoder(order).decode(head, { stream: true }), 'utf8');
}

export interface CsvBytesOptions {
  /** `--encoding` named UTF-16 in this byte order (a mark in the file wins). */
  utf16?: Utf16 | undefined;
  /** Whether a UTF-16 mark makes the file UTF-16: not when a single-byte code page was asked for. */
  sniffUtf16: boolean;
}

function isPrefixOf(head: Buffer, mark: Buffer): boolean {
  return head.length < mark.length && mark.subarray(0, head.length).equals(head);
}

export async function* csvBytes(
  source: AsyncIterable<Buffer | string>,
  file: string,
  options: CsvBytesOptions,
): AsyncGenerator<Buffer> {
  let head: Buffer | undefined = Buffer.alloc(0);
  let decoder: TextDecoder | undefined;
  let read = 0;
  const transcode = (bytes?: Buffer): Buffer => {
    const utf16 = decoder as TextDecoder;
    try {
      return Buffer.from(bytes === undefined ? utf16.decode() : utf16.decode(bytes, { stream: true }), 'utf8');
    } catch {
      throw new InputError(
        `${file}: not valid ${utf16.encoding.toUpperCase()} (an unpaired surrogate or a stray byte) within its first ${read} bytes`,
      );
    }
  };
  /** Decides from the file's first bytes what it is; returns the bytes to parse (or to transcode). */
  const start = (bytes: Buffer): Buffer => {
    const order = (options.sniffUtf16 || options.utf16 !== undefined ? utf16Mark(bytes) : undefined) ?? options.utf16;
    if (order !== undefined) {
      // The decoder drops the UTF-16 mark itself.
      decoder = new TextDecoder(order, { fatal: true });
      return bytes;
    }
    return bytes.subarray(0, UTF8_BOM.length).equals(UTF8_BOM) ? bytes.subarray(UTF8_BOM.length) : bytes;
  };
  for await (const chunk of source) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    read += bytes.length;
    if (head !== undefined) {
      head = Buffer.concat([head, bytes]);
      // Wait for enough bytes to tell a mark from the start of one (a file may arrive a byte at a time).
      if (isPrefixOf(head, UTF8_BOM) || (head.length < 2 && (head[0] === 0xff || head[0] === 0xfe))) continue;
      bytes = start(head);
      head = undefined;
    }
    yield decoder === undefined ? bytes : transcode(bytes);
  }
  if (head !== undefined && head.length > 0) {
    const bytes = start(head);
    yield decoder === undefined ? bytes : transcode(bytes);
  }
  if (decoder !== undefined) {
    const rest = transcode();
    if (rest.length > 0) yield rest;
  }
}
