import { mkdirSync, writeFileSync } from 'node:fs';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import {
  CSV_HEADER,
  csvRows,
  emulatorEnv,
  killChildren,
  makeTempDir,
  type RunResult,
  runCli,
} from '../support/cli/run.js';
import { closedPort } from '../support/loopback-server.js';

let cli: string;
let emulator: RunningEmulator;
let temp: ReturnType<typeof makeTempDir>;
beforeAll(async () => {
  [cli, emulator] = await Promise.all([buildCli(), startEmulator({ port: 0 })]);
}, 60_000);
afterAll(async () => {
  killChildren();
  await emulator.close();
});
beforeEach(() => {
  emulator.mock.reset();
  temp = makeTempDir();
});
afterEach(() => temp.remove());

const stored = () => emulator.mock.state.recordCount(DEMO_APP_ID);
const env = (overrides: Record<string, string> = {}) => ({
  ...emulatorEnv(emulator),
  PUSH_APP_ID: DEMO_APP_ID,
  ...overrides,
});
const publish = (...args: string[]) => ['finance', 'publish', ...args];

/** The one JSON object of a --json run. */
function jsonOf(
  result: RunResult,
): Record<string, unknown> & { error?: { name: string; message: string; code?: string } } {
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

/** Runs the same command as text and as --json, side by side. */
async function both(args: string[], environment: Record<string, string>): Promise<[RunResult, RunResult]> {
  return Promise.all([runCli(cli, args, { env: environment }), runCli(cli, [...args, '--json'], { env: environment })]);
}

function writeCsv(name: string, rows: number, header = CSV_HEADER): string {
  const path = temp.path(name);
  writeFileSync(path, `${header}\n${csvRows(rows)}\n`);
  return path;
}

describe('a run stopped by an error: one line naming the cause, "stopped", exit 1', () => {
  it('names the address when nothing listens, stops after one batch of retries, counts what was not read', async () => {
    const port = await closedPort();
    const input = writeCsv('in.csv', 300);
    const started = performance.now();
    const [text, json] = await both(
      publish('--batch-size', '10', input),
      env({ PUSH_BASE_URL: `http://127.0.0.1:${port}` }),
    );
    const seconds = (performance.now() - started) / 1000;
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`cannot connect to 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(text.stdout).toMatch(/publish stopped/);
    expect(text.stdout).toMatch(/not read\s+\d+/);
    expect(json.code).toBe(1);
    const report = jsonOf(json);
    expect(report).toMatchObject({ ok: false, exitCode: 1, stopped: true, recordsSent: 0 });
    expect(report.error).toMatchObject({ name: 'ConnectionError', code: 'ECONNREFUSED' });
    expect((report.recordsFailed as number) + (report.recordsNotRead as number)).toBe(300);
    // One batch's retries (0.5 + 1 + 2 s of backoff at most), not one per batch (about 100 s); the
    // bound leaves room for two CLI processes starting on a busy machine.
    expect(seconds).toBeLessThan(20);
  }, 30_000);

  it('says the token service refused the credentials for a wrong secret', async () => {
    const input = writeCsv('in.csv', 20);
    const [text, json] = await both(publish(input), env({ PUSH_CLIENT_SECRET: 'wrong-secret' }));
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/the token service at 127\.0\.0\.1:\d+ refused the credentials/);
    expect(text.stderr + text.stdout + json.stdout).not.toContain('wrong-secret');
    expect(text.stdout).toMatch(/publish stopped[\s\S]*not read\s+\d+/);
    const report = jsonOf(json);
    expect(report).toMatchObject({
      exitCode: 1,
      recordsSent: 0,
      error: { name: 'TokenError', code: 'invalid_client' },
    });
    expect((report.recordsFailed as number) + (report.recordsNotRead as number)).toBe(20);
    expect(stored()).toBe(0);
  });

  it('says the app is unknown (404)', async () => {
    const input = writeCsv('in.csv', 20);
    const [text, json] = await both(publish('--app', 'no-such-app', input), env());
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('answered 404 for app "no-such-app" (404 Not Found');
    expect(jsonOf(json)).toMatchObject({ exitCode: 1, error: { name: 'NotFoundError' } });
  });
});

describe('inputs checked before anything is sent: exit 2', () => {
  it('refuses a --rejects path that is a directory, sending nothing', async () => {
    const input = writeCsv('in.csv', 20);
    mkdirSync(temp.path('out'));
    const [text, json] = await both(publish('--rejects', temp.path('out'), input), env());
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/--rejects .*out: is a directory/);
    expect(jsonOf(json)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError' } });
    expect(stored()).toBe(0);
  });

  it('names a --map column the header does not have, and the columns it has', async () => {
    const input = writeCsv('in.csv', 20);
    const [text, json] = await both(publish('--map', 'vendor=Supplier', input), env());
    expect(text.code).toBe(2);
    expect(text.stderr).toContain('--map names "Supplier", which the header does not have (columns found: "created"');
    expect(jsonOf(json)).toMatchObject({ exitCode: 2, error: { name: 'UsageError' } });
    expect(stored()).toBe(0);
  });

  it('lists the required fields a header misses', async () => {
    const input = writeCsv('in.csv', 1, 'created,amount,currency');
    const result = await runCli(cli, publish(input), { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the header has no column for identifier, type, vendor');
  });
});

describe('what completes', () => {
  it('reads a semicolon-separated CSV by its header, and --delimiter says it outright', async () => {
    const path = temp.path('semi.csv');
    writeFileSync(path, `${CSV_HEADER.replaceAll(',', ';')}\n${csvRows(5).replaceAll(',', ';')}\n`);
    const text = await runCli(cli, publish(path), { env: env() });
    expect(text.code).toBe(0);
    expect(stored()).toBe(5);
    const json = await runCli(cli, publish('--delimiter', ';', '--json', path), { env: env() });
    expect(jsonOf(json)).toMatchObject({ ok: true, exitCode: 0, recordsSent: 5 });
    expect(stored()).toBe(10);
  });

  it('exits 3 for a completed run with invalid rows, showing the first few without --rejects', async () => {
    const path = temp.path('bad.csv');
    const bad = Array.from({ length: 8 }, () => '1704067200000,abc,USD,x,expense,V,d');
    writeFileSync(path, `${CSV_HEADER}\n${csvRows(2)}\n${bad.join('\n')}\n`);
    const [text, json] = await both(publish(path), env());
    expect(text.code).toBe(3);
    expect(text.stderr).toContain(`${path}:4: amount: not an amount: "abc"`);
    expect(text.stderr).toContain('… and 3 more invalid rows');
    expect(text.stderr).toContain('--rejects FILE');
    expect(jsonOf(json)).toMatchObject({ ok: false, exitCode: 3, recordsSent: 2, recordsInvalid: 8 });
    expect(jsonOf(json).error).toBeUndefined();
  });
});

describe('the recovery recipe of docs/cli.md', () => {
  it('after a stop, the same command with a checkpoint sends exactly the rows not sent', async () => {
    const input = writeCsv('in.csv', 250);
    const port = await closedPort();
    const args = publish(
      '--batch-size',
      '20',
      '--checkpoint',
      temp.path('cp.json'),
      '--rejects',
      temp.path('r.jsonl'),
      input,
    );
    const first = await runCli(cli, [...args, '--json'], { env: env({ PUSH_BASE_URL: `http://127.0.0.1:${port}` }) });
    expect(first.code).toBe(1);
    expect(jsonOf(first)).toMatchObject({ stopped: true, recordsSent: 0 });
    const second = await runCli(cli, args, { env: env() });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/publish finished/);
    const third = await runCli(cli, [...args, '--json'], { env: env() });
    expect(jsonOf(third)).toMatchObject({ exitCode: 0, recordsSent: 0, recordsSkipped: 250 });
    const created = emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created));
    expect(created).toHaveLength(250);
    expect(new Set(created).size).toBe(250);
  }, 30_000);

  it('resumes a run stopped part-way by a refused token with every row delivered exactly once', async () => {
    const input = writeCsv('in.csv', 200);
    const args = publish('--batch-size', '20', '--concurrency', '1', '--checkpoint', temp.path('cp.json'), input);
    // The fourth finance request is answered 401 on every try, so the run stops after 60 rows.
    let seen = 0;
    emulator.mock.faults.add({
      match: { operation: 'finance' },
      times: Number.POSITIVE_INFINITY,
      status: 401,
      random: () => (++seen > 3 ? 0 : 1),
      probability: 0.5,
    });
    const first = await runCli(cli, [...args, '--json'], { env: env() });
    emulator.mock.faults.clear();
    expect(first.code).toBe(1);
    const report = jsonOf(first);
    expect(report).toMatchObject({ recordsSent: 60, error: { name: 'AuthenticationError' } });
    expect((report.recordsFailed as number) + (report.recordsNotRead as number)).toBe(140);
    const second = await runCli(cli, args, { env: env() });
    expect(second.code).toBe(0);
    const created = emulator.mock.state.records(DEMO_APP_ID).map((record) => Number(record.created));
    expect(created).toHaveLength(200);
    expect(new Set(created).size).toBe(200);
  }, 30_000);
});

