/**
 * Transport promises: plain http only to loopback unless explicitly allowed; a redirect to another
 * origin never carries the Authorization header; the signed-URL host never sees a bearer token,
 * and no bearer token appears in an upload URL.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigurationError, PushClient } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let emulator: RunningEmulator;
let redirector: Server;
let target: Server;
const seenByTarget: IncomingHttpHeaders[] = [];
let redirectorUrl = '';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

beforeAll(async () => {
  emulator = await startEmulator();
  // The other origin: records what it receives, answers like the service.
  target = createServer((req, res) => {
    seenByTarget.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"success":true}');
    });
  });
  const targetUrl = (await listen(target)).replace('127.0.0.1', 'localhost');
  // The data API answers every finance POST with a 307 to the other origin.
  redirector = createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: `${targetUrl}${req.url ?? '/'}` });
    res.end();
  });
  redirectorUrl = await listen(redirector);
});
afterAll(async () => {
  await emulator.close();
  await new Promise((resolve) => redirector.close(resolve));
  await new Promise((resolve) => target.close(resolve));
});

const base = () => ({
  clientId: emulator.mock.clientId,
  clientSecret: emulator.mock.clientSecret,
  authUrl: emulator.authUrl,
  scopeBase: emulator.mock.scopeBase,
  env: {},
});
const record = {
  created: 1_700_000_000_000,
  amount: 1,
  currency: 'EUR',
  identifier: 'a',
  type: 'expense' as const,
  vendor: 'v',
};

describe('plain http', () => {
  it('is refused for a non-loopback host, naming the option', () => {
    for (const baseUrl of ['http://api.example.com', 'http://10.0.0.5:8080', 'http://127.0.0.1.nip.io']) {
      expect(() => new PushClient({ ...base(), baseUrl })).toThrow(ConfigurationError);
    }
    expect(
      () => new PushClient({ ...base(), baseUrl: 'https://api.example.com', authUrl: 'http://auth.example.com' }),
    ).toThrow(/authUrl/);
  });

  it('is allowed for loopback, and elsewhere only with allowInsecureHttp', () => {
    for (const baseUrl of ['http://127.0.0.1:1', 'http://localhost:1', 'http://[::1]:1']) {
      expect(() => new PushClient({ ...base(), baseUrl })).not.toThrow();
    }
    expect(
      () => new PushClient({ ...base(), baseUrl: 'http://api.example.com', allowInsecureHttp: true }),
    ).not.toThrow();
  });
});

describe('redirects', () => {
  it('a GET redirected to another origin is followed without the Authorization header', async () => {
    const client = new PushClient({ ...base(), baseUrl: redirectorUrl, maxRetries: 0 });
    seenByTarget.length = 0;
    // The other origin answers {"success":true}, which is no address map: the call fails after the hop.
    await client.uploads.getUploadUrls(emulator.mock.appId, ['a.csv']).catch(() => undefined);
    expect(seenByTarget).toHaveLength(1);
    expect(seenByTarget[0]?.authorization).toBeUndefined();
    const tokens = emulator.mock.state.tokens.map((t) => t.token);
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(JSON.stringify(seenByTarget)).not.toContain(token);
  });

  it('a POST redirected to another origin is either refused or sent without the Authorization header', async () => {
    const client = new PushClient({ ...base(), baseUrl: redirectorUrl, maxRetries: 0 });
    seenByTarget.length = 0;
    await client.finance.publishBatch(emulator.mock.appId, [record]).catch(() => undefined);
    for (const headers of seenByTarget) expect(headers.authorization).toBeUndefined();
  });
});

describe('signed-URL host', () => {
  it('receives no Authorization header, and upload URLs hold no bearer token', async () => {
    const { mock } = emulator;
    const client = new PushClient({ ...base(), baseUrl: emulator.baseUrl });
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
