import { MAX_ROW_BYTES } from './types.js';

/** One physical line of input, without its line ending. `tooLong` lines carry no bytes. */
export interface RawLine {
  line: number;
  bytes: Buffer;
  tooLong: boolean;
}

/**
 * Splits a byte stream on `\n` (dropping a trailing `\r`), with 1-based line numbers.
 * A line over `maxBytes` is reported as too long and its bytes are discarded as they arrive,
 * so one enormous line cannot exhaust memory.
 */
export async function* splitLines(
  source: AsyncIterable<Buffer | string>,
  maxBytes: number = MAX_ROW_BYTES,
): AsyncGenerator<RawLine> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  let line = 1;
  const finish = (): RawLine => {
    let bytes = tooLong ? Buffer.alloc(0) : Buffer.concat(parts, length);
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    const result = { line, bytes, tooLong };
    parts = [];
    length = 0;
    tooLong = false;
    line++;
    return result;
  };
  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (let end = buffer.indexOf(0x0a, start); end !== -1; end = buffer.indexOf(0x0a, start)) {
      append(buffer.subarray(start, end));
      yield finish();
      start = end + 1;
    }
    append(buffer.subarray(start));
  }
  if (length > 0 || tooLong) yield finish();

  function append(piece: Buffer): void {
    if (tooLong || piece.length === 0) return;
    if (length + piece.length > maxBytes) {
      tooLong = true;
      parts = [];
      length = 0;
      return;
    }
    parts.push(piece);
    length += piece.length;
  }
}
