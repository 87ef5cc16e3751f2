/**
 * Random CSV, JSONL and JSON bytes through the CLI readers: invalid UTF-8, unbalanced quotes, NUL
 * bytes, BOMs, huge fields. Nothing throws but the readers' typed InputError, every rejection
 * names its line and a field ('' for the row as a whole), and valid input is never rejected.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { MAX_ROW_BYTES, type SourceRow } from '../../src/cli/readers/types.js';
import { readCsv, readJson, readJsonl } from '../support/readers.js';
import { FUZZ_SEED } from './arbitraries.js';
import { byteSoup, chunked, cuts, drain } from './reader-input.js';

const readers = {
  csv: (source: AsyncIterable<Buffer>) => readCsv(source, 'in.csv', {}),
  jsonl: (source: AsyncIterable<Buffer>) => readJsonl(source, 'in.jsonl'),
  json: (source: AsyncIterable<Buffer>) => readJson(source, 'in.json'),
};

function expectWellFormed(rows: SourceRow[], file: string): void {
  for (const row of rows) {
    expect(row.file).toBe(file);
    expect(Number.isInteger(row.line) && row.line >= 1, `line ${row.line}`).toBe(true);
    if (row.kind === 'reject') {
      expect(row.issues.length).toBeGreaterThan(0);
      for (const issue of row.issues) {
        expect(typeof issue.field).toBe('string');
        expect(issue.message.length).toBeGreaterThan(0);
        expect(issue.message.length).toBeLessThan(2000); // a huge field is never echoed whole
      }
    } else if (row.kind === 'record') {
      expect(typeof row.record).toBe('object');
    }
  }
}

describe.each(Object.entries(readers))('%s reader on random bytes', (format, read) => {
  it('yields well-formed rows or one typed InputError, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(byteSoup, cuts, async (bytes, sizes) => {
        const { rows } = await drain(read(chunked(bytes, sizes)));
        expectWellFormed(rows, `in.${format}`);
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
  });

  it('rejects a row over MAX_ROW_BYTES with its line, and goes on', async () => {
    const huge = 'x'.repeat(MAX_ROW_BYTES + 10);
    const good = '{"created":1700000000000,"amount":1,"currency":"EUR","identifier":"a","type":"expense","vendor":"v"}';
    const text = {
      csv: `created,amount,currency,identifier,type,vendor\n1700000000000,1,EUR,a,expense,"${huge}"\n1700000000000,2,EUR,b,expense,Acme\n`,
      jsonl: `{"vendor":"${huge}"}\n${good}\n`,
      json: `[{"vendor":"${huge}"},${good}]`,
    }[format];
    const { rows } = await drain(read(chunked(Buffer.from(text ?? ''), [65_536, 65_536])));
    expectWellFormed(rows, `in.${format}`);
    expect(rows.some((row) => row.kind === 'reject')).toBe(true);
    expect(rows.filter((row) => row.kind === 'record')).toHaveLength(1);
  });
});

/** Valid records as text: amounts and created as numbers, strings with quotes, commas, newlines and unicode. */
const cell = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => s.trim() === s && s !== '');
const row = fc.record({
  created: fc.integer({ min: 1_000_000_000_000, max: 4_000_000_000_000 }),
  amount: fc.integer({ min: -1_000_000, max: 1_000_000 }).map((cents) => cents / 100),
  currency: fc.stringMatching(/^[A-Z]{3}$/),
  identifier: cell,
  type: fc.constantFrom('expense', 'invoice'),
  vendor: cell,
});
const COLUMNS = ['created', 'amount', 'currency', 'identifier', 'type', 'vendor'] as const;

function csvCell(value: string | number, quoteAll: boolean): string {
  const text = String(value);
  return quoteAll || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

describe('valid input is never rejected', () => {
  it('csv: every valid row becomes a record with its values, whatever the quoting, BOM or line ends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        cuts,
        async (rows, bom, crlf, quoteAll, sizes) => {
          const eol = crlf ? '\r\n' : '\n';
          const lines = [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvCell(r[c], quoteAll)).join(','))];
          const bytes = Buffer.from(`${bom ? '\uFEFF' : ''}${lines.join(eol)}${eol}`);
          const { rows: out, fatal } = await drain(readers.csv(chunked(bytes, sizes)));
          expect(fatal).toBeUndefined();
          expect(out.map((r) => r.kind)).toEqual(rows.map(() => 'record'));
          expect(out.map((r) => (r.kind === 'record' ? r.record : undefined))).toEqual(rows);
        },
      ),
      { seed: FUZZ_SEED, numRuns: 200 },
    );
  });

  it('jsonl and json: every valid record comes through unchanged, whatever the BOM or line ends', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        fc.boolean(),
        cuts,
        async (rows, bom, crlf, sizes) => {
          const prefix = bom ? '\uFEFF' : '';
          const jsonl = Buffer.from(prefix + rows.map((r) => JSON.stringify(r)).join(crlf ? '\r\n' : '\n'));
          const json = Buffer.from(prefix + JSON.stringify(rows, null, crlf ? 2 : undefined));
          for (const [read, bytes] of [
            [readers.jsonl, jsonl],
            [readers.json, json],
          ] as const) {
            const { rows: out, fatal } = await drain(read(chunked(bytes, sizes)));
            expect(fatal).toBeUndefined();
            expect(out.map((r) => (r.kind === 'record' ? r.record : r))).toEqual(rows);
          }
        },
      ),
      { seed: FUZZ_SEED, numRuns: 200 },
    );
  });
});

