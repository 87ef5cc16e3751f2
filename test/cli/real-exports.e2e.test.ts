/**
 * `finance publish` on exports shaped like the ones finance systems write, through the real CLI
 * process against the emulator: the stored records are checked field by field, `created` to the
 * millisecond, also across daylight-saving changes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import { emulatorEnv, killChildren, runCli } from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

const publish = (...args: string[]) => ['finance', 'publish', '--app', DEMO_APP_ID, ...args];
const stored = () => ctx.emulator.mock.state.records(DEMO_APP_ID);
const count = () => ctx.emulator.mock.state.recordCount(DEMO_APP_ID);
const run = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runCli(ctx.cli, args, {
    env: { ...emulatorEnv(ctx.emulator), ...options.env },
    cwd: ctx.temp.dir,
    stdin: options.stdin,
  });
const write = (name: string, text: string | Buffer) => {
  writeFileSync(ctx.temp.path(name), text);
  return ctx.temp.path(name);
};
/**
 * Text as windows-1252 bytes, from the code page's chart (Node encodes no code page itself): latin1,
 * but for the characters windows-1252 puts in 0x80–0x9F, of which these tests use a few.
 */
const WINDOWS_1252_HIGH_BYTES = new Map([
  ['€', 0x80],
  ['Œ', 0x8c],
  ['“', 0x93],
  ['”', 0x94],
  ['–', 0x96],
  ['œ', 0x9c],
]);
function encodeWindows1252(text: string): Buffer {
  return Buffer.from(
    [...text].map((char) => {
      const code = char.charCodeAt(0);
      const byte =
        WINDOWS_1252_HIGH_BYTES.get(char) ?? (code <= 0xff && (code < 0x80 || code > 0x9f) ? code : undefined);
      if (byte === undefined) throw new Error(`${char} is not in this test's windows-1252 chart`);
      return byte;
    }),
  );
}
const rejectsOf = (name: string) =>
  readFileSync(ctx.temp.path(name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { line: number; reasons: { field: string; message: string }[]; raw?: string });

describe('real exports: amounts, dates and time zones', () => {
  it('reads a European bank export: day-first dates in Berlin across both DST changes, 1.234,50 amounts', async () => {
    const file = write(
      'kontoauszug.csv',
      [
        'Buchungstag;Betrag;Währung;Empfänger;Art;Kennung',
        '29.03.2025 23:30;1.234,50;eur;Bäckerei Müller;Expense;konto-1',
        '30.03.2025 02:30;-42,00;EUR;Stadtwerke;expense;konto-1',
        '30.03.2025 03:00;0,99;EUR;Kiosk;EXPENSE;konto-1',
        '26.10.2025 02:30;12.000,00 €;EUR;Vermieter;invoice;konto-1',
        '26.10.2025 03:00;(7,50);EUR;Bank;Invoice;konto-1',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--json',
        '--date-format',
        'DD.MM.YYYY HH:mm',
        '--timezone',
        'Europe/Berlin',
        '--decimal',
        ',',
        '--thousands',
        '.',
        '--map',
        'created=Buchungstag,amount=Betrag,currency=Währung,vendor=Empfänger,type=Art,identifier=Kennung',
        file,
      ),
    );
    expect(result.stderr).not.toContain('push-api:');
    expect(result.code).toBe(0);
    expect(stored()).toEqual([
      {
        created: Date.parse('2025-03-29T22:30:00Z'),
        amount: 1234.5,
        currency: 'EUR',
        vendor: 'Bäckerei Müller',
        type: 'expense',
        identifier: 'konto-1',
      },
      // 02:30 does not exist that night: it is read as 03:30 CEST, as Temporal's 'compatible' does.
      {
        created: Date.parse('2025-03-30T01:30:00Z'),
        amount: -42,
        currency: 'EUR',
        vendor: 'Stadtwerke',
        type: 'expense',
        identifier: 'konto-1',
      },
      {
        created: Date.parse('2025-03-30T01:00:00Z'),
        amount: 0.99,
        currency: 'EUR',
        vendor: 'Kiosk',
        type: 'expense',
        identifier: 'konto-1',
      },
      // 02:30 happens twice that night: the earlier one, still CEST.
      {
        created: Date.parse('2025-10-26T00:30:00Z'),
        amount: 12000,
        currency: 'EUR',
        vendor: 'Vermieter',
        type: 'invoice',
        identifier: 'konto-1',
      },
      {
        created: Date.parse('2025-10-26T02:00:00Z'),
        amount: -7.5,
        currency: 'EUR',
        vendor: 'Bank',
        type: 'invoice',
        identifier: 'konto-1',
      },
    ]);
  });

  it('reads a US bank export: month-first dates in New York, ($1,000.00) and -$42.50, constants from --set', async () => {
    const file = write(
      'us-bank.csv',
      [
        'Posted Date,Description,Amount,Balance,Cost Center',
        '03/09/2025 01:59,Coffee Shop,-$42.50,"$9,957.50",OPS',
        '03/09/2025 02:15,Office Rent,"($1,000.00)","$8,957.50",OPS',
        '11/02/2025 01:30,Refund,"$1,234.56","$10,192.06",FIN',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--json',
        '--date-format',
        'MM/DD/YYYY HH:mm',
        '--timezone',
        'America/New_York',
        '--thousands',
        ',',
        '--map',
        'created=Posted Date,vendor=description',
        '--set',
        'currency=usd',
        '--set',
        'type=Expense',
        '--set',
        'identifier=checking-4411',
        file,
      ),
    );
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ recordsSent: 3, recordsInvalid: 0, ignoredColumns: ['Balance', 'Cost Center'] });
    expect(stored()).toEqual([
      {
        created: Date.parse('2025-03-09T06:59:00Z'),
        vendor: 'Coffee Shop',
        amount: -42.5,
        currency: 'USD',
        type: 'expense',
        identifier: 'checking-4411',
      },
      // 02:15 is in New York's spring-forward gap: read as 03:15 EDT.
      {
        created: Date.parse('2025-03-09T07:15:00Z'),
        vendor: 'Office Rent',
        amount: -1000,
        currency: 'USD',
        type: 'expense',
        identifier: 'checking-4411',
      },
      // 01:30 happens twice on 2 November: the earlier, EDT.
      {
        created: Date.parse('2025-11-02T05:30:00Z'),
        vendor: 'Refund',
        amount: 1234.56,
        currency: 'USD',
        type: 'expense',
        identifier: 'checking-4411',
      },
    ]);
  });

  it('reads ISO date-times without an offset, and dates alone, in --timezone; offsets stay as written', async () => {
    const file = write(
      'iso.jsonl',
      [
        { created: '2025-07-01', amount: '1.50', currency: 'eur', identifier: 'a', type: 'Expense', vendor: ' V ' },
        {
          created: '2025-07-01T09:30:00.250',
          amount: 2,
          currency: 'EUR',
          identifier: 'a',
          type: 'expense',
          vendor: 'V',
        },
        {
          created: '2025-07-01T09:30:00+02:00',
          amount: 3,
          currency: 'EUR',
          identifier: 'a',
          type: 'expense',
          vendor: 'V',
        },
      ]
        .map((record) => JSON.stringify(record))
        .join('\n'),
    );
    const result = await run(publish('--timezone', 'Asia/Tokyo', file));
    expect(result.code).toBe(0);
    expect(
      stored().map((record) => [record.created, record.amount, record.currency, record.type, record.vendor]),
    ).toEqual([
      [Date.parse('2025-06-30T15:00:00Z'), 1.5, 'EUR', 'expense', 'V'],
      [Date.parse('2025-07-01T00:30:00.250Z'), 2, 'EUR', 'expense', 'V'],
      [Date.parse('2025-07-01T07:30:00Z'), 3, 'EUR', 'expense', 'V'],
    ]);
  });

  it('reads unix seconds with --date-format unix', async () => {
    const file = write('unix.csv', 'created,amount,currency,identifier,type,vendor\n1738281600,1,EUR,a,expense,V\n');
    const result = await run(publish('--date-format', 'unix', file));
    expect(result.code).toBe(0);
    expect(stored()[0]?.created).toBe(1738281600000);
  });

  it('takes the currency from a code in the amount, and reports a contradicting code under currency', async () => {
    const file = write(
      'codes.csv',
      [
        'created,amount,identifier,type,vendor,currency',
        '2025-01-31,4.00 eur,a,expense,V,',
        '2025-01-31,USD 5.00,a,expense,V,USD',
        '2025-01-31,6.00 GBP,a,expense,V,EUR',
        '2025-01-31,7.00,a,expense,V,',
      ].join('\n'),
    );
    const result = await run(publish('--rejects', ctx.temp.path('r.jsonl'), file));
    expect(result.code).toBe(3);
    expect(stored().map((record) => [record.amount, record.currency])).toEqual([
      [4, 'EUR'],
      [5, 'USD'],
    ]);
    expect(rejectsOf('r.jsonl').map((entry) => [entry.line, entry.reasons])).toEqual([
      [4, [{ field: 'currency', message: 'the amount is in GBP, the currency says EUR' }]],
      [5, [{ field: 'currency', message: 'missing' }]],
    ]);
  });

  it('calls an amount with a dot ambiguous under --decimal , without --thousands', async () => {
    const file = write(
      'ambiguous.csv',
      'created,amount,currency,identifier,type,vendor\n2025-01-31,"1.234,50",EUR,a,expense,V\n2025-01-31,"4,50",EUR,a,expense,V\n',
    );
    const result = await run(publish('--decimal', ',', '--rejects', ctx.temp.path('r.jsonl'), file));
    expect(result.code).toBe(3);
    expect(stored().map((record) => record.amount)).toEqual([4.5]);
    expect(rejectsOf('r.jsonl')[0]?.reasons[0]).toMatchObject({
      field: 'amount',
      message: expect.stringMatching(/ambiguous/),
    });
  });
});

