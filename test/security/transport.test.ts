/**
 * Transport promises: plain http only to loopback unless explicitly allowed; the signed-URL host
 * never sees a bearer token, and no bearer token appears in an upload URL. (A redirect to another
 * origin never carrying the Authorization header: test/http/redirects-cross-origin.test.ts.)
 */
import { ConfigurationError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

describe('plain http', () => {
  it('is refused for a non-loopback host, naming the option', () => {
    for (const baseUrl of ['http://api.example.com', 'http://10.0.0.5:8080', 'http://127.0.0.1.nip.io']) {
      expect(() => clientFor(emulator, { baseUrl })).toThrow(ConfigurationError);
    }
    expect(() =>
      clientFor(emulator, { baseUrl: 'https://api.example.com', authUrl: 'http://auth.example.com' }),
    ).toThrow(/authUrl/);
  });

  it('is allowed for loopback, and elsewhere only with allowInsecureHttp', () => {
    for (const baseUrl of ['http://127.0.0.1:1', 'http://localhost:1', 'http://[::1]:1']) {
      expect(() => clientFor(emulator, { baseUrl })).not.toThrow();
    }
    expect(() => clientFor(emulator, { baseUrl: 'http://api.example.com', allowInsecureHttp: true })).not.toThrow();
  });
});

describe('signed-URL host', () => {
  it('receives no Authorization header, and upload URLs hold no bearer token', async () => {
    const { mock } = emulator;
    const client = clientFor(emulator);
    const names = ['a.csv', 'b.csv'];
    const urls = await client.uploads.getUploadUrls(mock.appId, names);
    await client.uploads.upload(
      mock.appId,
      names.map((name) => ({ name, data: `${name}\n` })),
    );
    const tokens = mock.state.tokens.map((t) => t.token);
    for (const url of Object.values(urls)) for (const token of tokens) expect(url).not.toContain(token);
    for (const name of names) expect(mock.state.file(mock.appId, name)?.authorization).toBeUndefined();
    const puts = mock.state.requests.filter((r) => r.operation === 'upload');
    expect(puts.length).toBe(2);
    for (const put of puts) expect(put.headers.authorization).toBeUndefined();
  });
});
