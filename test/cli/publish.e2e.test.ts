import { readFileSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID, DEMO_CLIENT_SECRET } from 'push-api-client/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliFixture } from '../support/cli/emulator.js';
import {
  ANSI_ESCAPE,
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  jsonlRecord,
  killChildren,
  runCli,
} from '../support/cli/run.js';

const ctx = useCliFixture();
afterAll(killChildren);

const publish = (...args: string[]) => ['finance', 'publish', '--app', DEMO_APP_ID, ...args];
const count = () => ctx.emulator.mock.state.recordCount(DEMO_APP_ID);

describe('push-api finance publish', () => {
  it('exits 0 when every record is sent, and --json prints exactly one parseable report on stdout', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(2500)}\n`);
    const result = await runCli(ctx.cli, publish('--json', '--batch-size', '1000', ctx.temp.path('in.csv')), {
      env: emulatorEnv(ctx.emulator),
    });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ recordsSent: 2500, recordsInvalid: 0, batchesSent: 3, exitCode: 0 });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(count()).toBe(2500);
  });

  it('exits 3 and writes each broken CSV row to --rejects with its line and reason', async () => {
    const rows = [
      CSV_HEADER,
      csvRows(1),
      '1704067200000,abc,USD,x,expense,V,d',
      csvRows(1, 1),
      '1,2,3',
      csvRows(1, 2),
      '1704067200000,1,usd,x,Expense,V,d',
      '1704067200000,1,US,x,expense,V,d',
    ];
    writeFileSync(ctx.temp.path('in.csv'), `${rows.join('\n')}\n`);
    const result = await runCli(
      ctx.cli,
      publish('--rejects', ctx.temp.path('rejects.jsonl'), ctx.temp.path('in.csv')),
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    expect(result.code).toBe(3);
    const rejects = readFileSync(ctx.temp.path('rejects.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rejects.map((entry) => [entry.kind, entry.line, entry.reasons[0].field])).toEqual([
      ['invalid', 3, 'amount'],
      ['invalid', 5, ''],
      ['invalid', 8, 'currency'],
    ]);
    expect(rejects[0].file).toBe(ctx.temp.path('in.csv'));
    // Line 7's currency and type are normalised (USD, expense), so it is sent.
    expect(count()).toBe(4);
  });

  it('sends every valid row after a malformed quote, rejecting only that row by its line (exit 3)', async () => {
    const lines = csvRows(1000).split('\n');
    lines.splice(11, 0, '1704067200000,1,USD,x,expense,"bad"quote,d');
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${lines.join('\n')}\n`);
    const result = await runCli(
      ctx.cli,
      publish('--json', '--rejects', ctx.temp.path('r.jsonl'), ctx.temp.path('in.csv')),
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ rowsRead: 1001, recordsSent: 1000, recordsInvalid: 1 });
    const rejects = readFileSync(ctx.temp.path('r.jsonl'), 'utf8').trim().split('\n');
    expect(rejects).toHaveLength(1);
    expect(JSON.parse(rejects[0] as string)).toMatchObject({
      kind: 'invalid',
      line: 13,
      reasons: [{ field: 'vendor' }],
    });
    expect(count()).toBe(1000);
  });

  it('applies --map to JSON Lines keys as it does to CSV columns', async () => {
    const record = { ...JSON.parse(jsonlRecord(0)), Supplier: 'Acme' };
    delete record.vendor;
    writeFileSync(ctx.temp.path('in.jsonl'), `${JSON.stringify(record)}\n`);
    const result = await runCli(ctx.cli, publish('--json', '--map', 'vendor=Supplier', ctx.temp.path('in.jsonl')), {
      env: emulatorEnv(ctx.emulator),
    });
    expect(result.code).toBe(0);
    expect(ctx.emulator.mock.state.records(DEMO_APP_ID)[0]).toMatchObject({ vendor: 'Acme' });
  });

  it('refuses --checkpoint with --dry-run, exit 2, in one line', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(1)}\n`);
    const result = await runCli(
      ctx.cli,
      publish('--dry-run', '--checkpoint', ctx.temp.path('cp.json'), ctx.temp.path('in.csv')),
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('push-api: --checkpoint cannot be used with --dry-run');
  });

  it('refuses an input named twice (./x.csv and x.csv), exit 2, sending nothing rather than every record twice', async () => {
    writeFileSync(ctx.temp.path('twice.csv'), `${CSV_HEADER}\n${csvRows(3)}\n`);
    const before = count();
    const result = await runCli(ctx.cli, publish('--json', 'twice.csv', './twice.csv'), {
      env: emulatorEnv(ctx.emulator),
      cwd: ctx.temp.dir,
    });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout).error.message).toBe(
      './twice.csv and twice.csv are the same file; name each input once, or its records are sent twice',
    );
    expect(count()).toBe(before);
  });

  it('reads JSON Lines from stdin and rejects malformed lines by number', async () => {
    const input = [jsonlRecord(0), '{not json', jsonlRecord(1), '', jsonlRecord(2)].join('\n');
    const result = await runCli(ctx.cli, publish('--format', 'jsonl', '--rejects', ctx.temp.path('r.jsonl'), '-'), {
      env: emulatorEnv(ctx.emulator),
      stdin: input,
    });
    expect(result.code).toBe(3);
    const [reject] = readFileSync(ctx.temp.path('r.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(reject).toMatchObject({ kind: 'invalid', file: '<stdin>', line: 2 });
    expect(reject.reasons[0].message).toMatch(/invalid JSON/);
    expect(count()).toBe(3);
  });

  it('--dry-run validates and sends nothing, without credentials', async () => {
    writeFileSync(ctx.temp.path('in.json'), JSON.stringify({ records: [JSON.parse(jsonlRecord(0)), { vendor: 'x' }] }));
    const result = await runCli(ctx.cli, publish('--dry-run', '--json', ctx.temp.path('in.json')));
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({
      dryRun: true,
      recordsValid: 1,
      recordsInvalid: 1,
      recordsSent: 0,
    });
    expect(count()).toBe(0);
    expect(ctx.emulator.mock.state.requests).toHaveLength(0);
  });

  it('exits 3 when the service refuses a batch, and lists its records as failed in --rejects', async () => {
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, status: 400, times: 1 });
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(20)}\n`);
    const result = await runCli(
      ctx.cli,
      publish(
        '--batch-size',
        '10',
        '--concurrency',
        '1',
        '--rejects',
        ctx.temp.path('r.jsonl'),
        ctx.temp.path('in.csv'),
      ),
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    expect(result.code).toBe(3);
    const rejects = readFileSync(ctx.temp.path('r.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rejects).toHaveLength(10);
    expect(rejects[0]).toMatchObject({ kind: 'failed', line: 2, batch: 0 });
    expect(count()).toBe(10);
  });

  it('exits 3 when a batch outcome is unknown (502) and the rest was sent', async () => {
    ctx.emulator.mock.faults.add({ match: { operation: 'finance' }, status: 502, times: 1 });
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(20)}\n`);
    const result = await runCli(
      ctx.cli,
      publish('--batch-size', '10', '--concurrency', '1', '--json', ctx.temp.path('in.csv')),
      {
        env: emulatorEnv(ctx.emulator),
      },
    );
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 10, recordsUnknown: 10 });
  });

  it.each([
    [['finance', 'publish', '--app', 'a', 'missing.csv'], /missing\.csv: no such file/],
    [['finance', 'publish', '--app', 'a', 'data.xml'], /unknown format/],
    [['finance', 'publish', '--app', 'a', '--batch-size', '1001', 'x.csv'], /--batch-size/],
    [['finance', 'publish', 'x.csv'], /--app/],
    [['finance', 'publish', '--app', 'a', '--client-secret', 's', 'x.csv'], /unknown option/],
  ])('exits 2 with a one-line error for %j', async (args, message) => {
    const result = await runCli(ctx.cli, args, { cwd: ctx.temp.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('names the missing variable or flag, exit 2', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(1)}\n`);
    const env = { ...emulatorEnv(ctx.emulator), PUSH_BASE_URL: undefined };
    const result = await runCli(ctx.cli, publish(ctx.temp.path('in.csv')), { env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('push-api: missing data API address: set PUSH_BASE_URL or pass --base-url');
  });

  it('writes plain progress without escape codes and never prints the secret anywhere', async () => {
    writeFileSync(ctx.temp.path('in.csv'), `${CSV_HEADER}\n${csvRows(30)}\nbad,row\n`);
    writeFileSync(ctx.temp.path('secret.txt'), `${DEMO_CLIENT_SECRET}\n`);
    const env = { ...emulatorEnv(ctx.emulator), PUSH_CLIENT_SECRET: undefined };
    const args = publish(
      '--client-secret-file',
      ctx.temp.path('secret.txt'),
      '--verbose',
      '--rejects',
      ctx.temp.path('r.jsonl'),
      '--checkpoint',
      ctx.temp.path('cp.json'),
      ctx.temp.path('in.csv'),
    );
    const result = await runCli(ctx.cli, args, { env });
    expect(result.code).toBe(3);
    expect(result.stdout + result.stderr).not.toMatch(ANSI_ESCAPE);
    for (const text of [
      result.stdout,
      result.stderr,
      readFileSync(ctx.temp.path('r.jsonl'), 'utf8'),
      readFileSync(ctx.temp.path('cp.json'), 'utf8'),
    ]) {
      expect(text).not.toContain(DEMO_CLIENT_SECRET);
    }
    const tokens = ctx.emulator.mock.state.tokens.map((token) => token.token);
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(result.stdout + result.stderr).not.toContain(token);
  });
});