describe('real exports: columns and files', () => {
  it('reads an Excel save: BOM, CRLF, headers in another case with spaces, empty trailing columns', async () => {
    const text =
      '\uFEFFCreated, Amount ,Currency,IDENTIFIER,Type,Vendor,,\r\n2025-01-31,12.5,eur,jane@example.com,Expense,Acme,,\r\n';
    const file = write('excel.csv', text);
    const result = await run(publish('--json', '--strict-columns', file));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).ignoredColumns).toEqual([]);
    expect(stored()).toEqual([
      {
        created: Date.UTC(2025, 0, 31),
        amount: 12.5,
        currency: 'EUR',
        identifier: 'jane@example.com',
        type: 'expense',
        vendor: 'Acme',
      },
    ]);
  });

  it('reads an Excel "CSV" save in windows-1252 with --encoding, and skips the rows of empty cells Excel leaves', async () => {
    // Excel's plain "CSV" on Western European Windows: the ANSI code page, `;` between cells, and
    // rows of empty cells where cells were formatted and left empty.
    const rows = [
      'Datum;Betrag;Währung;Lieferant;Art;Kennung',
      '31.01.2025;1.234,50 €;EUR;Café Müller;Expense;k-1',
      ';;;;;',
      '01.02.2025;–3,00;EUR;Œuvre “Zoë”;expense;k-2',
      '02.02.2025;3,00;EUR;Ærø Bådværft;expense;k-3',
      ';;;;;',
      ' ; ;;;;',
    ];
    const cp1252 = encodeWindows1252(`${rows.join('\r\n')}\r\n`);
    const file = write('excel-ansi.csv', cp1252);
    const args = [
      '--date-format',
      'DD.MM.YYYY',
      '--decimal',
      ',',
      '--thousands',
      '.',
      '--map',
      'created=Datum,amount=Betrag,currency=Währung,vendor=Lieferant,type=Art,identifier=Kennung',
    ];

    // As UTF-8 (the default) the header is not even readable, and the error says what to try.
    const asUtf8 = await run(publish('--json', ...args, file));
    expect(asUtf8.code).toBe(2);
    expect(asUtf8.stderr).toContain('not valid UTF-8 (saved in a code page? --encoding <name>, such as windows-1252)');

    const result = await run(
      publish('--json', '--rejects', 'excel-ansi.rejects.jsonl', '--encoding', 'windows-1252', ...args, file),
    );
    expect(result.code, result.stderr).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 2, recordsInvalid: 1 });
    expect(stored().map((record) => record.vendor)).toEqual(['Café Müller', 'Ærø Bådværft']);
    expect(stored()[0]).toMatchObject({ amount: 1234.5, currency: 'EUR', type: 'expense' });
    // An en dash is not a minus sign: the row is refused by its line, the rows of empty cells are
    // no rows at all, and the line numbers still count them.
    const [rejected] = rejectsOf('excel-ansi.rejects.jsonl');
    expect(rejected).toMatchObject({
      line: 4,
      reasons: [{ field: 'amount', message: 'not an amount: "–3,00"' }],
      // Œ, “ and ” sit in 0x80–0x9F, where windows-1252 differs from latin1.
      record: { vendor: 'Œuvre “Zoë”' },
    });
  });

  it('reads an Excel "Unicode Text" save: UTF-16LE with a byte-order mark, tab-separated, read without --encoding', async () => {
    const text = [
      'Created\tAmount\tCurrency\tVendor\tType\tIdentifier',
      '2025-01-31\t12.5\tEUR\tΖαχαροπλαστείο 🍰\texpense\tu-1',
      '2025-02-01\t7\tJPY\t東京書店\texpense\tu-2',
    ].join('\r\n');
    const le = write(
      'unicode-text.txt',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${text}\r\n`, 'utf16le')]),
    );
    const result = await run(publish('--json', '--format', 'tsv', le));
    expect(result.code, result.stderr).toBe(0);
    expect(stored().map((record) => record.vendor)).toEqual(['Ζαχαροπλαστείο 🍰', '東京書店']);

    // Big-endian, by its mark; and little-endian with no mark, by --encoding.
    const swapped = Buffer.from(`${text}\r\n`, 'utf16le').swap16();
    const be = write('unicode-be.tsv', Buffer.concat([Buffer.from([0xfe, 0xff]), swapped]));
    const bare = write('unicode-bare.tsv', Buffer.from(`${text}\r\n`, 'utf16le'));
    const unmarked = await run(publish('--json', bare));
    expect(unmarked.code).toBe(2);
    expect(unmarked.stderr).toContain('is the file UTF-16 without a byte-order mark (--encoding utf-16le)?');
    const both = await run(publish('--json', be, '--encoding', 'utf-16le', bare));
    expect(both.code, both.stderr).toBe(0);
    expect(stored()).toHaveLength(6);
    expect(new Set(stored().map((record) => record.vendor))).toEqual(new Set(['Ζαχαροπλαστείο 🍰', '東京書店']));
  });

  it('checks every header before sending, as the run reads it: past empty lines, across a quoted line break, with CR line ends', async () => {
    const good = write('good.csv', 'created,amount,currency,identifier,type,vendor\n2025-01-01,1,EUR,a,expense,A\n');
    const late = write('late-header.csv', '\r\nfoo,bar\r\n1,2\r\n');
    const refused = await run(publish('--json', good, late));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('the header has no column for created');
    expect(count()).toBe(0);

    // A column name with a line break in it (Alt+Enter in Excel), and a Mac export with CR line ends.
    const multiLine = write(
      'notes-header.csv',
      'created,amount,currency,type,vendor,identifier,"Notes\r\n(free text)"\r\n2025-01-01,1,EUR,expense,A,a,x\r\n',
    );
    const mac = write('mac.csv', 'created;amount;currency;identifier;type;vendor\r2025-01-01;1,50;EUR;b;expense;B\r');
    const result = await run(publish('--json', '--decimal', ',', multiLine, mac));
    expect(result.code, result.stderr).toBe(0);
    expect(stored().map((record) => [record.identifier, record.amount])).toEqual([
      ['a', 1],
      ['b', 1.5],
    ]);
  });

  it('ignores columns that fill no field and lists them once, in the summary and --json', async () => {
    const file = write(
      'extra.csv',
      'created,amount,currency,identifier,type,vendor, Cost Center ,Notes\n2025-01-31,1,EUR,a,expense,V,OPS,x\n2025-01-31,2,EUR,a,expense,V,FIN,y\n',
    );
    const human = await run(publish(file));
    expect(human.code).toBe(0);
    expect(`${human.stdout}${human.stderr}`.match(/ignored columns/g)).toHaveLength(1);
    expect(human.stdout).toContain('"Cost Center", "Notes"');
    const json = await run(publish('--json', file));
    expect(JSON.parse(json.stdout).ignoredColumns).toEqual(['Cost Center', 'Notes']);
    expect(stored()).toHaveLength(4);
  });

  it('refuses extra columns up front under --strict-columns (exit 2, naming them), sending nothing', async () => {
    const file = write(
      'strict.csv',
      'created,amount,currency,identifier,type,vendor,Cost Center,,\n2025-01-31,1,EUR,a,expense,V,OPS,,\n',
    );
    const result = await run(publish('--strict-columns', file));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--strict-columns');
    expect(result.stderr).toContain('"Cost Center"');
    expect(count()).toBe(0);
  });

  it('lets --set fill a required field in the header check, and win over a column, which is then ignored', async () => {
    const file = write('set.csv', 'created,amount,identifier,vendor,Type\n2025-01-31,1,a,V,invoice\n');
    const result = await run(publish('--json', '--set', 'currency=chf', '--set', 'type=expense', file));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).ignoredColumns).toEqual(['Type']);
    expect(stored()).toEqual([
      { created: Date.UTC(2025, 0, 31), amount: 1, identifier: 'a', vendor: 'V', currency: 'CHF', type: 'expense' },
    ]);
  });

  it('reads a .tsv file as tab-separated without --format', async () => {
    const file = write(
      'export.tsv',
      'created\tamount\tcurrency\tidentifier\ttype\tvendor\n2025-01-31\t1,5\tEUR\ta\texpense\tA, B and C\n',
    );
    const result = await run(publish('--decimal', ',', file));
    expect(result.code).toBe(0);
    expect(stored()).toEqual([
      {
        created: Date.UTC(2025, 0, 31),
        amount: 1.5,
        currency: 'EUR',
        identifier: 'a',
        type: 'expense',
        vendor: 'A, B and C',
      },
    ]);
  });

  it('reports every problem of a row at once, in the rejects line and in the preview; a parse error carries the raw line', async () => {
    const file = write(
      'broken.csv',
      'created,amount,currency,identifier,type,vendor\n31/02/2025,abc,euro,,refund,V\n31/01/2025,1,EUR,a,expense,"bad"quote\n31/01/2025,1,EUR,a,expense,Good\n',
    );
    const preview = await run(publish('--date-format', 'DD/MM/YYYY', file));
    expect(preview.code).toBe(3);
    const line2 = preview.stderr.split('\n').find((line) => line.includes('broken.csv:2:')) ?? '';
    for (const field of ['created:', 'amount:', 'currency:', 'identifier: missing', 'type:'])
      expect(line2).toContain(field);
    await run(publish('--date-format', 'DD/MM/YYYY', '--rejects', ctx.temp.path('r.jsonl'), file));
    const [first, second] = rejectsOf('r.jsonl');
    expect(first?.reasons.map((reason) => reason.field)).toEqual([
      'created',
      'amount',
      'currency',
      'identifier',
      'type',
    ]);
    expect(first?.reasons[3]?.message).toBe('missing');
    expect(second).toMatchObject({ line: 3, raw: '31/01/2025,1,EUR,a,expense,"bad"quote' });
    expect(stored().map((record) => record.vendor)).toEqual(['Good', 'Good']);
  });
});

describe('real exports: --transform', () => {
  it('turns a vendor JSONL into records: cents to units, a nested merchant, rows skipped as filtered', async () => {
    mkdirSync(ctx.temp.path('transforms'));
    write(
      'transforms/vendor.mjs',
      `export default (row, context) => {
  if (row.status === 'pending') return null;
  if (row.status === 'broken') throw new Error('status broken on line ' + context.line);
  return {
    created: row.ts,
    amount: row.amount_cents / 100,
    currency: row.ccy,
    identifier: row.card.holder,
    type: 'Expense',
    vendor: row.merchant.name,
    description: context.file.endsWith('vendor.jsonl') ? 'line ' + context.line : 'wrong file',
  };
};
`,
    );
    const rows = [
      {
        ts: '2025-03-30T02:30',
        amount_cents: 1999,
        ccy: 'usd',
        card: { holder: 'jane' },
        merchant: { name: 'Cafe' },
        status: 'settled',
      },
      {
        ts: '2025-03-30T04:00',
        amount_cents: 500,
        ccy: 'usd',
        card: { holder: 'jane' },
        merchant: { name: 'Bar' },
        status: 'pending',
      },
      {
        ts: '2025-03-30T05:00',
        amount_cents: 100,
        ccy: 'usd',
        card: { holder: 'jane' },
        merchant: { name: 'X' },
        status: 'broken',
      },
      {
        ts: '2025-03-30T06:00',
        amount_cents: -250,
        ccy: 'usd',
        card: { holder: 'joe' },
        merchant: { name: 'Shop' },
        status: 'settled',
      },
    ];
    write('vendor.jsonl', `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
    const result = await run(
      publish(
        '--json',
        '--timezone',
        'Europe/London',
        '--transform',
        'transforms/vendor.mjs',
        '--rejects',
        'r.jsonl',
        'vendor.jsonl',
      ),
    );
    expect(result.code).toBe(3);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ recordsSent: 2, recordsFiltered: 1, recordsInvalid: 1, recordsSkipped: 0 });
    expect(stored()).toEqual([
      // London skipped 01:00-02:00 that night; 02:30 is after the gap, BST.
      {
        created: Date.parse('2025-03-30T01:30:00Z'),
        amount: 19.99,
        currency: 'USD',
        identifier: 'jane',
        type: 'expense',
        vendor: 'Cafe',
        description: 'line 1',
      },
      {
        created: Date.parse('2025-03-30T05:00:00Z'),
        amount: -2.5,
        currency: 'USD',
        identifier: 'joe',
        type: 'expense',
        vendor: 'Shop',
        description: 'line 4',
      },
    ]);
    expect(rejectsOf('r.jsonl')).toMatchObject([
      { line: 3, reasons: [{ field: '', message: '--transform: status broken on line 3' }] },
    ]);
    const human = await run(publish('--transform', 'transforms/vendor.mjs', '--dry-run', 'vendor.jsonl'));
    expect(human.stdout).toMatch(/filtered\s+1/);
  });

  it('gives a CSV transform the raw row by header name with the line as in rejects; a .cjs module works too', async () => {
    write(
      'shape.cjs',
      `module.exports = async (row, context) => ({
  created: row['Booked On'], amount: row['Net (cents)'] / 100, currency: 'EUR', identifier: row.Card,
  type: 'expense', vendor: row.Merchant, transactionNumber: String(context.line),
});
`,
    );
    write(
      'cards.csv',
      'Booked On,Net (cents),Card,Merchant,Skip Me\n2025-01-31,1234,c-1,"Multi\nLine",x\n2025-02-01,-5,c-2,Shop,y\n',
    );
    const result = await run(publish('--transform', './shape.cjs', 'cards.csv'));
    expect(result.code).toBe(0);
    expect(stored()).toEqual([
      {
        created: Date.UTC(2025, 0, 31),
        amount: 12.34,
        currency: 'EUR',
        identifier: 'c-1',
        type: 'expense',
        vendor: 'Multi\nLine',
        transactionNumber: '2',
      },
      {
        created: Date.UTC(2025, 1, 1),
        amount: -0.05,
        currency: 'EUR',
        identifier: 'c-2',
        type: 'expense',
        vendor: 'Shop',
        transactionNumber: '4',
      },
    ]);
  });

  it('reads a .js transform as ESM or CommonJS by the nearest package.json', async () => {
    mkdirSync(ctx.temp.path('esm'));
    mkdirSync(ctx.temp.path('cjs'));
    write('esm/package.json', '{"type":"module"}');
    write('cjs/package.json', '{"type":"commonjs"}');
    write('esm/t.js', "export default (row) => ({ ...row, vendor: 'from esm' });\n");
    write('cjs/t.js', "module.exports = (row) => ({ ...row, vendor: 'from cjs' });\n");
    write(
      'in.jsonl',
      '{"created":"2025-01-31","amount":1,"currency":"EUR","identifier":"a","type":"expense","vendor":"x"}\n',
    );
    expect((await run(publish('--transform', 'esm/t.js', 'in.jsonl'))).code).toBe(0);
    expect((await run(publish('--transform', 'cjs/t.js', 'in.jsonl'))).code).toBe(0);
    expect(stored().map((record) => record.vendor)).toEqual(['from esm', 'from cjs']);
  });
});