describe('an input cut short', () => {
  /** A CSV export of `rows`, as a producer writes it, with every row ended by a line break. */
  const exported = (
    rows: readonly Record<(typeof COLUMNS)[number], string | number>[],
    crlf: boolean,
    quoteAll: boolean,
  ) => {
    const eol = crlf ? '\r\n' : '\n';
    const lines = [COLUMNS.join(','), ...rows.map((r) => COLUMNS.map((c) => csvCell(r[c], quoteAll)).join(','))];
    return Buffer.from(`${lines.join(eol)}${eol}`);
  };
  /** The export cut at any byte past its header: what a producer killed mid-write leaves. */
  const cutExport = fc
    .tuple(fc.array(row, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.boolean())
    .chain(([rows, crlf, quoteAll]) => {
      const bytes = exported(rows, crlf, quoteAll);
      const header = COLUMNS.join(',').length + 1;
      return fc.record({
        rows: fc.constant(rows),
        bytes: fc.integer({ min: header, max: bytes.length }).map((end) => bytes.subarray(0, end)),
      });
    });

  it('csv with requireFinalNewline: the records read are always whole rows of the export, in order', async () => {
    await fc.assert(
      fc.asyncProperty(cutExport, cuts, async ({ rows, bytes }, sizes) => {
        const rules = rowRules({ requireFinalNewline: true });
        const { rows: out, fatal } = await drain(readCsv(chunked(bytes, sizes), 'cut.csv', { rules }));
        expect(fatal).toBeUndefined();
        const records = out.flatMap((r) => (r.kind === 'record' ? [r.record] : []));
        expect(records).toEqual(rows.slice(0, records.length));
        // Cut anywhere but after a line break, the last row is refused and named.
        const last = bytes[bytes.length - 1];
        if (last !== 0x0a && last !== 0x0d) expect(out.at(-1)?.kind).toBe('reject');
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
  });

  it('csv by default: a record that is not a whole row of the export is always noted as the unended last row', async () => {
    await fc.assert(
      fc.asyncProperty(cutExport, cuts, async ({ rows, bytes }, sizes) => {
        const rules = rowRules();
        const { rows: out } = await drain(readCsv(chunked(bytes, sizes), 'cut.csv', { rules }));
        const records = out.filter((r) => r.kind === 'record');
        records.forEach((r, i) => {
          if (r.kind === 'record' && !isDeepStrictEqual({ ...r.record }, { ...rows[i] })) {
            expect(rules.rowsWithoutFinalNewline).toEqual([{ file: 'cut.csv', line: r.line }]);
            expect(r).toBe(records.at(-1));
          }
        });
        // An input that ends with a line break is never noted: it cannot end inside a row.
        const last = bytes.at(-1);
        if (last === 0x0a || last === 0x0d) {
          expect(rules.rowsWithoutFinalNewline).toEqual([]);
        }
      }),
      { seed: FUZZ_SEED, numRuns: 300 },
    );
  });
});

describe('line numbers', () => {
  /** Text for a quoted cell: letters and line breaks of every kind (LF, CRLF, a lone CR). */
  const multiLine = fc
    .array(fc.constantFrom('a', 'b', '\n', '\r\n', '\r'), { minLength: 1, maxLength: 6 })
    .map((parts) => `x${parts.join('')}x`);
  /** The line each row starts on, counting LF, CRLF and a lone CR as one line break each. */
  const startLines = (lines: string[], eol: string): number[] => {
    const starts: number[] = [];
    let line = 1;
    for (const text of lines) {
      starts.push(line);
      line += (text.match(/\r\n|\r|\n/g) ?? []).length + (eol === '' ? 0 : 1);
    }
    return starts;
  };

  it('csv: every row, record or reject, names the line it starts on, whatever line breaks its cells hold', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ note: multiLine, amount: fc.constantFrom('1', '2.5', 'x', 'broken quote') }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.boolean(),
        cuts,
        async (specs, crlf, sizes) => {
          const eol = crlf ? '\r\n' : '\n';
          const lines = [
            'created,amount,currency,identifier,type,vendor,description',
            // A broken quote makes the reader start again on the next line: the rows after it keep their lines.
            ...specs.map(({ note, amount }) =>
              amount === 'broken quote'
                ? '1700000000000,1,EUR,a,expense,V,"bad"quote'
                : `1700000000000,${amount},EUR,a,expense,V,"${note}"`,
            ),
          ];
          const { rows } = await drain(readers.csv(chunked(Buffer.from(`${lines.join(eol)}${eol}`), sizes)));
          expect(rows.map((r) => r.line)).toEqual(startLines(lines, eol).slice(1));
          expect(rows.map((r) => r.kind)).toEqual(
            specs.map(({ amount }) => (amount === '1' || amount === '2.5' ? 'record' : 'reject')),
          );
        },
      ),
      { seed: FUZZ_SEED, numRuns: 200 },
    );
  });
});
