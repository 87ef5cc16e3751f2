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

/** A valid vendor cell may span lines: a quoted cell holding a line break. */
const multiLineVendor = fc
  .array(fc.constantFrom('a', ' ', ',', '""', '\n', '\r\n', 'é'), { minLength: 1, maxLength: 8 })
  .map((parts) => `x${parts.join('')}`);

describe('CSV reader: many malformed rows among valid rows that span lines', () => {
  // The parser that loses a record stops there, and a new one reads the lines after it: each
  // physical line must still end up in exactly one row, whatever the chunks, line breaks and
  // separator, however many broken rows come in a row, and with a broken last line.
  it('counts every line once: each valid row a record on its first line, each broken line a reject', async () => {
    const entry = fc.oneof(
      { weight: 2, arbitrary: validRow.map((row) => ({ kind: 'valid' as const, row })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(validRow, multiLineVendor)
          .map(([row, vendor]) => ({ kind: 'valid' as const, row: { ...row, vendor, quote: true } })),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom(...(Object.keys(malformed) as (keyof typeof malformed)[])), validRow)
          .map(([kind, row]) => ({ kind: 'broken' as const, lines: malformed[kind](row) })),
      },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(entry, { minLength: 1, maxLength: 25 }),
        fc.constantFrom('\n', '\r\n'),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(',', ';'),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 8180, max: 8200 })), { maxLength: 6 }),
        fc.nat({ max: 400 }),
        async (entries, eol, trailingEol, bom, delimiter, sizes, padding) => {
          // Padding on the first valid row moves the rows across the 8 KiB chunks the CLI reads.
          const pad = 'p'.repeat(padding * 20);
          const cell = (text: string) => (delimiter === ',' ? text : text.replaceAll(',', ';'));
          const physical: string[] = [];
          const expectedRecords: { line: number; row: ValidRow }[] = [];
          const expectedRejects: number[] = [];
          let line = 2;
          entries.forEach((item, index) => {
            if (item.kind === 'valid') {
              const row = index === 0 ? { ...item.row, identifier: `${item.row.identifier}${pad}` } : item.row;
              // Only the separator outside the vendor cell changes; the vendor keeps its commas quoted.
              const text = `1700000000000${delimiter}${row.amount}${delimiter}EUR${delimiter}${row.identifier}${delimiter}expense${delimiter}${vendorCell(row)}`;
              const lines = text.replaceAll('\r\n', '\n').split('\n').length;
              physical.push(eol === '\r\n' ? text.replaceAll(/\r?\n/g, '\r\n') : text);
              expectedRecords.push({ line, row });
              line += lines;
            } else {
              for (const broken of item.lines) {
                physical.push(cell(broken));
                expectedRejects.push(line++);
              }
            }
          });
          const text = `${bom ? '\uFEFF' : ''}${cell(HEADER)}${eol}${physical.join(eol)}${trailingEol ? eol : ''}`;

          const { rows: read, fatal } = await drain(
            readCsv(chunked(Buffer.from(text), sizes), 'in.csv', delimiter === ',' ? {} : { delimiter }),
          );

          expect(fatal).toBeUndefined();
          expect(read.filter((row) => row.kind === 'reject').map((row) => row.line)).toEqual(expectedRejects);
          const records = read.filter((row) => row.kind === 'record');
          expect(records.map((row) => row.line)).toEqual(expectedRecords.map(({ line }) => line));
          expect(records.map((row) => (row.kind === 'record' ? row.record.amount : undefined))).toEqual(
            expectedRecords.map(({ row }) => row.amount),
          );
          expect(read).toHaveLength(expectedRecords.length + expectedRejects.length);
        },
      ),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
  });
});