describe('real exports: bad option values are exit 2 before anything is sent', () => {
  const file = 'ok.csv';
  const cases: [string, string[], RegExp][] = [
    ['an unknown --date-format token', ['--date-format', 'DD/MMMMM/YYYY'], /--date-format .*unknown token "MMMMM"/],
    [
      'an unknown --timezone',
      ['--timezone', 'Mars/Olympus_Mons'],
      /--timezone: unknown time zone "Mars\/Olympus_Mons"/,
    ],
    ['a --set of an unknown field', ['--set', 'merchant=Acme'], /--set: "merchant" is not a field.*"vendor"/],
    ['a --transform that does not exist', ['--transform', 'nope.mjs'], /--transform nope\.mjs: no such file/],
    // Node's loader would block on a FIFO nobody writes to: the run would hang before it starts.
    ['a --transform that is a FIFO', ['--transform', 'fifo.mjs'], /--transform fifo\.mjs: not a regular file/],
    ['a --transform that is a directory', ['--transform', 'dir.mjs'], /--transform dir\.mjs: not a regular file/],
    [
      'a --transform that does not parse',
      ['--transform', 'syntax.mjs'],
      /--transform syntax\.mjs: the module cannot be loaded/,
    ],
    [
      'a --transform without a default function',
      ['--transform', 'nodefault.mjs'],
      /--transform nodefault\.mjs: .*default export/,
    ],
    ['a bad --decimal', ['--decimal', ';'], /--decimal/],
    ['an unknown --encoding', ['--encoding', 'klingon'], /--encoding: unknown encoding "klingon"/],
    [
      'an --encoding of more than one byte per character other than UTF-16',
      ['--encoding', 'shift_jis'],
      /--encoding: shift_jis cannot be read/,
    ],
    [
      '--map to a name that is not a field',
      ['--map', 'merchant=Supplier'],
      /--map: "merchant" is not a field.*did you mean "vendor"/,
    ],
  ];
  for (const [name, args, message] of cases) {
    it(name, async () => {
      write(file, 'created,amount,currency,identifier,type,vendor\n2025-01-31,1,EUR,a,expense,V\n');
      write('syntax.mjs', 'export default (row) => {\n');
      write('nodefault.mjs', 'export const shape = (row) => row;\n');
      if (!existsSync(ctx.temp.path('fifo.mjs'))) execFileSync('mkfifo', [ctx.temp.path('fifo.mjs')]);
      mkdirSync(ctx.temp.path('dir.mjs'), { recursive: true });
      const result = await run(publish(...args, file));
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(count()).toBe(0);
    });
  }
});