describe('upload', () => {
  it('uploads 50 files with one address request', async () => {
    const dir = temp.path('files');
    mkdirSync(dir);
    for (let i = 0; i < 50; i++) writeFileSync(`${dir}/f${String(i).padStart(2, '0')}.txt`, `file ${i}\n`);
    const result = await runCli(cli, ['upload', '--json', '--concurrency', '8', `${dir}/*.txt`], { env: env() });
    expect(result.code).toBe(0);
    expect(jsonOf(result)).toMatchObject({ ok: true, exitCode: 0, filesUploaded: 50 });
    const addressRequests = emulator.mock.state.requests.filter((request) => request.operation === 'upload-urls');
    expect(addressRequests).toHaveLength(1);
  });

  it('stops on an unknown app with one line and exit 1', async () => {
    writeFileSync(temp.path('a.txt'), 'a');
    const [text, json] = await both(['upload', '--app', 'no-such-app', temp.path('a.txt')], env());
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('answered 404 for app "no-such-app" (404 Not Found');
    expect(jsonOf(json)).toMatchObject({ exitCode: 1, filesNotStarted: 1, error: { name: 'NotFoundError' } });
  });
});

describe('--json on a usage error and on token', () => {
  it('prints one object with ok, exitCode and error for a usage error and for a refused token', async () => {
    const usage = await runCli(cli, publish('--json', '--batch-size', '0', 'x.csv'), { env: env() });
    expect(usage.code).toBe(2);
    expect(jsonOf(usage)).toMatchObject({ ok: false, exitCode: 2, error: { name: 'UsageError' } });
    const granted = await runCli(cli, ['token', '--json'], { env: env() });
    expect(jsonOf(granted)).toMatchObject({ ok: true, exitCode: 0 });
    const token = await runCli(cli, ['token', '--json'], { env: env({ PUSH_CLIENT_SECRET: 'wrong' }) });
    expect(token.code).toBe(1);
    expect(jsonOf(token)).toMatchObject({
      ok: false,
      exitCode: 1,
      error: { name: 'TokenError', code: 'invalid_client' },
    });
  });
});
