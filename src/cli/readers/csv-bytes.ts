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
function utf16Mark(head: Uint8Array): Utf16 | undefined {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

function hasUtf8Mark(head: Uint8Array): boolean {
  return head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
}

/**
 * Whether a file that starts with `head` is read as UTF-16, and in which byte order: by its mark
 * unless a code page was asked for, else as `--encoding` says. A UTF-8 mark makes it UTF-8 (see
 * {@link csvBytes} for what happens when an encoding said otherwise).
 */
export function utf16Of(head: Uint8Array, options: CsvBytesOptions): Utf16 | undefined {
  if (hasUtf8Mark(head)) return undefined;
  return (options.codePage === undefined ? utf16Mark(head) : undefined) ?? options.utf16;
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
  /**
   * `--encoding` named this single-byte code page: a UTF-16 mark is then text, and a UTF-8 mark
   * refuses the file, which is UTF-8 (Excel's "CSV UTF-8" save) and would be read as mojibake.
   */
  codePage?: string | undefined;
  /** Told when the file turns out to be UTF-16, before any of its bytes go on. */
  onUtf16?: (order: Utf16) => void;
}

function isPrefixOf(head: Buffer, mark: Buffer): boolean {
  return head.length < mark.length && mark.subarray(0, head.length).equals(head);
}

/**
 * UTF-16 is decoded leniently: a unit that is not UTF-16 (an unpaired surrogate, an odd byte at
 * the end) becomes U+FFFD, which makes the row holding it invalid, naming its line and field
 * (encoding.ts), as invalid UTF-8 does; the rows around it are read.
 */
export async function* csvBytes(
  source: AsyncIterable<Buffer | string>,
  file: string,
  options: CsvBytesOptions,
): AsyncGenerator<Buffer> {
  let head: Buffer | undefined = Buffer.alloc(0);
  let decoder: TextDecoder | undefined;
  /** Decides from the file's first bytes what it is; returns the bytes to parse (or to transcode). */
  const start = (bytes: Buffer): Buffer => {
    if (hasUtf8Mark(bytes)) {
      const declared = options.codePage ?? options.utf16;
      if (declared !== undefined) {
        throw new InputError(
          `${file}: starts with a UTF-8 byte-order mark, so it is UTF-8, not ${declared}: leave out --encoding`,
        );
      }
      return bytes.subarray(UTF8_BOM.length);
    }
    const order = utf16Of(bytes, options);
    // The decoder drops the UTF-16 mark itself.
    if (order !== undefined) {
      decoder = new TextDecoder(order);
      options.onUtf16?.(order);
    }
    return bytes;
  };
  const parsed = (bytes: Buffer): Buffer =>
    decoder === undefined ? bytes : Buffer.from(decoder.decode(bytes, { stream: true }), 'utf8');
  for await (const chunk of source) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (head !== undefined) {
      head = Buffer.concat([head, bytes]);
      // Wait for enough bytes to tell a mark from the start of one (a file may arrive a byte at a time).
      if (isPrefixOf(head, UTF8_BOM) || (head.length < 2 && (head[0] === 0xff || head[0] === 0xfe))) continue;
      bytes = start(head);
      head = undefined;
    }
    // Half a UTF-16 unit transcodes to nothing: no empty chunk goes on.
    const out = parsed(bytes);
    if (out.length > 0) yield out;
  }
  if (head !== undefined && head.length > 0) {
    const out = parsed(start(head));
    if (out.length > 0) yield out;
  }
  if (decoder !== undefined) {
    const rest = Buffer.from(decoder.decode(), 'utf8');
    if (rest.length > 0) yield rest;
  }
}
