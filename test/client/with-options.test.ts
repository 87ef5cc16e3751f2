import { inspect } from 'node:util';
import { setupServer } from 'msw/node';
import {
  ConfigurationError,
  type PushClient,
  type PushClientOptions,
  type PushClientOverrides,
  ServerError,
} from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

const instant = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 } as const;

function client(options: PushClientOptions = {}): PushClient {
  return clientFor(mock.clientOptions(), { ...instant, ...options });
}

const requestsOf = (operation: string) => mock.state.requests.filter((r) => r.operation === operation);

describe('client.withOptions', () => {
  it('shares the token cache: two clients, one token request', async () => {
    const base = client();
    const derived = base.withOptions({ timeoutMs: 5_000 });
    await base.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    await derived.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    await derived.uploads.getUploadUrls(mock.appId, ['users.csv']);
    expect(mock.state.tokenRequestCount).toBe(1);
    expect(mock.state.recordCount(mock.appId)).toBe(2);
    expect(derived.tokens).toBe(base.tokens);
  });

  it('concurrent first calls of both clients make one token request', async () => {
    const base = client();
    const derived = base.withOptions({ defaultHeaders: { 'x-tenant': 'acme' } });
    await Promise.all([
      base.finance.publishBatch(mock.appId, [SAMPLE_RECORD]),
      derived.finance.publishBatch(mock.appId, [SAMPLE_RECORD]),
      derived.finance.publishBatch(mock.appId, [SAMPLE_RECORD]),
    ]);
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it('merges defaultHeaders key by key, and leaves the original client as it was', async () => {
    const base = client({ defaultHeaders: { 'x-app': 'billing', 'X-Tenant': 'default' } });
    const derived = base.withOptions({ defaultHeaders: { 'x-tenant': 'acme', 'x-region': 'eu' } });
    await derived.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    await base.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    const [fromDerived, fromBase] = requestsOf('finance');
    expect(fromDerived?.headers).toMatchObject({ 'x-app': 'billing', 'x-tenant': 'acme', 'x-region': 'eu' });
    expect(fromBase?.headers).toMatchObject({ 'x-app': 'billing', 'x-tenant': 'default' });
    expect(fromBase?.headers).not.toHaveProperty('x-region');
    // The token request the derived client's first call caused carries its headers too.
    expect(requestsOf('token')[0]?.headers).toMatchObject({ 'x-tenant': 'acme', 'x-region': 'eu' });
  });

  it('applies the overrides: maxRetries 0 gives up where the original retries', async () => {
    const base = client();
    const once = base.withOptions({ maxRetries: 0 });
    expect(once.toJSON()).toMatchObject({ maxRetries: 0, timeoutMs: 30_000 });
    expect(base.toJSON()).toMatchObject({ maxRetries: 3 });
    mock.faults.add({ match: { operation: 'finance' }, status: 503 });
    await expect(once.finance.publishBatch(mock.appId, [SAMPLE_RECORD])).rejects.toBeInstanceOf(ServerError);
    expect(requestsOf('finance').map((r) => r.status)).toEqual([503]);
    mock.faults.add({ match: { operation: 'finance' }, status: 503 });
    await base.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    expect(requestsOf('finance').map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('merges backoff part by part and keeps the rest of the timing', () => {
    const base = client({ backoff: { initialDelayMs: 100, maxDelayMs: 2_000 }, maxRetryAfterMs: 1_000 });
    const derived = base.withOptions({ backoff: { maxDelayMs: 500 } });
    expect(derived.toJSON()).toMatchObject({
      backoff: { initialDelayMs: 100, maxDelayMs: 500 },
      maxRetryAfterMs: 1_000,
    });
  });

  it('inherits hooks unless they are overridden', async () => {
    const seenByBase: string[] = [];
    const seenByOther: string[] = [];
    const base = client({ hooks: { response: (event) => void seenByBase.push(event.operation) } });
    await base.withOptions({ userAgent: 'tenant/1' }).finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    expect(seenByBase).toEqual(['token', 'finance']);
    const other = base.withOptions({ hooks: { response: (event) => void seenByOther.push(event.operation) } });
    await other.finance.publishBatch(mock.appId, [SAMPLE_RECORD]);
    expect(seenByOther).toEqual(['finance']);
    expect(seenByBase).toEqual(['token', 'finance']);
    expect(requestsOf('finance')[0]?.headers['user-agent']).toMatch(/^tenant\/1 push-api-client\//);
  });

  it('refuses to change the credential, the token cache or the addresses', () => {
    const base = client();
    const kept: Record<string, unknown>[] = [
      { clientId: 'other' },
      { clientSecret: 'other' },
      { baseUrl: 'https://elsewhere.test' },
      { authUrl: 'https://elsewhere.test' },
      { scopes: ['x'] },
      { tokenStore: undefined, allowInsecureHttp: true },
    ];
    for (const overrides of kept) {
      const name = Object.keys(overrides).at(-1) as string;
      expect(() => base.withOptions(overrides as PushClientOverrides), name).toThrow(ConfigurationError);
      expect(() => base.withOptions(overrides as PushClientOverrides), name).toThrow(name);
    }
  });

  it('leaves the credential and the addresses out of the overrides type', () => {
    const base = client();
    // @ts-expect-error a derived client keeps the original's credential
    expect(() => base.withOptions({ clientSecret: 'other' })).toThrow(ConfigurationError);
    // @ts-expect-error and the original's addresses
    expect(() => base.withOptions({ baseUrl: 'https://elsewhere.test' })).toThrow(ConfigurationError);
  });

  it('checks the overrides as the constructor does', () => {
    const base = client();
    expect(() => base.withOptions({ timeoutMs: -1 })).toThrow(/timeoutMs/);
    expect(() => base.withOptions({ defaultHeaders: { Authorization: 'Bearer x' } })).toThrow(ConfigurationError);
    expect(() => base.withOptions({ backoff: { initialDelayMs: -1 } })).toThrow(/backoff\.initialDelayMs/);
    expect(() => base.withOptions(null as unknown as PushClientOverrides)).toThrow(ConfigurationError);
  });

  it('a derived client holds no secret in its inspect or JSON output', () => {
    const derived = client().withOptions({ timeoutMs: 1_000 });
    expect(JSON.stringify(derived)).not.toContain(mock.clientSecret);
    expect(inspect(derived, { showHidden: true, depth: 10 })).not.toContain(mock.clientSecret);
    expect(inspect(derived.finance, { showHidden: true, depth: 10 })).not.toContain(mock.clientSecret);
  });
});
