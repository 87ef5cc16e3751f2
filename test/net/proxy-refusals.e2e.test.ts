/**
 * The CLI behind a corporate proxy that refuses the tunnel: a 407 (wrong password) or 403 (host
 * forbidden) is a configuration error, named once, not retried, never with the password; a 502
 * (the proxy cannot reach the host) is retried and its stop line names the proxy. The proxy on
 * 127.0.0.1 refuses every CONNECT, so nothing leaves this machine.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useBuiltCli } from '../support/cli/emulator.js';
import { CSV_HEADER, csvRows, runCli } from '../support/cli/run.js';

const fixture = useBuiltCli();
const PASSWORD = 's3cr@t pass';
let proxy: Server;
let proxyUrl: string;
let refusal = 407;
const connects: string[] = [];

beforeAll(async () => {
  proxy = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (head) => {
      connects.push(head.toString('latin1').split('\r\n')[0] ?? '');
      socket.end(`HTTP/1.1 ${refusal} Refused\r\nProxy-Authenticate: Basic realm="p"\r\nContent-Length: 0\r\n\r\n`);
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxyUrl = `http://alice:${encodeURIComponent(PASSWORD)}@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(() => {
  proxy.close();
});
beforeEach(() => {
  connects.length = 0;
});

const env = () => ({
  HTTPS_PROXY: proxyUrl,
  PUSH_CLIENT_ID: 'id',
  PUSH_CLIENT_SECRET: 'secret',
  PUSH_AUTH_URL: 'https://auth.push.test',
  PUSH_BASE_URL: 'https://api.push.test',
  PUSH_SCOPE_BASE: 'https://api.push.test',
});

function expectNoPassword(text: string): void {
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(encodeURIComponent(PASSWORD));
}

describe('a proxy that refuses the tunnel, through the CLI', () => {
  it('a 407 ends `push-api token` with exit 2 after one CONNECT, naming the proxy credentials', async () => {
    refusal = 407;
    const result = await runCli(fixture.cli, ['token'], { env: env(), timeoutMs: 30_000 });
    expect(result.stderr).toContain(
      'the proxy refused to open a tunnel (407 Proxy Authentication Required: check the user and password in the proxy URL)',
    );
    expect(result.code).toBe(2);
    expect(connects).toEqual(['CONNECT auth.push.test:443 HTTP/1.1']);
    expectNoPassword(result.stderr + result.stdout);
  });

  it('a 403 stops a publish at once: nothing unknown, every row failed or not read', async () => {
    refusal = 403;
    const csv = fixture.temp.path('rows.csv');
    writeFileSync(csv, `${CSV_HEADER}\n${csvRows(3)}\n`);
    const args = ['finance', 'publish', '--app', 'demo-app', '--batch-size', '1', '--json', csv];
    const result = await runCli(fixture.cli, args, { env: env(), timeoutMs: 30_000 });
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    // Batches that waited for the one token request fail with it: nothing of them left.
    expect(report).toMatchObject({ recordsSent: 0, recordsUnknown: 0 });
    expect(Number(report.recordsFailed) + Number(report.recordsNotRead)).toBe(3);
    expect(report.error).toMatchObject({ name: 'ConfigurationError' });
    expect(String((report.error as { message: string }).message)).toContain(
      '(403 Forbidden: the proxy does not allow this host)',
    );
    // Not retried (a retried request alone would make 4 tunnels). Under load, a batch that asked for
    // its token after the first refusal, before the run's stop reached it, may ask once more.
    expect(connects.length).toBeGreaterThanOrEqual(1);
    expect(connects.length).toBeLessThanOrEqual(3);
    expect(new Set(connects)).toEqual(new Set(['CONNECT auth.push.test:443 HTTP/1.1']));
    expectNoPassword(result.stderr + result.stdout);
  });

  it('a 502 is retried, and the stop line says the proxy refused the tunnel', async () => {
    refusal = 502;
    const csv = fixture.temp.path('one.csv');
    writeFileSync(csv, `${CSV_HEADER}\n${csvRows(1)}`);
    const args = ['finance', 'publish', '--app', 'demo-app', csv];
    const result = await runCli(fixture.cli, args, { env: env(), timeoutMs: 30_000 });
    expect(result.stderr).toContain(
      'push-api: cannot connect to auth.push.test: token request not sent: the proxy refused to open a tunnel (502)',
    );
    expect(connects.length).toBeGreaterThan(1);
    expectNoPassword(result.stderr + result.stdout);
  });
});
