import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseColumnMap } from '../../src/cli/normalize/columns.js';
import { rowRules } from '../../src/cli/normalize/rules.js';
import { JsonRecordSplitter } from '../../src/cli/readers/json.js';
import { InputError, type SourceRow } from '../../src/cli/readers/types.js';
import { readCsv, readJson, readJsonl } from '../support/readers.js';

async function collect(rows: AsyncGenerator<SourceRow>): Promise<SourceRow[]> {
  const out: SourceRow[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

function bytes(...parts: (string | number[])[]): AsyncIterable<Buffer> {
  return Readable.from([
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part)))),
  ]);
}

const csv = (text: string | Buffer, map = '') =>
  collect(
    readCsv(Readable.from([typeof text === 'string' ? Buffer.from(text) : text]), 'f.csv', {
      rules: rowRules({ columnMap: parseColumnMap(map || undefined) }),
    }),
  );

describe('CSV reader', () => {
  it('converts amount and Unix-millisecond created to numbers and omits empty cells', async () => {
    const rows = await csv('created,amount,vendor,name\n1704067200000,12.50,Acme,\n');
    expect(rows).toEqual([
      { kind: 'record', file: 'f.csv', line: 2, record: { created: 1704067200000, amount: 12.5, vendor: 'Acme' } },
    ]);
  });

  it('renames columns with --map and strips a UTF-8 BOM from the header', async () => {
    const rows = await csv('\uFEFFSupplier,Total\nAcme,3\n', 'vendor=Supplier,amount=Total');
    expect(rows[0]).toMatchObject({ kind: 'record', record: { vendor: 'Acme', amount: 3 } });
  });

  it('rejects malformed rows with their line numbers and keeps reading', async () => {
    const rows = await csv('a,amount\n1,2\n1,2,3\n1,x\n\n4,5\n');
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['reject', 3],
      ['reject', 4],
      ['record', 6],
    ]);
    expect(rows[2]).toMatchObject({ issues: [{ field: 'amount', message: 'not an amount: "x"' }] });
  });

  it('says how many cells the header and a row have, and names a separator at the end of every row', async () => {
    const rows = await collect(
      readCsv(Readable.from([Buffer.from('a;amount\n1;2;\n1;2;3\n1\n')]), 'f.csv', {
        rules: rowRules(),
        delimiter: ';',
      }),
    );
    expect(rows.map((row) => (row.kind === 'reject' ? row.issues[0]?.message : row.kind))).toEqual([
      'Invalid Record Length: the header has 2 columns, this row 3 (it ends with a ";" the header does not have: give the header line one at its end too)',
      'Invalid Record Length: the header has 2 columns, this row 3',
      'Invalid Record Length: the header has 2 columns, this row 1',
    ]);
    // The fix the message gives: the header's own separator at its end makes an ignored column with no name.
    const fixed = await collect(
      readCsv(Readable.from([Buffer.from('a;amount;\n1;2;\n')]), 'f.csv', { rules: rowRules(), delimiter: ';' }),
    );
    expect(fixed.map((row) => row.kind)).toEqual(['record']);
  });

  it('gives a quoted multi-line row the line it starts on', async () => {
    const rows = await csv('a,b\n"x\ny",1\nz,2\n');
    expect(rows.map((row) => row.line)).toEqual([2, 4]);
  });

  it('names the field that holds invalid UTF-8 instead of replacing the bytes', async () => {
    const rows = await collect(readCsv(bytes('name,vendor\n1,', [0xff, 0xfe], '\n'), 'f.csv', {}));
    expect(rows).toEqual([
      {
        kind: 'reject',
        file: 'f.csv',
        line: 2,
        issues: [
          {
            field: 'vendor',
            message: 'not valid UTF-8 (saved in a code page? --encoding <name>, such as windows-1252)',
          },
        ],
        record: { name: '1' },
      },
    ]);
  });

  it('skips rows of empty or blank cells as it skips empty lines, and keeps the line numbers of the rest', async () => {
    const rows = await csv('vendor,amount\r\n,\r\nAcme,1\r\n ,  \r\n\r\n,\r\nBeta,x\r\n,\r\n');
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 3],
      ['reject', 7],
    ]);
  });

  it('skips a line of spaces or tabs, or a DOS end-of-file byte, as an empty line, and still rejects a short row', async () => {
    const rows = await csv('vendor,amount\nAcme,1\n   \n\t\t\nBeta,2\nshort\n \u001a\n\u001a');
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['record', 5],
      ['reject', 6],
    ]);
  });

  it('after rows of blank cells, a malformed row is one reject at its own line, also past 2 MiB of them', async () => {
    const header = 'created,amount,currency,identifier,type,vendor\n';
    const valid = '2025-01-01,1,EUR,a,expense,A\n';
    const few = await csv(`${header}${valid}${',,,,,\n'.repeat(3)}2025-01-01,2,EUR,b\n${valid}`);
    expect(few.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['reject', 6],
      ['record', 7],
    ]);
    // More blank rows than the runaway-row limit holds: none of them is taken for a runaway row.
    const many = await csv(`${header}${valid}${',,,,,\n'.repeat(400_000)}${valid}`);
    expect(many.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['record', 400_003],
    ]);
  });

  it('keeps a blank row that --set makes valid, and hands blank rows to a transform', async () => {
    const sets = new Map([
      ['created', '2025-01-01'],
      ['amount', '0'],
      ['currency', 'EUR'],
      ['identifier', 'x'],
      ['type', 'expense'],
      ['vendor', 'V'],
    ] as const);
    const withSets = await collect(
      readCsv(Readable.from([Buffer.from('note,vendor\n,\nhi,W\n')]), 'f.csv', {
        rules: rowRules({ sets: new Map(sets) }),
      }),
    );
    expect(withSets.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['record', 3],
    ]);
    const rules = rowRules();
    rules.transform = (row) => row;
    const transformed = await collect(readCsv(Readable.from([Buffer.from('a,b\n,\nx,y\n')]), 'f.csv', { rules }));
    expect(transformed).toMatchObject([
      { kind: 'record', line: 2, record: { a: '', b: '' } },
      { kind: 'record', line: 3, record: { a: 'x', b: 'y' } },
    ]);
  });

  it('takes a row whose only content is a byte that is not UTF-8 for an invalid row, not a blank one', async () => {
    const rows = await collect(readCsv(bytes('vendor,amount\n', [0xa0], ',\n'), 'f.csv', {}));
    expect(rows).toMatchObject([{ kind: 'reject', line: 2, issues: [{ field: 'vendor' }] }]);
  });

  it('takes a first row of blank cells for the header, and refuses it, rather than reading the next line as one', async () => {
    const rows = collect(
      readCsv(Readable.from([Buffer.from(',,,,,\ncreated,amount,currency,identifier,type,vendor\n')]), 'f.csv', {
        requireFields: true,
      }),
    );
    await expect(rows).rejects.toThrow(/^f\.csv:1: the header has no column for created/);
  });

  it('reads cells in the --encoding code page: windows-1252, with 0x80–0x9F as the standard maps them', async () => {
    // "Café “Œ” €5" and "Müller" in windows-1252, from the code page's chart.
    const file = bytes(
      'vendor,description\n',
      [0x43, 0x61, 0x66, 0xe9, 0x2c, 0x93, 0x8c, 0x94, 0x20, 0x80, 0x35],
      '\n',
      [0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72],
      ',x\n',
    );
    const rows = await collect(readCsv(file, 'f.csv', { rules: rowRules({ encoding: 'cp1252' }) }));
    expect(rows.map((row) => row.kind === 'record' && row.record)).toEqual([
      { vendor: 'Café', description: '“Œ” €5' },
      { vendor: 'Müller', description: 'x' },
    ]);
  });

  it('reads iso-8859-2 cells, and names the field of a byte the code page leaves undefined', async () => {
    // "Łódź" in iso-8859-2; iso-8859-7 (Greek) leaves 0xAE undefined.
    const polish = await collect(
      readCsv(bytes('vendor\n', [0xa3, 0xf3, 0x64, 0xbc], '\n'), 'f.csv', {
        rules: rowRules({ encoding: 'iso-8859-2' }),
      }),
    );
    expect(polish).toMatchObject([{ kind: 'record', record: { vendor: 'Łódź' } }]);
    const greek = await collect(
      readCsv(bytes('vendor,description\n', [0xae], ',ok\n'), 'f.csv', { rules: rowRules({ encoding: 'iso-8859-7' }) }),
    );
    expect(greek).toMatchObject([
      { kind: 'reject', line: 2, issues: [{ field: 'vendor', message: 'not valid iso-8859-7' }] },
    ]);
  });

  it('transcodes UTF-16 by its byte-order mark, whatever the chunks (a mark or a surrogate pair split between them)', async () => {
    const text = 'vendor,amount\n𝄞 Zoë,1\n';
    for (const [mark, body] of [
      [[0xff, 0xfe], Buffer.from(text, 'utf16le')],
      [[0xfe, 0xff], Buffer.from(text, 'utf16le').swap16()],
    ] as const) {
      const all = Buffer.concat([Buffer.from(mark), body]);
      // One byte per chunk: the mark and every character arrive split.
      const oneByteAtATime = Readable.from([...all].map((byte) => Buffer.from([byte])));
      const rows = await collect(readCsv(oneByteAtATime, 'f.csv', {}));
      expect(rows).toMatchObject([{ kind: 'record', line: 2, record: { vendor: '𝄞 Zoë', amount: 1 } }]);
    }
  });

  it('keeps line numbers in UTF-16 with CRLF fed a byte at a time: broken quotes, empty lines, a bad row', async () => {
    const text = 'vendor,amount\r\n"Acme" Ltd,1\r\nB,2\r\n\r\nC,3\r\n\r\nD,x\r\n';
    const all = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const rows = await collect(readCsv(Readable.from([...all].map((byte) => Buffer.from([byte]))), 'f.csv', {}));
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['reject', 2],
      ['record', 3],
      ['record', 5],
      ['reject', 7],
    ]);
  });

  it('rejects the rows of a UTF-16 file that hold units that are not UTF-16, and reads the rest; under a code page, a UTF-16 mark is text', async () => {
    // A lone high surrogate (D83D) in the middle, and an odd byte at the end.
    const body = Buffer.concat([
      Buffer.from('vendor,amount\nA,1\nCaf', 'utf16le'),
      Buffer.from([0x3d, 0xd8]),
      Buffer.from(',2\nB,3\n', 'utf16le'),
      Buffer.from([0x41]),
    ]);
    const rows = await collect(readCsv(Readable.from([Buffer.concat([Buffer.from([0xff, 0xfe]), body])]), 'f.csv', {}));
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['reject', 3],
      ['record', 4],
      ['reject', 5],
    ]);
    expect(rows[1]).toMatchObject({ issues: [{ field: 'vendor', message: 'not valid utf-16le' }] });
    const rules = rowRules({ encoding: 'windows-1252' });
    await collect(readCsv(bytes([0xff, 0xfe], 'vendor\nA\n'), 'f.csv', { rules }));
    expect([...rules.ignoredColumns]).toEqual(['ÿþvendor']);
    // A header that names no field then says why: the mark, not a missing byte-order mark.
    const utf16 = Readable.from([Buffer.concat([Buffer.of(0xff, 0xfe), Buffer.from('vendor,amount\n', 'utf16le')])]);
    await expect(collect(readCsv(utf16, 'f.csv', { rules, requireFields: true }))).rejects.toThrow(
      /starts with a UTF-16 byte-order mark: leave out --encoding/,
    );
  });

  it("shows the raw line of a broken row in the file's encoding", async () => {
    const file = bytes('vendor,amount\n', [0x22, 0x4d, 0xfc, 0x22, 0x78], ',1\n');
    const rows = await collect(readCsv(file, 'f.csv', { rules: rowRules({ encoding: 'latin1' }) }));
    expect(rows).toMatchObject([{ kind: 'reject', line: 2, raw: '"Mü"x,1' }]);
  });

  it('counts the line breaks of an ignored column, so that later rows keep their line numbers', async () => {
    const rows = await csv('Notes,vendor\n"x\ny\nz",A\n"",B\n');
    expect(rows.map((row) => [row.line, row.kind === 'record' && row.record])).toEqual([
      [2, { vendor: 'A' }],
      [5, { vendor: 'B' }],
    ]);
  });

  it('ends records at CRLF, LF and a lone CR alike, mixed in one file, quoted line breaks and line numbers kept', async () => {
    // A CRLF header from one file, LF rows from another (`cat header.csv rows.csv`), then a CR row,
    // a quoted cell holding a CRLF and an LF, and a bad row whose line must still be right.
    const text =
      '\uFEFFvendor,amount,description\r\nA,1,x\nB,2,y\rC,3,"two\r\nthree\nlines"\r\nD,4,z\nE,oops,w,extra\nF,6,v\n';
    const whole = await csv(text);
    const bytewise = await collect(
      readCsv(Readable.from([...Buffer.from(text)].map((byte) => Buffer.from([byte]))), 'f.csv', {
        rules: rowRules({ columnMap: parseColumnMap(undefined) }),
      }),
    );
    for (const rows of [whole, bytewise]) {
      expect(rows.map((row) => [row.kind, row.line])).toEqual([
        ['record', 2],
        ['record', 3],
        ['record', 4],
        ['record', 7],
        ['reject', 8],
        ['record', 9],
      ]);
      expect(rows[0]).toMatchObject({ record: { vendor: 'A', amount: 1, description: 'x' } });
      expect(rows[2]).toMatchObject({ record: { vendor: 'C', description: 'two\r\nthree\nlines' } });
      expect(rows[5]).toMatchObject({ record: { vendor: 'F', amount: 6 } });
    }
  });

  it('reads LF rows after a CRLF header, and CRLF rows after an LF header, as valid rows', async () => {
    for (const [header, rows] of [
      ['\r\n', '\n'],
      ['\n', '\r\n'],
    ]) {
      const read = await csv(`vendor,amount${header}A,1${rows}B,2${rows}`);
      expect(read).toEqual([
        { kind: 'record', file: 'f.csv', line: 2, record: { vendor: 'A', amount: 1 } },
        { kind: 'record', file: 'f.csv', line: 3, record: { vendor: 'B', amount: 2 } },
      ]);
    }
  });

  it('rejects an unclosed quote at the end of the file with a line number', async () => {
    const rows = await csv('a,b\n1,2\n3,"open\n');
    expect(rows[0]).toMatchObject({ kind: 'record', line: 2 });
    expect(rows[1]).toMatchObject({ kind: 'reject', line: 3 });
  });

  it("says that Excel's sep= line is not a header, and how to read the file", async () => {
    for (const first of ['sep=;', 'SEP=,']) {
      const rows = collect(
        readCsv(Readable.from([Buffer.from(`${first}\r\ncreated;amount\r\n1;2\r\n`)]), 'f.csv', {
          rules: rowRules({}),
          requireFields: true,
        }),
      );
      await expect(rows).rejects.toThrow(/Excel's "sep=" line, not a header: skip it with --skip-lines 1/);
    }
  });

  it('treats a header that names a field twice as a fatal input error', async () => {
    await expect(csv('vendor,Supplier\n1,2\n', 'vendor=Supplier')).rejects.toThrow(InputError);
  });

  it('rejects --map text that is not field=Column pairs', () => {
    expect(() => parseColumnMap('vendor')).toThrow(/field=Column/);
    expect(() => parseColumnMap('vendor=Supplier,')).toThrow(/field=Column/);
  });

  it('keeps a comma inside a --map column name, and splits pairs where a field= follows the comma', () => {
    expect([...parseColumnMap('amount=Amount (EUR, net), vendor = Supplier,created=Date, time')]).toEqual([
      ['Amount (EUR, net)', 'amount'],
      ['Supplier', 'vendor'],
      ['Date, time', 'created'],
    ]);
  });
});

