/**
 * `--skip-lines`: the lines before a CSV file's header, such as the title, account and period lines
 * that bank and accounting exports write above their table. They are dropped as raw lines (LF,
 * CRLF or a lone CR each end one), not parsed: a quote in a title line must not swallow the header.
 */
import { InputError } from './types.js';

const LF = 0x0a;
const CR = 0x0d;

/** The bytes of `source` after its first `count` lines; an input with fewer lines is an error naming the file. */
export async function* afterLines(source: AsyncIterable<Buffer>, count: number, file: string): AsyncGenerator<Buffer> {
  let skipped = 0;
  // A CR ending a chunk: a LF starting the next belongs to the same line break.
  let afterCr = false;
  for await (const chunk of source) {
    if (skipped === count) {
      const rest = afterCr && chunk[0] === LF ? chunk.subarray(1) : chunk;
      afterCr = false;
      if (rest.length > 0) yield rest;
      continue;
    }
    const end = lineBreaksEnd(chunk, count - skipped, afterCr);
    skipped += end.breaks;
    afterCr = end.afterCr;
    if (skipped === count && end.offset < chunk.length) {
      yield chunk.subarray(end.offset);
      afterCr = false;
    }
  }
  if (skipped < count) {
    throw new InputError(`${file}: ${skipped} line${skipped === 1 ? '' : 's'}, fewer than --skip-lines ${count}`);
  }
}

/**
 * Where the `wanted`-th line break of `chunk` ends (or the chunk does), how many were found, and
 * whether the chunk ended on a CR. `afterCr`: the chunk before ended on a CR already counted.
 */
function lineBreaksEnd(
  chunk: Buffer,
  wanted: number,
  afterCr: boolean,
): { offset: number; breaks: number; afterCr: boolean } {
  let breaks = 0;
  let i = afterCr && chunk[0] === LF ? 1 : 0;
  while (i < chunk.length) {
    const byte = chunk[i++];
    if (byte === LF || byte === CR) {
      const crlf = byte === CR && chunk[i] === LF;
      if (crlf) i++;
      breaks++;
      // Only a CR that ends the chunk may still have its LF to come; a whole CRLF there has not.
      if (breaks === wanted) return { offset: i, breaks, afterCr: byte === CR && !crlf && i === chunk.length };
    }
  }
  return { offset: chunk.length, breaks, afterCr: chunk[chunk.length - 1] === CR };
}

/** The bytes of `head` after its first `count` lines, or none when it has fewer: for a look at the header before the run. */
export function headAfterLines(head: Buffer, count: number): Buffer {
  if (count === 0) return head;
  const end = lineBreaksEnd(head, count, false);
  return end.breaks < count ? head.subarray(head.length) : head.subarray(end.offset);
}