describe('real exports: the smaller ones', () => {
  it('names PUSH_APP_ID when --app is missing', async () => {
    const file = write('a.csv', 'created,amount,currency,identifier,type,vendor\n2025-01-31,1,EUR,a,expense,V\n');
    const result = await run(['finance', 'publish', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--app.*PUSH_APP_ID/);
    const upload = await run(['upload', '--type', 'users', file]);
    expect(upload.code).toBe(2);
    expect(upload.stderr).toMatch(/--app.*PUSH_APP_ID/);
  });

  it('runs --dry-run with no app and no credentials', async () => {
    const file = write('a.csv', 'created,amount,currency,identifier,type,vendor\n2025-01-31,1,EUR,a,expense,V\n');
    const result = await runCli(ctx.cli, ['finance', 'publish', '--dry-run', '--json', file], { env: {} });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsValid: 1, dryRun: true });
  });

  it('says "missing" for an empty amount', async () => {
    const file = write('a.csv', 'created,amount,currency,identifier,type,vendor\n2025-01-31,,EUR,a,expense,V\n');
    const result = await run(publish(file));
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('a.csv:2: amount: missing');
  });

  it('exits 3 with "no records" for an empty input file, a header-only CSV included', async () => {
    const empty = write('empty.jsonl', '');
    const headerOnly = write('header.csv', 'created,amount,currency,identifier,type,vendor\n');
    for (const file of [empty, headerOnly]) {
      const result = await run(publish('--json', file));
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('no records');
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exitCode: 3, rowsRead: 0 });
    }
  });

  it('suggests a glob for upload DIR/', async () => {
    mkdirSync(ctx.temp.path('batch'));
    write('batch/users.csv', 'email\na@example.com\n');
    const result = await run(['upload', '--app', DEMO_APP_ID, '--type', 'users', 'batch/']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("quote a glob: 'batch/*'");
  });
});

