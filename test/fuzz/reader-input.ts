/** Byte soup for the CLI readers, and helpers to feed it in random chunks. */
import fc from 'fast-check';
import { InputError, type SourceRow } from '../../src/cli/readers/types.js';

const fragments = fc.constantFrom(
  '\uFEFF',
  '\0',
  '"',
  '""',
  ',',
  '\n',
  '\r\n',
  '\r',
  '{',
  '}',
  '[',
  ']',
  ':',
  '"amount":',
  'created,amount,currency,identifier,type,vendor\n',
  '1700000000000,12.5,EUR,a@x.test,expense,Acme\n',
  '{"created":1700000000000,"amount":1,"currency":"EUR","identifier":"a","type":"expense","vendor":"v"}\n',
  'null\n',
  '\\u0000',
);
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xff]),
  Buffer.from([0xc3]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xed, 0xa0, 0x80]), // an encoded surrogate
  Buffer.from([0xc0, 0xaf]), // overlong "/"
  Buffer.from([0xef, 0xbb, 0xbf]), // a BOM in the middle
);

/** Random bytes mixing structure, text, NUL, BOMs and invalid UTF-8. */
export const byteSoup: fc.Arbitrary<Buffer> = fc
  .array(
    fc.oneof(
      fragments.map((text) => Buffer.from(text)),
      invalidUtf8,
      fc.uint8Array({ maxLength: 16 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ unit: 'grapheme', maxLength: 12 }).map((text) => Buffer.from(text)),
    ),
    { maxLength: 40 },
  )
  .map((parts) => Buffer.concat(parts));

/** Cut points for feeding bytes in chunks, so that rows and UTF-8 sequences straddle chunk edges. */
export const cuts = fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 8 });

export async function* chunked(bytes: Buffer, sizes: readonly number[]): AsyncGenerator<Buffer> {
  let offset = 0;
  for (const size of sizes) {
    if (offset >= bytes.length) break;
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
  if (offset < bytes.length) yield bytes.subarray(offset);
}

export interface Drained {
  rows: SourceRow[];
  /** Set when the reader stopped with its one typed fatal error. */
  fatal?: InputError;
}

/** Reads every row; an InputError is the only acceptable throw, anything else is rethrown. */
export async function drain(rows: AsyncGenerator<SourceRow>): Promise<Drained> {
  const out: SourceRow[] = [];
  try {
    for await (const row of rows) out.push(row);
  } catch (error) {
    if (error instanceof InputError) return { rows: out, fatal: error };
    throw error;
  }
  return { rows: out };
}