describe('CSV reader: the last row and the final line break', () => {
  const HEADER = 'created,currency,identifier,type,vendor,amount';
  const ROW = '2024-03-01,EUR,inv-1,expense,Acme,1234.56';
  const read = async (chunks: string[], requireFinalNewline: boolean) => {
    const rules = rowRules({ requireFinalNewline });
    const source = Readable.from(chunks.map((chunk) => Buffer.from(chunk, 'latin1')));
    const rows = await collect(readCsv(source, 'f.csv', { rules }));
    return { kinds: rows.map((row) => `${row.kind}@${row.line}`), noted: rules.rowsWithoutFinalNewline };
  };

  it('leaves a row ended by its line break whole when padding follows it (spaces, a tab, a DOS end-of-file byte)', async () => {
    for (const padding of [' ', '   ', '\t', '\x1a', ' \t\x0c\x1a']) {
      // In one chunk, and with the padding arriving alone, as the last read of a file or a pipe.
      for (const chunks of [[`${HEADER}\n${ROW}\n${padding}`], [`${HEADER}\n${ROW}\n`, padding]]) {
        for (const requireFinalNewline of [false, true]) {
          const { kinds, noted } = await read(chunks, requireFinalNewline);
          expect({ chunks, requireFinalNewline, kinds, noted }).toEqual({
            chunks,
            requireFinalNewline,
            kinds: ['record@2'],
            noted: [],
          });
        }
      }
    }
  });

  it('still names and refuses a last row cut short, padding or not inside it', async () => {
    for (const chunks of [
      [`${HEADER}\n${ROW}\n${ROW.slice(0, -5)}`],
      [`${HEADER}\n${ROW}\n`, `${ROW.slice(0, -5)}  `],
    ]) {
      const { kinds, noted } = await read(chunks, true);
      expect(kinds).toEqual(['record@2', 'reject@3']);
      expect(noted).toEqual([{ file: 'f.csv', line: 3 }]);
    }
  });
});

