/** `--skip-lines`: the lines above a CSV header dropped as raw lines, whatever the chunks or line breaks. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { afterLines, headAfterLines } from '../../src/cli/readers/skip-lines.js';
import { InputError } from '../../src/cli/readers/types.js';
import { chunked, cuts, drain } from '../fuzz/reader-input.js';
import { readCsv } from '../support/readers.js';

async function text(source: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of source) parts.push(chunk);
  return Buffer.concat(parts).toString('latin1');
}

/** What follows the `count`-th line break of `input` (LF, CRLF or a lone CR), split on the whole text at once. */
function expectedAfter(input: string, count: number): string | undefined {
  const lines = input.split(/(\r\n|\r|\n)/);
  // split keeps the breaks: [line, break, line, break, ..., rest]
  if ((lines.length - 1) / 2 < count) return undefined;
  return lines.slice(2 * count).join('');
}

describe('afterLines', () => {
  it('drops exactly the first n lines, a CRLF split across chunks counting once', async () => {
    const line = fc.tuple(
      fc.string({ unit: fc.constantFrom('a', 'b', '"', ',', ';', ' '), maxLength: 6 }),
      fc.constantFrom('\n', '\r\n', '\r'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 8 }),
        fc.string({ maxLength: 6 }),
        fc.integer({ min: 1, max: 6 }),
        cuts,
        async (lines, tail, count, sizes) => {
          const input = lines.map(([content, end]) => content + end).join('') + tail;
          const bytes = Buffer.from(input, 'latin1');
          const expected = expectedAfter(input, count);
          const read = text(afterLines(chunked(bytes, sizes), count, 'in.csv'));
          if (expected === undefined) await expect(read).rejects.toThrow(InputError);
          else {
            expect(await read).toBe(expected);
            expect(headAfterLines(bytes, count).toString('latin1')).toBe(expected);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps the line break that starts the next chunk after a whole CRLF ending the last skipped line', async () => {
    // The shrunk counterexample of the property above: the 6th break is a CRLF that ends the first chunk.
    const input = Buffer.from('aa\naaaaaa\naaaaa\r\naa\na\r\na\r\n\nheader\n', 'latin1');
    expect(await text(afterLines(chunked(input, [26]), 6, 'in.csv'))).toBe('\nheader\n');
  });

  it('names the file and how many lines it has when it has fewer than asked', async () => {
    await expect(text(afterLines(chunked(Buffer.from('title\r\n'), [3]), 3, 'bank.csv'))).rejects.toThrow(
      'bank.csv: 1 line, fewer than --skip-lines 3',
    );
  });
});

describe('the CSV reader with skipLines', () => {
  const exported =
    'Account Transactions\n"Demo Co, Ltd"\r\nFor the period 1 Jan 2025 to 31 Jan 2025\ncreated,amount,currency,identifier,type,vendor\n2025-01-03,12.5,GBP,a,expense,Tesco\n2025-01-04,x,GBP,b,expense,Tesco\n';

  it("reads the table under an export's title lines, naming the file's own line numbers", async () => {
    const { rows } = await drain(
      readCsv(chunked(Buffer.from(exported), [7, 40]), 'xero.csv', { rules: rowRules({ skipLines: 3 }) }),
    );
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 5],
      ['reject', 6],
    ]);
  });

  it('names the header by its own line when it is refused', async () => {
    const { fatal } = await drain(
      readCsv(chunked(Buffer.from(exported), [64]), 'xero.csv', {
        rules: rowRules({ skipLines: 2 }),
        requireFields: true,
      }),
    );
    expect(String(fatal)).toMatch(/^InputError: xero\.csv:3: /);
  });
});
