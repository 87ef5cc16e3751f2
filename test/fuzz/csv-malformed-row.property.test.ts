/**
 * One malformed row among valid CSV rows must cost exactly that row: every valid row is still read
 * as a record with its own line, the malformed one is rejected by the line it starts on, and the
 * rows read account for every line. (csv-parse used to stay inside the quote after `"bad"quote`, so
 * the rows after it vanished, neither sent nor rejected.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsv } from '../support/readers.js';
import { FUZZ_SEED } from './arbitraries.js';
import { chunked, cuts, drain } from './reader-input.js';

const HEADER = 'created,amount,currency,identifier,type,vendor';

interface ValidRow {
  amount: number;
  identifier: string;
  vendor: string;
  /** Quote the vendor cell even when it does not need it. */
  quote: boolean;
}

/** Vendor text with the characters that matter to CSV: commas, quotes and spaces. */
const vendorText = fc
  .array(fc.constantFrom('a', 'B', 'é', ' ', ',', '"', '""', '-', '5'), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(''));

const validRow: fc.Arbitrary<ValidRow> = fc.record({
  amount: fc.integer({ min: 0, max: 100_000 }),
  identifier: fc.stringMatching(/^[a-z0-9@.]{1,10}$/),
  vendor: vendorText,
  quote: fc.boolean(),
});

function vendorCell(row: ValidRow): string {
  const needsQuotes = /[",\r\n]/.test(row.vendor);
  return needsQuotes || row.quote ? `"${row.vendor.replaceAll('"', '""')}"` : row.vendor;
}

function line(row: ValidRow, vendor = vendorCell(row)): string {
  return `1700000000000,${row.amount},EUR,${row.identifier},expense,${vendor}`;
}

/** Malformed rows, each as the physical lines it takes. */
const malformed = {
  'junk after a closing quote': (row: ValidRow) => [line(row, '"bad"quote')],
  'a quote inside an unquoted cell': (row: ValidRow) => [line(row, 'ab"c')],
  'a quote that never closes': (row: ValidRow) => [line(row, '"open')],
  'an extra cell': (row: ValidRow) => [`${line(row)},extra`],
  'a missing cell': (row: ValidRow) => [`1700000000000,${row.amount},EUR,${row.identifier},expense`],
  'a multi-line quoted cell with junk after it': (row: ValidRow) => [line(row, '"two'), 'lines"junk'],
};

describe('CSV reader: one malformed row among valid rows', () => {
  it('reads every valid row as a record with its line and rejects only the malformed lines', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(validRow, { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fc.constantFrom(...(Object.keys(malformed) as (keyof typeof malformed)[])),
        validRow,
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        cuts,
        async (rows, at, kind, brokenRow, eol, trailingEol, sizes) => {
          const position = at % (rows.length + 1);
          const broken = malformed[kind](brokenRow);
          const lines = [...rows.slice(0, position).map((row) => line(row)), ...broken];
          lines.push(...rows.slice(position).map((row) => line(row)));
          const text = `${HEADER}${eol}${lines.join(eol)}${trailingEol ? eol : ''}`;

          const { rows: read, fatal } = await drain(readCsv(chunked(Buffer.from(text), sizes), 'in.csv', {}));

          expect(fatal).toBeUndefined();
          // Header on line 1; the malformed row's lines come right after the valid rows before it.
          const brokenLines = broken.map((_, i) => position + 2 + i);
          const expected = [
            ...rows.slice(0, position).map((row, i) => ({ row, line: i + 2 })),
            ...rows.slice(position).map((row, i) => ({ row, line: position + 2 + broken.length + i })),
          ];
          // Every line is one row: the rows read account for all of them.
          expect(read).toHaveLength(expected.length + broken.length);
          expect(read.filter((row) => row.kind === 'reject').map((row) => row.line)).toEqual(brokenLines);
          const records = read.filter((row) => row.kind === 'record');
          expect(records).toEqual(
            expected.map(({ row, line }) => ({
              kind: 'record',
              file: 'in.csv',
              line,
              record: {
                created: 1_700_000_000_000,
                amount: row.amount,
                currency: 'EUR',
                identifier: row.identifier,
                type: 'expense',
                // Cells are trimmed, and an empty one is left out (the record check calls it missing).
                ...(row.vendor.trim() !== '' && { vendor: row.vendor.trim() }),
              },
            })),
          );
        },
      ),
      { seed: FUZZ_SEED, numRuns: 400 },
    );
  });
});