describe('JSON Lines reader', () => {
  it('rejects bad lines with their numbers and reads on; blank lines are not rows', async () => {
    const rows = await collect(
      readJsonl(bytes('\uFEFF{"a":1}\r\n\n{bad\n[1]\n', [0xc3, 0x28], '\n{"b":2}'), 'f.jsonl'),
    );
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 1],
      ['reject', 3],
      ['reject', 4],
      ['reject', 5],
      ['record', 6],
    ]);
    expect(rows[2]).toMatchObject({ issues: [{ message: 'expected a JSON object, got an array' }] });
    expect(rows[3]).toMatchObject({ issues: [{ message: 'line is not valid UTF-8' }] });
  });

  it('refuses a UTF-16 file whole, saying so, with or without a byte-order mark, whatever the chunks', async () => {
    /** The text in UTF-16 LE and BE, each with and without a byte-order mark. */
    const utf16 = (text: string) => {
      const le = Buffer.from(text, 'utf16le');
      const be = Buffer.from(le).swap16();
      return [Buffer.concat([Buffer.of(0xff, 0xfe), le]), Buffer.concat([Buffer.of(0xfe, 0xff), be]), le, be];
    };
    const byteAtATime = (buffer: Buffer) => Readable.from([...buffer].map((byte) => Buffer.of(byte)));
    for (const file of utf16('{"vendor": "Acme", "amount": 1}\n')) {
      await expect(collect(readJsonl(byteAtATime(file), 'f.jsonl'))).rejects.toThrow(/f.jsonl: the file is UTF-16/);
    }
    for (const file of utf16('[{"vendor": "Acme"}]')) {
      await expect(collect(readJson(byteAtATime(file), 'f.json'))).rejects.toThrow(/f.json: the file is UTF-16/);
    }
    expect(await collect(readJsonl(byteAtATime(Buffer.from('{"vendor": "Acme"}\n')), 'f.jsonl'))).toHaveLength(1);
    expect(await collect(readJsonl(byteAtATime(Buffer.from('{}')), 'f.jsonl'))).toHaveLength(1);
    expect(await collect(readJson(byteAtATime(Buffer.from('[{}]')), 'f.json'))).toHaveLength(1);
    expect(await collect(readJson(Readable.from([Buffer.from('[{}]')]), 'f.json'))).toHaveLength(1);
  });

  it('rejects what JSON.parse would settle silently: a key written twice, a number it would change', async () => {
    const lines = [
      '{"amount": 1, "vendor": "A", "amount": 2}',
      '{"amount": 12345678901234567890, "vendor": "A"}',
      '{"vendor": "A", "amount": -0.123456789012345678e3}',
      '{"am\\u006funt": 1, "amount": 2}',
      '{"amount": 1e-400}',
      `{"amount": 0.${'0'.repeat(400)}1}`,
      '{"merchant": {"name": "Cloud", "name": "Evil Corp"}}',
      '{"merchant": {"ids": [1, 12345678901234567890]}}',
      // What JSON.stringify writes is what it reads as: its shortest form, whatever its digits.
      '{"amount": 0.30000000000000004, "b": -0.12345678901234567e3, "created": 9007199254740991, "x": 1000000000000000000000, "e": 1.5E+3, "z": -0, "t": 1e-7, "s": "12345678901234567890 \\"amount\\": 1", "u": [{"a": 1}, {"a": 2}]}',
    ];
    const rows = await collect(readJsonl(bytes(lines.join('\n')), 'f.jsonl'));
    expect(rows.map((row) => row.kind)).toEqual([...Array(8).fill('reject'), 'record']);
    expect(rows[0]).toMatchObject({
      line: 1,
      issues: [{ field: 'amount', message: expect.stringMatching(/written twice in this object/) }],
    });
    expect(rows[1]).toMatchObject({
      issues: [
        {
          field: 'amount',
          message:
            '12345678901234567890 is not a number JSON can hold: it reads as 12345678901234567000 (at most 15 significant digits are always kept)',
        },
      ],
    });
    expect(rows[2]).toMatchObject({ issues: [{ field: 'amount' }] });
    expect(rows[3]).toMatchObject({ issues: [{ field: 'amount', message: expect.stringMatching(/written twice/) }] });
    expect(rows[4]).toMatchObject({
      issues: [{ field: 'amount', message: expect.stringMatching(/reads as 0 \(beyond the range of a double\)/) }],
    });
    expect(rows[5]).toMatchObject({ issues: [{ field: 'amount', message: expect.stringMatching(/reads as 0 /) }] });
    expect(rows[6]).toMatchObject({
      issues: [
        { field: 'merchant', message: expect.stringMatching(/"name" is written twice in the object under "merchant"/) },
      ],
    });
    expect(rows[7]).toMatchObject({ issues: [{ field: 'merchant' }] });
  });

  it('names every field a problem is under, the same problem under two fields included', async () => {
    const rows = await collect(
      readJsonl(bytes('{"a": 1e400, "b": {"c": 1e400}, "x": {"k": 1, "k": 2}, "y": {"k": 1, "k": 2}}'), 'f.jsonl'),
    );
    expect(rows[0]?.kind === 'reject' && rows[0].issues.map((issue) => issue.field)).toEqual(['a', 'b', 'x', 'y']);
  });

  it('reports a key written a hundred thousand times once, and at most ten problems per record', async () => {
    const many = `{${Array.from({ length: 100_000 }, () => '"a": 1').join(',')}}`;
    const mixed = `{${Array.from({ length: 50 }, (_, n) => `"k${n}": ${n + 1}${'1'.repeat(20)}`).join(',')}}`;
    const rows = await collect(readJsonl(bytes(`${many}\n${mixed}`), 'f.jsonl'));
    expect(rows.map((row) => row.kind === 'reject' && row.issues.length)).toEqual([1, 10]);
  });
});