describe('push-api finance template', () => {
  for (const format of ['csv', 'jsonl'] as const) {
    it(`prints a ${format} template with every field, without comment lines, that publishes as is`, async () => {
      const template = await run(['finance', 'template', '--format', format]);
      expect(template.code).toBe(0);
      const lines = template.stdout.trim().split('\n');
      expect(lines.some((line) => line.startsWith('#'))).toBe(false);
      const fields = [
        'created',
        'amount',
        'currency',
        'identifier',
        'type',
        'vendor',
        'name',
        'category',
        'description',
        'transactionNumber',
      ];
      if (format === 'csv') expect(lines[0]?.split(',')).toEqual(fields);
      else expect(Object.keys(JSON.parse(lines[0] as string))).toEqual(fields);
      const result = await run(publish('--format', format, '-'), { stdin: template.stdout });
      expect(result.code).toBe(0);
      expect(Object.keys(stored()[0] ?? {}).sort()).toEqual([...fields].sort());
    });
  }
});

describe('real exports: a transform that misbehaves', () => {
  it('makes only its own rows invalid: undefined, a non-object, a record whose getter throws', async () => {
    write(
      'odd.mjs',
      `export default (row) => {
  if (row.kind === 'undefined') return undefined;
  if (row.kind === 'number') return 42;
  if (row.kind === 'getter') return { get amount() { throw new Error('getter exploded'); } };
  return { created: '2025-01-31', amount: 1, currency: 'EUR', identifier: 'a', type: 'expense', vendor: row.kind };
};
`,
    );
    write('odd.jsonl', ['undefined', 'number', 'getter', 'fine'].map((kind) => JSON.stringify({ kind })).join('\n'));
    const result = await run(publish('--json', '--transform', 'odd.mjs', '--rejects', 'r.jsonl', 'odd.jsonl'));
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 1, recordsInvalid: 3 });
    expect(rejectsOf('r.jsonl').map((entry) => [entry.line, entry.reasons[0]?.message])).toEqual([
      [1, '--transform returned undefined; expected a record object, or null to skip the row'],
      [2, '--transform returned a number; expected a record object, or null to skip the row'],
      [3, 'the record cannot be read: getter exploded'],
    ]);
    expect(stored().map((record) => record.vendor)).toEqual(['fine']);
  });
});

