/**
 * `push-api emulator` as a real process, steered over HTTP and reached as another container would
 * reach it: bound on 127.0.0.2, named `emulator`, with a CLI process whose name lookup knows that
 * one name (test/support/container-dns.mjs).
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorSettings } from '../../src/cli/commands/emulator.js';
import { buildCli } from '../support/cli/build.js';
import { killChildren, makeTempDir, runCli, startCli } from '../support/cli/run.js';
import { closedPort } from '../support/loopback-server.js';

const CONTAINER_DNS = resolve(import.meta.dirname, '../support/container-dns.mjs');
let cli: string;

beforeAll(async () => {
  cli = await buildCli();
}, 60_000);

afterEach(() => killChildren());

/** Starts the emulator process and waits for its one-line `--json` settings. */
async function startJsonEmulator(args: string[]) {
  const started = startCli(cli, ['emulator', '--json', ...args], { timeoutMs: 120_000 });
  let stdout = '';
  started.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  await expect.poll(() => stdout.includes('\n'), { timeout: 10_000 }).toBe(true);
  return { ...started, settings: JSON.parse(stdout.split('\n')[0]!) as EmulatorSettings };
}

describe('push-api emulator --json', () => {
  it('prints one settings object, keeps serving, takes faults over HTTP and stops on SIGTERM', async () => {
    const emulator = await startJsonEmulator(['--port', '0', '--fault', 'token:503:retry-after=0:times=1']);
    const { settings } = emulator;
    expect(settings).toMatchObject({ clientId: 'demo-client', appIds: ['demo-app'] });
    const env = {
      PUSH_CLIENT_ID: settings.clientId,
      PUSH_CLIENT_SECRET: settings.clientSecret!,
      PUSH_AUTH_URL: settings.authUrl,
      PUSH_BASE_URL: settings.baseUrl,
      PUSH_SCOPE_BASE: settings.scopeBase,
    };
    // The --fault answers the first token request with 503; the CLI retries and gets a token.
    const token = await runCli(cli, ['token', '--json'], { env });
    expect(token.code).toBe(0);

    const added = await fetch(`${settings.baseUrl}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ match: { operation: 'token' }, status: 400, body: { error: 'invalid_client' } }),
    });
    expect(added.status).toBe(201);
    const refused = await runCli(cli, ['token'], { env });
    expect(refused.code).not.toBe(0);

    const state = (await (await fetch(`${settings.baseUrl}/_emulator/state`)).json()) as {
      requests: { byStatus: Record<string, number> };
    };
    expect(state.requests.byStatus).toMatchObject({ 503: 1, 200: 1, 400: 1 });

    emulator.child.kill('SIGTERM');
    const result = await emulator.done;
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('emulator stopped');
  });

  it.each([
    ['--fault', 'finance:42'],
    ['--fault', 'reports:500'],
    ['--app', 'a/b'],
    ['--rate-limit', '10/fortnight'],
    ['--token-ttl', 'soon'],
    ['--public-url', 'http://emulator:4010/push'],
    ['--allowed-host', 'a b'],
    ['--client-id', 'has space'],
  ])('exits 2 naming the flag for %s %j', async (flag, value) => {
    const result = await runCli(cli, ['emulator', '--port', '0', flag, value]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(result.stdout).toBe('');
  });

  it('exits 2 for an unreadable --client-secret-file, without printing its path', async () => {
    const temp = makeTempDir();
    try {
      const result = await runCli(cli, ['emulator', '--port', '0', '--client-secret-file', temp.path('nope')]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--client-secret-file');
      expect(result.stderr).not.toContain(temp.dir);
    } finally {
      temp.remove();
    }
  });
});

describe('the emulator in another container', () => {
  it('serves a CLI that reaches it by name, over plain http, only with --allow-insecure-http', async () => {
    const temp = makeTempDir();
    const port = await closedPort('127.0.0.2');
    const secretFile = temp.path('secret');
    writeFileSync(secretFile, 'compose-secret-31ab\n', { mode: 0o600 });
    try {
      const emulator = await startJsonEmulator([
        '--host',
        '127.0.0.2',
        '--port',
        String(port),
        '--public-url',
        `http://emulator:${port}`,
        '--client-secret-file',
        secretFile,
      ]);
      const { settings } = emulator;
      expect(settings.baseUrl).toBe(`http://emulator:${port}`);
      expect(settings.clientSecret).toBeNull();
      const env = {
        PUSH_CLIENT_ID: settings.clientId,
        PUSH_AUTH_URL: settings.authUrl,
        PUSH_BASE_URL: settings.baseUrl,
        PUSH_SCOPE_BASE: settings.scopeBase,
        PUSH_APP_ID: settings.appIds[0],
        PUSH_TEST_CONTAINER_HOST: 'emulator=127.0.0.2',
        NODE_OPTIONS: `--import ${CONTAINER_DNS}`,
      };
      const input = join(temp.dir, 'records.jsonl');
      writeFileSync(
        input,
        `${JSON.stringify({ created: '2025-03-01', amount: 1, currency: 'EUR', type: 'expense', identifier: 'a', vendor: 'V' })}\n`,
      );
      const args = ['finance', 'publish', input, '--client-secret-file', secretFile, '--json'];

      const refused = await runCli(cli, args, { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/PUSH_ALLOW_INSECURE_HTTP=1|--allow-insecure-http/);

      const allowed = await runCli(cli, [...args, '--allow-insecure-http'], { env });
      expect(allowed.stderr).toContain(`SecurityWarning: PushClient: plain http to emulator:${port}`);
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ recordsSent: 1 });

      const byEnv = await runCli(cli, args, { env: { ...env, PUSH_ALLOW_INSECURE_HTTP: '1' } });
      expect(byEnv.code).toBe(0);
      expect(byEnv.stderr.match(/SecurityWarning/g)).toHaveLength(1);

      // A name the emulator was not started for is refused, even though it reaches the same socket.
      const foreign = await runCli(cli, [...args, '--allow-insecure-http', '--base-url', `http://rebound:${port}`], {
        env: { ...env, PUSH_TEST_CONTAINER_HOST: 'rebound=127.0.0.2' },
      });
      expect(foreign.code).not.toBe(0);

      emulator.child.kill('SIGTERM');
      const stopped = await emulator.done;
      expect(stopped.stdout).not.toContain('compose-secret-31ab');
      expect(stopped.stderr).not.toContain('compose-secret-31ab');
    } finally {
      temp.remove();
    }
  });
});
