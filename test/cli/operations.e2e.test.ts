/**
 * Running the CLI in production: `--verbose` lines per HTTP attempt, `--quiet`, request ids in
 * rejects and `--json`, and the proxy variables. One emulator and one loopback proxy for the file.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEMO_APP_ID, type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackProxy, startLoopbackProxy, VIA } from '../examples/loopback-proxy.js';
import { buildCli } from '../support/cli/build.js';
import { CSV_HEADER, csvRows, emulatorEnv, killChildren, makeTempDir, runCli } from '../support/cli/run.js';
import { readDoc } from '../support/doc-files.js';

let cli: string;
let emulator: RunningEmulator;
let proxy: LoopbackProxy;
const temp = makeTempDir();
const csv = temp.path('ten.csv');
const upload = temp.path('users.csv');

beforeAll(async () => {
  cli = await buildCli();
  emulator = await startEmulator({ port: 0 });
  proxy = await startLoopbackProxy({ host: '127.0.0.1', port: Number(new URL(emulator.url).port) });
  writeFileSync(csv, `${CSV_HEADER}\n${csvRows(10)}`);
  writeFileSync(upload, 'email\na@example.com\n');
}, 120_000);
afterEach(() => {
  killChildren();
  emulator.mock.reset();
  proxy.requests.length = 0;
  proxy.tunnels.length = 0;
});
afterAll(async () => {
  await proxy?.close();
  await emulator?.close();
  temp.remove();
});

/** Makes the child record whether it imported undici, in `file`. */
const probeImports = (file: string) => ({
  NODE_OPTIONS: `--import=${fileURLToPath(new URL('../support/import-probe.mjs', import.meta.url))}`,
  IMPORT_PROBE_FILE: file,
});

const publish = (...extra: string[]) => [
  'finance',
  'publish',
  '--app',
  DEMO_APP_ID,
  '--batch-size',
  '5',
  ...extra,
  csv,
];
const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(cli, args, { env: { ...emulatorEnv(emulator), ...env }, timeoutMs: 30_000 });

describe('--verbose and request ids', () => {
  it('prints one line per HTTP attempt, and puts the request id in rejects lines and --json', async () => {
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 422, times: 1 });
    const rejects = temp.path('rejects.jsonl');
    const result = await run(publish('--concurrency', '1', '--verbose', '--json', '--rejects', rejects));
    expect(result.code).toBe(3);

    const seen = emulator.mock.state.requests;
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('push-api: http '));
    expect(lines).toHaveLength(seen.length);
    for (const request of seen) {
      const line = lines.find((text) => text.includes(`request-id=${request.id} `));
      expect(line, request.id).toMatch(
        new RegExp(
          `^push-api: http \\w+ ${request.method} ${request.url} attempt=1 status=${request.status} request-id=\\S+ \\d+ms$`,
        ),
      );
    }
    expect(result.stderr).not.toContain('?');
    // The in-flight window's start (and each change) is a line too: fixed at 1 by --concurrency 1.
    expect(result.stderr).toMatch(/^push-api: window finance 1 \(start\) in-flight=0$/m);

    const refused = seen.find((request) => request.status === 422);
    const entries = readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries).toHaveLength(5);
    expect(entries.every((entry) => entry.kind === 'failed' && entry.requestId === refused?.id)).toBe(true);
    expect(JSON.parse(result.stdout)).toMatchObject({ recordsSent: 5, recordsFailed: 5 });
  });

  it('prints the --verbose lines docs/cli.md shows, but for the address, the ids and the durations', async () => {
    const page = readDoc('docs/cli.md');
    const start = page.indexOf('- **`--verbose`**');
    const block = page.slice(page.indexOf('```text\n', start) + '```text\n'.length, page.indexOf('```\n', start + 1));
    // The page's addresses are the emulator's default port; ids and durations differ per run.
    const shape = (line: string) =>
      line
        .trim()
        .replace(/http:\/\/127\.0\.0\.1:\d+/, 'http://EMULATOR')
        .replace(/request-id=\S+/, 'request-id=ID')
        .replace(/ \d+ms$/, ' Nms');
    const shown = block
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(shape);
    expect(shown.length).toBeGreaterThanOrEqual(3);
    const result = await run(['finance', 'publish', '--app', DEMO_APP_ID, '--verbose', csv]);
    expect(result.code).toBe(0);
    const printed = new Set(result.stderr.split('\n').map(shape));
    expect(shown.filter((line) => !printed.has(line))).toEqual([]);
  });

  it('--json names the request id of an error the service answered, and of each uploaded file', async () => {
    const stopped = await run(['finance', 'publish', '--app', 'no-such-app', '--json', csv]);
    expect(stopped.code).toBe(1);
    const notFound = emulator.mock.state.requests.find((request) => request.status === 404);
    expect(JSON.parse(stopped.stdout).error).toMatchObject({ name: 'NotFoundError', requestId: notFound?.id });

    const uploaded = await run(['upload', '--app', DEMO_APP_ID, '--json', upload]);
    expect(uploaded.code).toBe(0);
    const put = emulator.mock.state.requests.find((request) => request.method === 'PUT');
    expect(JSON.parse(uploaded.stdout).files).toEqual([
      expect.objectContaining({ name: 'users.csv', requestId: put?.id }),
    ]);
  });
});

