/** Per-call timeoutMs, maxRetries, headers and signal over the client's settings; defaultHeaders. */
import { inspect } from 'node:util';
import { ConfigurationError, ServerError, TimeoutError } from 'push-api-client';
import { createPushApiHandler, startEmulator } from 'push-api-client/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { clientFor } from '../support/clients.js';
import { capturingFetch } from '../support/recorders.js';
import { SAMPLE_RECORD } from '../support/records.js';

const record = SAMPLE_RECORD;

const addresses = {
  authUrl: 'https://auth.push.test',
  baseUrl: 'https://api.push.test',
  scopeBase: 'https://api.push.test',
  clientId: 'demo-client',
  clientSecret: 'demo-secret-do-not-use-in-production',
};

describe('defaultHeaders and per-call headers', () => {
  it('go to the token endpoint and the data API, the call over the client, never to the storage host', async () => {
    const emulator = createPushApiHandler();
    const { fetch, seen } = capturingFetch(emulator.fetch);
    const client = clientFor({ ...addresses, fetch }, { defaultHeaders: { 'X-Tenant': 'acme', 'X-Trace': 'client' } });
    await client.finance.publish('demo-app', [record], {
      headers: { 'x-trace': 'call-1', 'content-type': 'text/plain' },
    });
    await client.uploads.upload('demo-app', [{ name: 'a.csv', data: 'a\n' }], { headers: { 'x-trace': 'call-2' } });
    const byPath = seen.map((request) => [
      new URL(request.url).host,
      request.method,
      request.headers['x-tenant'],
      request.headers['x-trace'],
      request.headers['content-type'],
    ]);
    expect(byPath).toEqual([
      // The token request the first call made carries that call's headers too.
      ['auth.push.test', 'POST', 'acme', 'call-1', 'application/x-www-form-urlencoded'],
      ['api.push.test', 'POST', 'acme', 'call-1', 'application/json'],
      ['api.push.test', 'GET', 'acme', 'call-2', 'application/json'],
      ['uploads.push.test', 'PUT', undefined, undefined, undefined],
    ]);
  });

  it.each(['Authorization', 'content-length', 'Host', 'Expect'])(
    'refuse %s with a ConfigurationError, before any request',
    async (name) => {
      const emulator = createPushApiHandler();
      expect(() => clientFor(emulator, { defaultHeaders: { [name]: 'x' } })).toThrow(
        new RegExp(`defaultHeaders: ${name} cannot be set`),
      );
      const client = clientFor({ ...addresses, fetch: emulator.fetch });
      const calls = [
        client.finance.publish('demo-app', [record], { headers: { [name]: 'x' } }),
        client.finance.publishBatch('demo-app', [record], { headers: { [name]: 'x' } }),
        client.uploads.upload('demo-app', [{ name: 'a.csv', data: 'a\n' }], { headers: { [name]: 'x' } }),
        client.tokens.getToken({ headers: { [name]: 'x' } }),
      ];
      for (const call of calls) await expect(call).rejects.toBeInstanceOf(ConfigurationError);
      expect(emulator.state.requests).toEqual([]);
    },
  );
});

describe('per-call limits', () => {
  it('maxRetries: 0 on one call sends once where the client would retry', async () => {
    const emulator = createPushApiHandler();
    const client = clientFor({ ...addresses, fetch: emulator.fetch }, { maxRetries: 3 });
    await client.tokens.getToken();
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });
    await expect(client.finance.publishBatch('demo-app', [record], { maxRetries: 0 })).rejects.toBeInstanceOf(
      ServerError,
    );
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });
    await expect(client.finance.publishBatch('demo-app', [record])).resolves.toEqual({ success: true });
    const finance = emulator.state.requests.filter((request) => request.operation === 'finance');
    expect(finance.map((request) => request.status)).toEqual([503, 503, 200]);
  });

  it('timeoutMs on one call times out where the client waits', async () => {
    const server = await startEmulator();
    onTestFinished(() => server.close());
    const client = clientFor(server, { timeoutMs: 30_000, maxRetries: 0 });
    await client.tokens.getToken();
    server.mock.faults.add({ match: { operation: 'upload-urls' }, delayMs: 400, times: 2 });
    await expect(client.uploads.getUploadUrls(server.mock.appId, ['a.csv'], { timeoutMs: 50 })).rejects.toBeInstanceOf(
      TimeoutError,
    );
    const urls = await client.uploads.getUploadUrls(server.mock.appId, ['a.csv']);
    expect(Object.keys(urls)).toEqual(['a.csv']);
  });

  it("a call's maxRetries and timeoutMs also govern the token request the call has to make", async () => {
    const emulator = createPushApiHandler();
    const client = clientFor({ ...addresses, fetch: emulator.fetch }, { maxRetries: 3, timeoutMs: 30_000 });
    emulator.faults.add({ match: { operation: 'token' }, status: 503, retryAfter: 0, times: 1 });
    await expect(client.finance.publishBatch('demo-app', [record], { maxRetries: 0 })).rejects.toMatchObject({
      name: 'TokenError',
      status: 503,
    });
    const tokenStatuses = () => emulator.state.requests.filter((r) => r.operation === 'token').map((r) => r.status);
    expect(tokenStatuses()).toEqual([503]);
    emulator.faults.add({ match: { operation: 'token' }, delayMs: 2_000, times: 1 });
    await expect(
      client.uploads.getUploadUrls('demo-app', ['a.csv'], { timeoutMs: 50, maxRetries: 0 }),
    ).rejects.toBeInstanceOf(TimeoutError);
    expect(emulator.state.requests.filter((r) => r.operation === 'upload-urls')).toEqual([]);
  });

  it('a bad per-call value is a ConfigurationError naming it', async () => {
    const client = clientFor({ ...addresses, fetch: createPushApiHandler().fetch });
    await expect(client.finance.publish('demo-app', [record], { timeoutMs: 0 })).rejects.toThrow(/timeoutMs/);
    await expect(client.finance.publish('demo-app', [record], { maxRetries: 1.5 })).rejects.toThrow(/maxRetries/);
  });

  it('a timeoutMs past what timers take (2^31 ms) is refused, not turned into an instant timeout', async () => {
    const emulator = createPushApiHandler();
    const tooLong = 2 ** 31;
    expect(() => clientFor({ ...addresses, fetch: emulator.fetch }, { timeoutMs: tooLong })).toThrow(
      /timeoutMs must be a number from 1 to 2147483647/,
    );
    const client = clientFor({ ...addresses, fetch: emulator.fetch }, { timeoutMs: 2 ** 31 - 1 });
    await expect(client.finance.publish('demo-app', [record], { timeoutMs: tooLong })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    expect(emulator.state.requests).toEqual([]);
    expect((await client.finance.publish('demo-app', [record])).recordsSent).toBe(1);
  });
});

describe('what a client shows of itself', () => {
  it('never shows default header values in util.inspect or JSON of the client or its parts', () => {
    const client = clientFor(
      { ...addresses, fetch: createPushApiHandler().fetch },
      { defaultHeaders: { 'X-Gateway-Key': 'gw-secret-4711' } },
    );
    for (const part of [client, client.finance, client.uploads, client.tokens]) {
      expect(inspect(part, { depth: 10, showHidden: true })).not.toContain('gw-secret-4711');
      expect(JSON.stringify(part) ?? '').not.toContain('gw-secret-4711');
    }
  });
});
