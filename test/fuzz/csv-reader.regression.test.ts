/**
 * Regressions found by the reader fuzzing:
 * - a CSV file saved with a UTF-8 BOM had every non-ASCII cell rejected as invalid UTF-8 (csv-parse
 *   switched to UTF-8 decoding on the BOM, under the reader's latin1 round trip);
 * - after a row over MAX_ROW_BYTES, the following rows vanished: csv-parse's max_record_size with
 *   skip_records_with_error drops the rest of the chunk;
 * - after an invalid closing quote (`"bad"quote`), csv-parse stayed inside the quote and every later
 *   row up to the next quote vanished, neither sent nor rejected;
 * - a file whose every line opens a quote took minutes for a few thousand lines: the parser that
 *   lost a row went on through the rest of its chunk, building an error at every later quote, and
 *   did so again for each line it restarted on.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROW_BYTES } from '../../src/cli/readers/types.js';
import { readCsv } from '../support/readers.js';
import { chunked, drain } from './reader-input.js';

const HEADER = 'created,amount,currency,identifier,type,vendor\n';
const read = (text: string, sizes: number[] = []) => drain(readCsv(chunked(Buffer.from(text), sizes), 'in.csv', {}));

describe('CSV reader regressions', () => {
  it('keeps the non-ASCII cells of a file with a UTF-8 BOM, even with the BOM split over chunks', async () => {
    for (const sizes of [[], [1], [2, 1]]) {
      const { rows, fatal } = await read(`\uFEFF${HEADER}1700000000000,1,EUR,zoë@x.test,expense,Café ¡日本!\n`, sizes);
      expect(fatal).toBeUndefined();
      expect(rows).toEqual([
        {
          kind: 'record',
          file: 'in.csv',
          line: 2,
          record: {
            created: 1_700_000_000_000,
            amount: 1,
            currency: 'EUR',
            identifier: 'zoë@x.test',
            type: 'expense',
            vendor: 'Café ¡日本!',
          },
        },
      ]);
    }
  });

  it('rejects a row over MAX_ROW_BYTES by its line and still reads every row after it', async () => {
    const huge = 'x'.repeat(MAX_ROW_BYTES + 10);
    const text = `${HEADER}1700000000000,1,EUR,a,expense,"${huge}"\n1700000000000,2,EUR,b,expense,B\n1700000000000,3,EUR,c,expense,C\n`;
    const { rows, fatal } = await read(text, [65_536, 65_536, 65_536]);
    expect(fatal).toBeUndefined();
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['reject', 2],
      ['record', 3],
      ['record', 4],
    ]);
  });

  it('reads every row after a quoted cell with junk after its closing quote ("bad"quote)', async () => {
    const good = (i: number) => `1700000000000,${i},EUR,id${i},expense,V${i}`;
    const lines = Array.from({ length: 1000 }, (_, i) => good(i));
    lines.splice(11, 0, '1700000000000,5,EUR,x,expense,"bad"quote');
    const { rows, fatal } = await read(`${HEADER}${lines.join('\n')}\n`, [4096, 4096]);
    expect(fatal).toBeUndefined();
    expect(rows).toHaveLength(1001);
    expect(rows.filter((row) => row.kind === 'record')).toHaveLength(1000);
    expect(rows.filter((row) => row.kind === 'reject')).toEqual([
      {
        kind: 'reject',
        file: 'in.csv',
        line: 13,
        issues: [{ field: 'vendor', message: expect.stringMatching(/^Invalid Closing Quote: .*"q"/) }],
        raw: '1700000000000,5,EUR,x,expense,"bad"quote',
      },
    ]);
  });

  it('rejects an unclosed quote by its own line and reads the rows it would swallow, to the end of the file', async () => {
    const text = `${HEADER}1700000000000,1,EUR,a,expense,"open\n1700000000000,2,EUR,b,expense,B\n1700000000000,3,EUR,c,expense,"C"\n1700000000000,4,EUR,d,expense,D`;
    for (const sizes of [[], [7, 13, 1, 1, 30]]) {
      const { rows } = await read(text, sizes);
      expect(rows.map((row) => [row.kind, row.line])).toEqual([
        ['reject', 2],
        ['record', 3],
        ['record', 4],
        ['record', 5],
      ]);
    }
  });

  it('rejects a chunk of lines that each open a quote in time linear in their number, each by its own line', async () => {
    // One 64 KiB chunk, as stdin gives it, of 2,000 lines: each closes the quote of the line before
    // with junk after it (`"V`). Read again at each restart, the rest of the chunk cost 2 million errors (a
    // minute); now each line costs one.
    const lines = 2000;
    const text = HEADER + '1700000000000,1,EUR,a,expense,"V\n'.repeat(lines);
    const started = performance.now();
    const { rows, fatal } = await read(text, [65_536]);
    const elapsed = performance.now() - started;
    expect(fatal).toBeUndefined();
    expect(rows).toHaveLength(lines);
    expect(rows.every((row, index) => row.kind === 'reject' && row.line === index + 2)).toBe(true);
    // Half a second here, where the old reader took 40 s; the bound leaves room for a busy machine.
    expect(elapsed).toBeLessThan(5000);
  }, 120_000);

  it('gives a malformed quoted multi-line cell the line it starts on, and reads the next line again', async () => {
    const text = `${HEADER}1700000000000,1,EUR,a,expense,"two\nlines"junk\n1700000000000,2,EUR,b,expense,B\n`;
    const { rows } = await read(text);
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['reject', 2],
      ['reject', 3],
      ['record', 4],
    ]);
  });
});
