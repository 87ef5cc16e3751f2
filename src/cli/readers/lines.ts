import { MAX_ROW_BYTES } from './types.js';

/** One physical line of input, without its line ending. `tooLong` lines carry no bytes. */
export interface RawLine {
  line: number;
  bytes: Buffer;
  tooLong: boolean;
}

/**
 * Splits a byte stream on `\n` (dropping a trailing `\r`), with 1-based line numbers, a chunk at a
 * time: `push` returns the lines a chunk completes, `end` the last one. A line over `maxBytes` is
 * reported as too long and its bytes are discarded as they arrive, so one enormous line cannot
 * exhaust memory.
 */
export class LineSplitter {
  #parts: Buffer[] = [];
  #length = 0;
  #tooLong = false;
  #line = 1;

  readonly #maxBytes: number;

  constructor(maxBytes: number = MAX_ROW_BYTES) {
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): RawLine[] {
    const lines: RawLine[] = [];
    let start = 0;
    for (let end = chunk.indexOf(0x0a, start); end !== -1; end = chunk.indexOf(0x0a, start)) {
      this.#append(chunk.subarray(start, end));
      lines.push(this.#finish());
      start = end + 1;
    }
    this.#append(chunk.subarray(start));
    return lines;
  }

  /** The last line, when the input does not end with a line break. */
  end(): RawLine[] {
    return this.#length > 0 || this.#tooLong ? [this.#finish()] : [];
  }

  #finish(): RawLine {
    // A line within one chunk is a view of it, not a copy; the chunk is read only until its lines are parsed.
    let bytes = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts, this.#length);
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    const result = { line: this.#line, bytes, tooLong: this.#tooLong };
    this.#parts = [];
    this.#length = 0;
    this.#tooLong = false;
    this.#line++;
    return result;
  }

  #append(piece: Buffer): void {
    if (this.#tooLong || piece.length === 0) return;
    if (this.#length + piece.length > this.#maxBytes) {
      this.#tooLong = true;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(piece);
    this.#length += piece.length;
  }
}
