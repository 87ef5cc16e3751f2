import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PushClient } from 'push-api-client';
import { afterAll, describe, expect, it } from 'vitest';
import { emulatorCommand, parseRateLimit, shellQuote } from '../../src/cli/commands/emulator.js';
import type { EmulatorSnapshot } from '../../src/testing/inspection.js';

const temp = mkdtempSync(join(tmpdir(), 'emulator-command-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** The `export NAME=value` lines of the banner, read as a shell would (values here need no quotes). */
function exportsOf(banner: string): Record<string, string> {
  return Object.fromEntries([...banner.matchAll(/^export (PUSH_\w+)=(\S+)$/gm)].map((match) => [match[1], match[2]]));
}

const expense = { created: '2025-03-01', amount: 5, currency: 'EUR', type: 'expense', vendor: 'Acme' } as const;

describe('push-api emulator command', () => {
  it('prints export lines that configure a client, shows what it received, and saves records on stop', async () => {
    const output: string[] = [];
    const stop = new AbortController();
    const saveTo = join(temp, 'received.jsonl');
    const command = emulatorCommand({ write: (text) => output.push(text), stopSignal: stop.signal });
    const done = command.parseAsync(['--port', '0', '--token-ttl', '30', '--save', saveTo], { from: 'user' });
    await expect.poll(() => output.join(''), { timeout: 5000 }).toContain('Press Ctrl+C');
    const env = exportsOf(output.join(''));
    expect(Object.keys(env)).toEqual([
      'PUSH_AUTH_URL',
      'PUSH_BASE_URL',
      'PUSH_SCOPE_BASE',
      'PUSH_CLIENT_ID',
      'PUSH_CLIENT_SECRET',
      'PUSH_APP_ID',
    ]);
    expect(env.PUSH_AUTH_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/auth$/);

    const client = new PushClient({ env });
    expect((await client.tokens.getToken()).expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(30_000);
    await client.finance.publish(env.PUSH_APP_ID!, [
      { ...expense, identifier: 'ada@example.com' },
      { ...expense, identifier: 'bob@example.com' },
    ]);
    await client.uploads.upload(env.PUSH_APP_ID!, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]);
    const unauthorized = await fetch(`${env.PUSH_BASE_URL}/services/push/v1/customer/apps/demo-app/finance`, {
      method: 'POST',
      body: '{}',
    });
    expect(unauthorized.status).toBe(401);

    const snapshot = (await (await fetch(`${env.PUSH_BASE_URL}/_emulator/state`)).json()) as EmulatorSnapshot;
    expect(snapshot.apps).toEqual([
      {
        appId: 'demo-app',
        records: 2,
        deliveries: 1,
        files: [
          expect.objectContaining({
            name: 'users.csv',
            size: 22,
            sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
            bytesKept: true,
          }),
        ],
      },
    ]);
    expect(snapshot.requests.byStatus).toEqual({ 200: 4, 401: 1 });
    expect(snapshot.requests.log.map((entry) => entry.operation)).toEqual([
      'token',
      'finance',
      'upload-urls',
      'upload',
      'finance',
    ]);
    const text = JSON.stringify(snapshot);
    expect(text).not.toContain(env.PUSH_CLIENT_SECRET);
    expect(text).not.toContain((await client.tokens.getToken()).accessToken);
    const jsonl = await (await fetch(`${env.PUSH_BASE_URL}/_emulator/records`)).text();
    expect(
      jsonl
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).record.identifier),
    ).toEqual(['ada@example.com', 'bob@example.com']);

    stop.abort();
    await done;
    const summary = output.slice(-3).join('');
    expect(summary).toContain('demo-app: 2 records in 1 request, 1 file (22 bytes)');
    expect(summary).toContain('requests: 5 (200 ×4, 401 ×1)');
    expect(summary).toContain(`saved 2 records to ${saveTo}`);
    expect(output.at(-1)).toBe('emulator stopped\n');
    expect(readFileSync(saveTo, 'utf8')).toBe(jsonl);
    await expect(fetch(`${env.PUSH_BASE_URL}/`)).rejects.toThrow();
  });

  it('quotes export values only when a shell needs it', () => {
    expect(shellQuote('http://127.0.0.1:4010/auth')).toBe('http://127.0.0.1:4010/auth');
    expect(shellQuote('http://[::1]:4010')).toBe("'http://[::1]:4010'");
    expect(shellQuote("it's $HOME")).toBe("'it'\\''s $HOME'");
  });

  it('reads rate limits as requests per window', () => {
    expect(parseRateLimit('100/1s')).toEqual({ requests: 100, windowMs: 1000 });
    expect(parseRateLimit('10/500ms')).toEqual({ requests: 10, windowMs: 500 });
    expect(parseRateLimit('600/1m')).toEqual({ requests: 600, windowMs: 60_000 });
    expect(parseRateLimit('3/2')).toEqual({ requests: 3, windowMs: 2000 });
    expect(parseRateLimit('100/s')).toEqual({ requests: 100, windowMs: 1000 });
    expect(parseRateLimit('5/m')).toEqual({ requests: 5, windowMs: 60_000 });
    expect(() => parseRateLimit('fast')).toThrow(/100\/s/);
    expect(() => parseRateLimit('5/0s')).toThrow();
    expect(() => parseRateLimit('0/s')).toThrow(/at least 1/);
    expect(() => parseRateLimit('5/')).toThrow();
  });

  it.each([
    ['a port that is not a number', ['--port', 'http'], /port/],
    ['a --save path that is a directory', ['--save', tmpdir()], /is a directory/],
    ['a --save path in a missing directory', ['--save', join(tmpdir(), 'no-such-dir-here', 'x.jsonl')], /cannot write/],
  ])('refuses %s before starting', async (_, args, message) => {
    const command = emulatorCommand({ write: () => undefined })
      .exitOverride()
      .configureOutput({ writeErr: () => undefined });
    await expect(command.parseAsync(args, { from: 'user' })).rejects.toThrow(message);
  });
});