describe('JSON reader', () => {
  it('streams the elements of a top-level array with the line each starts on', async () => {
    const rows = await collect(readJson(bytes('[\n {"a":1},\n {"a":\n 2}, 7\n]\n'), 'f.json'));
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['record', 2],
      ['record', 3],
      ['reject', 4],
    ]);
  });

  it('reads {"records": [...]} and skips other members, also across chunk boundaries', async () => {
    const text = '{"meta": {"x": [1, "]"]}, "records": [{"s": "a,b}"}, {"t": 2}]}';
    const splitter = new JsonRecordSplitter('f.json');
    const rows: SourceRow[] = [];
    for (const ch of text) rows.push(...splitter.push(ch));
    splitter.end();
    expect(rows.map((row) => (row.kind === 'record' ? row.record : row.kind))).toEqual([{ s: 'a,b}' }, { t: 2 }]);
  });

  it('rejects the same hidden problems in an element, and a "records" written twice as a fatal input error', async () => {
    const rows = await collect(
      readJson(bytes('[{"amount": 1,\n "amount": 2}, {"amount": 9007199254740993}]'), 'f.json'),
    );
    expect(rows.map((row) => [row.kind, row.line])).toEqual([
      ['reject', 1],
      ['reject', 2],
    ]);
    await expect(collect(readJson(bytes('{"records": [{"a": 1}], "records": [{"b": 2}]}'), 'f.json'))).rejects.toThrow(
      /"records" is written twice/,
    );
  });

  it('treats a document that is neither an array nor has records as a fatal input error', async () => {
    await expect(collect(readJson(bytes('{"rows": []}'), 'f.json'))).rejects.toThrow(/"records"/);
    await expect(collect(readJson(bytes('[{"a":1}'), 'f.json'))).rejects.toThrow(/unexpected end/);
  });
});