describe('real exports: more shapes', () => {
  it('reads a card export in TSV: 1/31/2025 9:30 PM in Chicago, trailing minus signs, codes in the amount', async () => {
    const file = write(
      'card.tsv',
      [
        'Transaction Date\tMerchant\tAmount\tCard Member',
        '1/31/2025 9:30 PM\tAirline\t1,234.00- USD\tJ DOE',
        '3/9/2025 2:30 AM\tHotel\t99.10 usd\tJ DOE',
        '11/2/2025 1:05 AM\tTaxi\tUSD 12.00\tJ DOE',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--date-format',
        'M/D/YYYY h:mm A',
        '--timezone',
        'America/Chicago',
        '--thousands',
        ',',
        '--map',
        'created=Transaction Date,vendor=Merchant,identifier=Card Member',
        '--set',
        'type=expense',
        file,
      ),
    );
    expect(result.stderr).not.toContain('push-api:');
    expect(result.code).toBe(0);
    expect(stored()).toEqual([
      {
        created: Date.parse('2025-02-01T03:30:00Z'),
        vendor: 'Airline',
        amount: -1234,
        currency: 'USD',
        identifier: 'J DOE',
        type: 'expense',
      },
      // 02:30 is skipped in Chicago that night: read as 03:30 CDT.
      {
        created: Date.parse('2025-03-09T08:30:00Z'),
        vendor: 'Hotel',
        amount: 99.1,
        currency: 'USD',
        identifier: 'J DOE',
        type: 'expense',
      },
      // 01:05 happens twice on 2 November: the earlier, CDT.
      {
        created: Date.parse('2025-11-02T06:05:00Z'),
        vendor: 'Taxi',
        amount: 12,
        currency: 'USD',
        identifier: 'J DOE',
        type: 'expense',
      },
    ]);
  });
});

