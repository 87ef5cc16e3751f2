import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PushClient, RateLimitError } from 'push-api-client';
import { afterAll, describe, expect, it } from 'vitest';
import { type EmulatorSettings, emulatorCommand } from '../../src/cli/commands/emulator.js';
import { parseFault } from '../../src/cli/commands/emulator-flags.js';
import { financeRecord } from '../support/records.js';

const temp = mkdtempSync(join(tmpdir(), 'emulator-flags-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Runs `push-api emulator` in this process until `stop()`; `output` is stdout, `info` stderr. */
async function serve(args: string[]) {
  const output: string[] = [];
  const info: string[] = [];
  const stop = new AbortController();
  const command = emulatorCommand({
    write: (text) => output.push(text),
    writeInfo: (text) => info.push(text),
    stopSignal: stop.signal,
  });
  const done = command.parseAsync(['--port', '0', ...args], { from: 'user' });
  await expect.poll(() => output.length, { timeout: 5000 }).toBeGreaterThan(0);
  return {
    output,
    info,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

describe('--fault syntax', () => {
  it.each([
    ['finance:429:retry-after=1:times=3', { match: { operation: 'finance' }, status: 429, retryAfter: 1, times: 3 }],
    ['token:503', { match: { operation: 'token' }, status: 503 }],
    ['uploadUrls:500:times=2', { match: { operation: 'upload-urls' }, status: 500, times: 2 }],
    // The spelling of the request log and of POST /_emulator/faults.
    ['upload-urls:503', { match: { operation: 'upload-urls' }, status: 503 }],
    ['upload:drop=after', { match: { operation: 'upload' }, drop: 'after' }],
    ['finance:drop=before:times=4', { match: { operation: 'finance' }, drop: 'before', times: 4 }],
    ['finance:429:times=2:retry-after=0', { match: { operation: 'finance' }, status: 429, times: 2, retryAfter: 0 }],
  ])('reads %s', (spec, rule) => {
    expect(parseFault(spec)).toEqual(rule);
  });

  it.each([
    ['reports:500', /unknown operation "reports"/],
    ['constructor:500', /unknown operation "constructor"/],
    ['toString:drop=after', /unknown operation "toString"/],
    ['finance', /status \(200-599\) or drop/],
    ['finance:99', /status \(200-599\) or drop/],
    ['finance:600', /status \(200-599\) or drop/],
    ['finance:drop=sometimes', /status \(200-599\) or drop/],
    ['finance:500:times=0', /times must be a whole number >= 1/],
    ['finance:500:times=x', /times must be/],
    ['finance:500:times=1:times=2', /times is given twice/],
    ['finance:drop=after:retry-after=1', /unknown part "retry-after=1"/],
    ['finance:500:delay=5', /unknown part "delay=5"/],
    ['finance:500:retry-after=-1', /retry-after must be/],
  ])('refuses %s, saying what is wrong', (spec, message) => {
    expect(() => parseFault(spec)).toThrow(message);
  });
});

describe('push-api emulator flags', () => {
  it('--json prints one settings object, with the apps, credential, faults, limits and scope rule asked for', async () => {
    const secretFile = join(temp, 'secret');
    writeFileSync(secretFile, 'file-secret-4f9a\n', { mode: 0o600 });
    const run = await serve([
      '--json',
      '--app',
      'shop-eu',
      '--app',
      'shop-us',
      '--client-id',
      'pipeline',
      '--client-secret-file',
      secretFile,
      '--fault',
      'finance:503:times=1',
      '--rate-limit',
      '3/m',
      '--token-ttl',
      '60',
    ]);
    try {
      expect(run.output).toHaveLength(1);
      const settings = JSON.parse(run.output[0]!) as EmulatorSettings;
      expect(Object.keys(settings)).toEqual([
        'authUrl',
        'baseUrl',
        'scopeBase',
        'clientId',
        'clientSecret',
        'appIds',
        'inspectorUrl',
      ]);
      expect(settings).toMatchObject({ clientId: 'pipeline', clientSecret: null, appIds: ['shop-eu', 'shop-us'] });
      expect(settings.inspectorUrl).toBe(`${settings.baseUrl}/_emulator/`);
      expect(run.output.join('')).not.toContain('file-secret-4f9a');

      const { clientSecret: _, appIds: __, inspectorUrl: ___, ...connection } = settings;
      const client = new PushClient({ ...connection, clientSecret: 'file-secret-4f9a', maxRetries: 0 });
      const token = await client.tokens.getToken();
      expect(token.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
      // The fault answers the first finance request (before the limit counts it); the limit, three
      // a minute, the fourth that reaches the service.
      await expect(client.finance.publishBatch('shop-us', [financeRecord()])).rejects.toMatchObject({ status: 503 });
      await client.finance.publishBatch('shop-us', [financeRecord()]);
      await client.finance.publishBatch('shop-eu', [financeRecord()]);
      await client.finance.publishBatch('shop-eu', [financeRecord()]);
      await expect(client.finance.publishBatch('shop-eu', [financeRecord()])).rejects.toBeInstanceOf(RateLimitError);
      // --app replaces the demo app.
      const state = (await (await fetch(`${settings.baseUrl}/_emulator/state`)).json()) as {
        apps: { appId: string }[];
      };
      expect(state.apps.map((app) => app.appId)).toEqual(['shop-eu', 'shop-us']);
    } finally {
      await run.stop();
    }
    // After the object, nothing more on stdout: the summary goes to stderr.
    expect(run.output).toHaveLength(1);
    expect(run.info.join('')).toContain('emulator stopped');
  });

  it('refuses a token request without scope unless --lenient-scope is given', async () => {
    for (const [args, status] of [
      [[], 400],
      [['--lenient-scope'], 200],
    ] as const) {
      const run = await serve(['--json', ...args]);
      try {
        const settings = JSON.parse(run.output[0]!) as EmulatorSettings;
        const answer = await fetch(`${settings.authUrl}/oauth2/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: settings.clientId,
            client_secret: settings.clientSecret!,
          }),
        });
        expect(answer.status).toBe(status);
        if (status === 400) expect(await answer.json()).toMatchObject({ error: 'invalid_scope' });
      } finally {
        await run.stop();
      }
    }
  });

  it('never prints a secret from --client-secret-file in the banner', async () => {
    const secretFile = join(temp, 'banner-secret');
    writeFileSync(secretFile, 'banner-secret-77c1\n', { mode: 0o600 });
    const run = await serve(['--client-secret-file', secretFile]);
    try {
      const banner = run.output.join('');
      expect(banner).not.toContain('banner-secret-77c1');
      expect(banner).not.toContain('published demo value');
      expect(banner).toContain(`export PUSH_CLIENT_SECRET="$(head -n 1 ${secretFile})"`);
      expect(banner).toContain('export PUSH_CLIENT_ID=demo-client');
    } finally {
      await run.stop();
    }
  });

  it('prints container settings for --host and --public-url, with the switch the SDK then needs', async () => {
    // 127.0.0.3 stands in for 0.0.0.0, which would expose the demo credential beyond this machine.
    const run = await serve(['--host', '127.0.0.3', '--public-url', 'http://emulator:4010', '--allowed-host', 'push']);
    try {
      const banner = run.output.join('');
      expect(banner).toMatch(/listening on http:\/\/127\.0\.0\.3:\d+ \(reachable as http:\/\/emulator:4010\)/);
      expect(banner).toContain('export PUSH_AUTH_URL=http://emulator:4010/auth');
      expect(banner).toContain('export PUSH_BASE_URL=http://emulator:4010\n');
      expect(banner).toContain('export PUSH_ALLOW_INSECURE_HTTP=1');
      expect(banner).toContain('inspector:   http://emulator:4010/_emulator/');
    } finally {
      await run.stop();
    }
  });

  it.each([
    ['--fault', 'reports:500', /--fault/],
    ['--app', 'a/b', /--app/],
    ['--app', '', /--app/],
    ['--client-id', 'has space', /--client-id/],
    ['--rate-limit', 'lots', /--rate-limit/],
    ['--token-ttl', '0', /--token-ttl/],
    ['--public-url', 'http://emulator:4010/path', /--public-url/],
    ['--public-url', 'ftp://emulator', /--public-url/],
    ['--allowed-host', 'evil/x', /--allowed-host/],
    ['--port', '6000', /--port.*6000 is a port fetch never connects to/],
    ['--port', '10080', /--port.*10080 is a port fetch never connects to/],
  ])('refuses %s %j naming the flag, before starting', async (flag, value, message) => {
    const command = emulatorCommand({ write: () => undefined })
      .exitOverride()
      .configureOutput({ writeErr: () => undefined });
    await expect(command.parseAsync([flag, value], { from: 'user' })).rejects.toThrow(message);
  });

  it('refuses a missing, empty or special --client-secret-file (a device, a directory) without printing its path', async () => {
    const empty = join(temp, 'empty');
    writeFileSync(empty, '\n');
    for (const path of [join(temp, 'missing'), empty, '/dev/zero', temp]) {
      const command = emulatorCommand({ write: () => undefined });
      const error = await command.parseAsync(['--client-secret-file', path], { from: 'user' }).catch((e: Error) => e);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/--client-secret-file/);
      expect((error as Error).message).not.toContain(temp);
    }
  });
});
