import { describe, expect, it } from 'vitest';
import { emulatorCommand, parseRateLimit } from '../../src/cli/commands/emulator.js';

describe('push-api emulator command', () => {
  it('serves until stopped, printing the addresses and demo credentials, then closes', async () => {
    const output: string[] = [];
    const stop = new AbortController();
    const command = emulatorCommand({ write: (text) => output.push(text), stopSignal: stop.signal });
    const done = command.parseAsync(['--port', '0', '--token-ttl', '30', '--rate-limit', '5/1s'], { from: 'user' });
    await expect.poll(() => output.join(''), { timeout: 5000 }).toContain('Press Ctrl+C');
    const text = output.join('');
    const baseUrl = /base URL:\s+(\S+)/.exec(text)?.[1];
    expect(text).toMatch(/auth URL:\s+http:\/\/127\.0\.0\.1:\d+\/auth/);
    expect(text).toContain('client id:     demo-client');
    expect(text).toContain('client secret: demo-secret-do-not-use-in-production');
    expect(text).toContain('app id:        demo-app');
    expect(text).toContain('scope base:    https://api.push.test');
    const token = await fetch(`${baseUrl}/auth/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'demo-client',
        client_secret: 'demo-secret-do-not-use-in-production',
      }),
    });
    expect((await token.json()).expires_in).toBe(30);
    stop.abort();
    await done;
    expect(output.at(-1)).toBe('emulator stopped\n');
    await expect(fetch(`${baseUrl}/`)).rejects.toThrow();
  });

  it('reads rate limits as requests per window', () => {
    expect(parseRateLimit('100/1s')).toEqual({ requests: 100, windowMs: 1000 });
    expect(parseRateLimit('10/500ms')).toEqual({ requests: 10, windowMs: 500 });
    expect(parseRateLimit('600/1m')).toEqual({ requests: 600, windowMs: 60_000 });
    expect(parseRateLimit('3/2')).toEqual({ requests: 3, windowMs: 2000 });
    expect(() => parseRateLimit('fast')).toThrow(/100\/1s/);
    expect(() => parseRateLimit('5/0s')).toThrow();
  });

  it('refuses a port that is not a number', async () => {
    const command = emulatorCommand({ write: () => undefined })
      .exitOverride()
      .configureOutput({ writeErr: () => undefined });
    await expect(command.parseAsync(['--port', 'http'], { from: 'user' })).rejects.toThrow(/port/);
  });
});