describe('real exports: field-tested shapes', () => {
  it('reads a Nordic bank export: -1 234,50 kr beside its currency, and refuses kr beside EUR', async () => {
    const file = write(
      'kontoutdrag.csv',
      [
        'created;amount;currency;identifier;type;vendor',
        '2025-01-31;-1 234,50 kr;SEK;s1;expense;ICA',
        '2025-01-31;12,00 kr;EUR;s2;expense;ICA',
        '2025-01-31;99,00 zł;PLN;s3;expense;Biedronka',
      ].join('\n'),
    );
    const result = await run(
      publish('--decimal', ',', '--thousands', 'space', '--rejects', ctx.temp.path('n.jsonl'), file),
    );
    expect(result.code).toBe(3);
    expect(stored().map((record) => [record.identifier, record.amount, record.currency])).toEqual([
      ['s1', -1234.5, 'SEK'],
      ['s3', 99, 'PLN'],
    ]);
    expect(rejectsOf('n.jsonl').map((entry) => [entry.line, entry.reasons[0]?.message])).toEqual([
      [3, 'the amount is in SEK or NOK or DKK or ISK, the currency says EUR'],
    ]);
  });

  it("skips the title lines above a Xero-style table with --skip-lines, keeping the file's line numbers", async () => {
    const file = write(
      'account-transactions.csv',
      [
        'Account Transactions',
        '"Demo Company (UK), Ltd"',
        'For the period 1 January 2025 to 31 January 2025',
        'Date,Amount,Currency,Identifier,Type,Vendor',
        '03 Jan 2025,12.50,GBP,x1,expense,Tesco',
        '04 Jan 2025,n/a,GBP,x2,expense,Tesco',
        '',
      ].join('\r\n'),
    );
    const args = ['--skip-lines', '3', '--date-format', 'DD MMM YYYY', '--map', 'created=Date'];
    const result = await run(publish(...args, '--rejects', ctx.temp.path('x.jsonl'), file));
    expect(result.code, result.stderr).toBe(3);
    expect(stored().map((record) => [record.identifier, record.amount])).toEqual([['x1', 12.5]]);
    expect(rejectsOf('x.jsonl').map((entry) => entry.line)).toEqual([6]);
    // Without it, the first title line is taken for the header: refused before anything is sent.
    const without = await run(publish('--date-format', 'DD MMM YYYY', file));
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('account-transactions.csv:1:');
    const tooMany = await run(publish('--skip-lines', '9', file));
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('account-transactions.csv: 6 lines, fewer than --skip-lines 9');
    const json = write('a.jsonl', '{}\n');
    expect((await run(publish('--skip-lines', '1', json))).stderr).toContain('--skip-lines skips the lines above');
  });

  it("reads month names and two-digit years: an Oracle-style 31-JAN-25 and a ledger's 03 Jan 2025", async () => {
    const oracle = write(
      'oracle.csv',
      [
        'TRX_DATE,AMOUNT,CURRENCY,IDENTIFIER,TYPE,VENDOR',
        '31-JAN-25,12.5,USD,o1,expense,Acme',
        '29-FEB-24,1,USD,o2,expense,Acme',
      ].join('\n'),
    );
    expect((await run(publish('--date-format', 'DD-MMM-YY', '--map', 'created=TRX_DATE', oracle))).code).toBe(0);
    const ledger = write(
      'ledger.csv',
      [
        'Date,Amount,Currency,Identifier,Type,Vendor',
        '03 Jan 2025,7,GBP,l1,expense,Tesco',
        '3 Sept 2025,7,GBP,l2,expense,Tesco',
      ].join('\n'),
    );
    const result = await run(
      publish('--date-format', 'D MMM YYYY', '--timezone', 'Europe/London', '--map', 'created=Date', ledger),
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('ledger.csv:3: created: not a date: "3 Sept 2025"');
    expect(stored().map((record) => [record.identifier, record.created])).toEqual([
      ['o1', Date.UTC(2025, 0, 31)],
      ['o2', Date.UTC(2024, 1, 29)],
      ['l1', Date.UTC(2025, 0, 3)],
    ]);
  });

  it('never stores a row whose amount names another dollar (C$, RD$) under the currency column', async () => {
    // A letter before `$` names one dollar (or a few): stripping it as a bare `$` would store the
    // row's currency for an amount the file says is in another one.
    const file = write(
      'dollars.csv',
      [
        'created,amount,currency,identifier,type,vendor',
        '2025-01-31,C$12.00,CAD,a,expense,Toronto',
        '2025-01-31,C$12.00,USD,a,expense,Toronto',
        '2025-01-31,RD$12.00,USD,a,expense,Santo Domingo',
        '2025-01-31,US$12.00,USD,a,expense,New York',
        '2025-01-31,$12.00,USD,a,expense,Anywhere',
      ].join('\n'),
    );
    const result = await run(publish('--rejects', ctx.temp.path('r.jsonl'), file));
    expect(result.code).toBe(3);
    expect(stored().map((record) => [record.vendor, record.amount, record.currency])).toEqual([
      ['Toronto', 12, 'CAD'],
      ['New York', 12, 'USD'],
      ['Anywhere', 12, 'USD'],
    ]);
    expect(rejectsOf('r.jsonl').map((entry) => [entry.line, entry.reasons])).toEqual([
      [3, [{ field: 'currency', message: 'the amount is in CAD or NIO, the currency says USD' }]],
      [
        4,
        [
          {
            field: 'amount',
            message: expect.stringMatching(/^not an amount: "RD\$12\.00": RD\$ names a currency by a prefix/),
          },
        ],
      ],
    ]);
  });

  it('matches a header and --map written in different Unicode forms (Währung composed or decomposed)', async () => {
    // macOS tools may write é as e + U+0301; the terminal sends what was typed, usually composed.
    const decomposed = (text: string) => text.normalize('NFD');
    const file = write(
      'nfd.csv',
      [
        `Datum;Betrag;${decomposed('Währung')};${decomposed('Empfänger')};Art;Kennung`,
        `31.01.2025;-12,50;EUR;${decomposed('Bäcker')};expense;k1`,
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--date-format',
        'DD.MM.YYYY',
        '--decimal',
        ',',
        '--map',
        'created=Datum,amount=Betrag,currency=Währung,vendor=Empfänger,type=Art,identifier=Kennung',
        file,
      ),
    );
    expect(result.stderr).not.toContain('push-api:');
    expect(result.code).toBe(0);
    // The cells are stored as written: only the column names are compared in one form.
    expect(stored()).toEqual([
      {
        created: Date.UTC(2025, 0, 31),
        amount: -12.5,
        currency: 'EUR',
        vendor: decomposed('Bäcker'),
        type: 'expense',
        identifier: 'k1',
      },
    ]);
  });

  it('matches a header that has a no-break space (U+00A0) where --map has a space', async () => {
    // French-locale tools put a no-break space before a bracket or a colon; it looks like a space.
    const file = write(
      'releve.csv',
      [
        'Date opération;Montant\u00a0(EUR);Devise;Libellé;Type;Compte',
        '31/01/2025;-12,50;EUR;Boulangerie;expense;c1',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--date-format',
        'DD/MM/YYYY',
        '--timezone',
        'Europe/Paris',
        '--decimal',
        ',',
        '--map',
        'created=Date opération,amount=Montant (EUR),currency=Devise,vendor=Libellé,identifier=Compte',
        file,
      ),
    );
    expect(result.stderr).not.toContain('push-api:');
    expect(result.code).toBe(0);
    expect(stored()).toEqual([
      {
        created: Date.parse('2025-01-30T23:00:00Z'),
        amount: -12.5,
        currency: 'EUR',
        vendor: 'Boulangerie',
        type: 'expense',
        identifier: 'c1',
      },
    ]);
  });

  it('reads Swiss amounts grouped with ’ (U+2019, as macOS and CLDR write them) under --thousands "\'"', async () => {
    const file = write(
      'swiss.csv',
      [
        'Datum,Buchungstext,Betrag,Währung',
        "31.01.2025,Migros,CHF -1'234.50,CHF",
        '01.02.2025,Coop,CHF -1\u2019234.50,CHF',
        '02.02.2025,Post,1\u2019234\u2019567.05,CHF',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--date-format',
        'DD.MM.YYYY',
        '--timezone',
        'Europe/Zurich',
        '--thousands',
        "'",
        '--map',
        'created=Datum,vendor=Buchungstext,amount=Betrag,currency=Währung',
        '--set',
        'type=expense',
        '--set',
        'identifier=ubs-1',
        file,
      ),
    );
    expect(result.stderr).not.toContain('push-api:');
    expect(result.code).toBe(0);
    expect(stored().map((record) => [record.vendor, record.amount, record.currency, record.created])).toEqual([
      ['Migros', -1234.5, 'CHF', Date.parse('2025-01-30T23:00:00Z')],
      ['Coop', -1234.5, 'CHF', Date.parse('2025-01-31T23:00:00Z')],
      ['Post', 1234567.05, 'CHF', Date.parse('2025-02-01T23:00:00Z')],
    ]);
  });

  it('reads accounting brackets after the currency sign: $(1,234.56), " $ (1,234.56) ", (1,234.56) EUR', async () => {
    const file = write(
      'accounting.csv',
      [
        'Date,Merchant,Amount,Currency,User',
        '2025-01-31,Acme,"$(1,234.56)",USD,a@example.com',
        '2025-01-31,Acme," $ (1,234.56) ",USD,a@example.com',
        '2025-01-31,Acme,"EUR (1,234.56)",,a@example.com',
        '2025-01-31,Acme,"(1,234.56) EUR",,a@example.com',
        '2025-01-31,Acme,"-$(1.00)",USD,a@example.com',
      ].join('\n'),
    );
    const result = await run(
      publish(
        '--thousands',
        ',',
        '--map',
        'created=Date,vendor=Merchant,identifier=User',
        '--set',
        'type=expense',
        '--rejects',
        ctx.temp.path('r.jsonl'),
        file,
      ),
    );
    expect(result.code).toBe(3);
    expect(stored().map((record) => [record.amount, record.currency])).toEqual([
      [-1234.56, 'USD'],
      [-1234.56, 'USD'],
      [-1234.56, 'EUR'],
      [-1234.56, 'EUR'],
    ]);
    expect(rejectsOf('r.jsonl').map((entry) => [entry.line, entry.reasons])).toEqual([
      [6, [{ field: 'amount', message: 'two minus signs: "-$(1.00)"' }]],
    ]);
  });

  it('names --date-format unix for a created of Unix seconds', async () => {
    const file = write(
      'seconds.csv',
      'created,amount,currency,identifier,type,vendor\n1738315800,10.00,USD,a,expense,V\n',
    );
    const result = await run(publish('--rejects', ctx.temp.path('r.jsonl'), file));
    expect(result.code).toBe(3);
    expect(count()).toBe(0);
    expect(rejectsOf('r.jsonl')[0]?.reasons).toEqual([
      { field: 'created', message: '"1738315800" looks like Unix seconds: use --date-format unix' },
    ]);
  });
});