describe('--quiet', () => {
  it('prints nothing on success but the --json report, and still prints errors', async () => {
    const probe = temp.path('direct-imports.txt');
    const silent = await run(publish('--quiet'), probeImports(probe));
    expect(silent).toMatchObject({ code: 0, stdout: '', stderr: '' });
    // Without a proxy variable, undici (costly to import) is never loaded.
    expect(existsSync(probe)).toBe(false);

    const json = await run(['upload', '--app', DEMO_APP_ID, '--quiet', '--json', upload]);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, filesUploaded: 1 });

    const failed = await run(['finance', 'publish', '--app', 'no-such-app', '--quiet', csv]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^push-api: the data API at .* answered 404 for app "no-such-app" \(404 Not Found/);
    expect(failed.stderr).toContain('publish stopped');
  });

  it('is never silent on a partial run: the invalid rows and the summary go to stderr', async () => {
    const mixed = temp.path('mixed.csv');
    writeFileSync(
      mixed,
      `${CSV_HEADER}\n${csvRows(3)}\n1704067200000,12.5,US,x@example.com,expense,Acme,bad currency\n`,
    );
    const partial = await run(['finance', 'publish', '--app', DEMO_APP_ID, '--quiet', mixed]);
    expect(partial.code).toBe(3);
    expect(partial.stdout).toBe('');
    expect(partial.stderr).toMatch(/mixed\.csv:5: currency: /);
    expect(partial.stderr).toMatch(/publish finished\n\s+sent\s+3\n\s+invalid\s+1/);
  });

  it('still prints the token that --print-token asked for, on stdout', async () => {
    const token = await run(['token', '--print-token', '--quiet']);
    expect(token).toMatchObject({ code: 0, stderr: '' });
    expect(emulator.mock.state.tokens.map((issued) => `${issued.token}\n`)).toEqual([token.stdout]);
  });
});

describe('PUSH_LOG', () => {
  it("turns on the SDK's log lines on stderr, and an unknown level is a usage error", async () => {
    const logged = await run(['token'], { PUSH_LOG: 'debug' });
    expect(logged.code).toBe(0);
    expect(logged.stderr).toMatch(/ debug push-api-client request \{.*"operation":"token"/);
    const bogus = await run(['token'], { PUSH_LOG: 'loud' });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain('PUSH_LOG');
    expect(emulator.mock.state.requests).toHaveLength(1);
  });
});

describe('proxy variables', () => {
  it('sends every request of a publish and an upload through the proxy; lower-case names win', async () => {
    // The upper-case variable points where nothing listens: only the lower-case one can work.
    const env = { http_proxy: proxy.url, HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '' };
    const probe = temp.path('proxied-imports.txt');
    expect((await run(publish(), { ...env, ...probeImports(probe) })).code).toBe(0);
    expect(readFileSync(probe, 'utf8')).toContain('undici');
    expect((await run(['upload', '--app', DEMO_APP_ID, upload], env)).code).toBe(0);

    const seen = emulator.mock.state.requests;
    expect(seen.map((request) => request.operation).sort()).toEqual(
      ['finance', 'finance', 'token', 'token', 'upload', 'upload-urls'].sort(),
    );
    expect(seen.every((request) => request.headers.via === VIA)).toBe(true);
    expect(proxy.requests).toHaveLength(seen.length);
  });

  it('goes direct for a host listed in NO_PROXY', async () => {
    const result = await run(publish(), { HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, no_proxy: '127.0.0.1' });
    expect(result.code).toBe(0);
    expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(10);
    expect(emulator.mock.state.requests.every((request) => request.headers.via === undefined)).toBe(true);
    expect(proxy.requests).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });

  it.each([['127.0.0.0/8'], ['10.0.0.0/8, 127.0.0.1/32'], ['example.com *']])(
    'goes direct for NO_PROXY=%s (a CIDR range, * among other entries), as curl does',
    async (noProxy) => {
      const result = await run(publish(), { HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
      expect(result.code).toBe(0);
      expect(emulator.mock.state.recordCount(DEMO_APP_ID)).toBe(10);
      expect(proxy.requests).toEqual([]);
    },
  );

  it.each([
    ['HTTP_PROXY', 'http://user:hunter2@[bad'],
    ['https_proxy', 'user:hunter2@proxy.internal:3128'],
    // undici would take a SOCKS proxy, but the CLI documents http:// and https:// only.
    ['HTTPS_PROXY', 'socks5://user:hunter2@127.0.0.1:1080'],
  ])('a %s that is no proxy URL exits 2 naming the variable, never its password', async (name, value) => {
    const result = await run(['token', '--json'], { [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${name} is not a proxy URL`);
    expect(`${result.stdout}${result.stderr}`).not.toContain('hunter2');
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, exitCode: 2 });
    expect(emulator.mock.state.requests).toEqual([]);
  });
});
