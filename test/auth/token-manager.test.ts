import { AbortError, type FetchLike, MemoryTokenStore, TokenError, type TokenStore } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it, vi } from 'vitest';
import { REFRESH_ENDS_WITH_ITS_STARTER as NODE_REFRESH_ENDS_WITH_ITS_STARTER } from '../../src/auth/refresh-owner.js';
import { REFRESH_ENDS_WITH_ITS_STARTER as WEB_REFRESH_ENDS_WITH_ITS_STARTER } from '../../src/auth/refresh-owner.web.js';
import { bearerSourceOf, findNodeCrypto, type TokenManagerOptions } from '../../src/auth/token-manager.js';
import { FetchHttpClient } from '../../src/http/http-client.js';
import { clientFor, emulatorTokenManager } from '../support/clients.js';
import { capturingFetch, recordingLogger } from '../support/recorders.js';
import { financeRecord } from '../support/records.js';

type Mock = ReturnType<typeof createPushApiMock>;

/** Token requests that reached the emulator, faulted ones included. */
const tokenRequests = (mock: Mock) => mock.state.requests.filter((r) => r.operation === 'token').length;

function setup(
  mock: Mock = createPushApiMock(),
  overrides: Partial<TokenManagerOptions> & { fetch?: FetchLike; maxRetries?: number } = {},
) {
  const { fetch = mock.fetch, maxRetries = 2, ...rest } = overrides;
  const http = new FetchHttpClient({
    fetch,
    timeoutMs: 2_000,
    maxRetries,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'test',
    logger: recordingLogger(),
    backoff: { initialDelayMs: 1, maxDelayMs: 5 },
  });
  const tokens = emulatorTokenManager(http, mock, rest);
  return { mock, tokens };
}

describe('TokenManager against the emulator', () => {
  it('sends the client-credentials request exactly as the spec shows (client_secret_post)', async () => {
    const mock = createPushApiMock();
    const capture = capturingFetch(mock.fetch);
    const { tokens } = setup(mock, { fetch: capture.fetch });
    const token = await tokens.getToken();
    expect(capture.seen).toHaveLength(1);
    const [request] = capture.seen;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe(`${mock.authUrl}/oauth2/token`);
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request?.headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({
      grant_type: 'client_credentials',
      scope: `${mock.scopeBase}/connector.write`,
      client_id: mock.clientId,
      client_secret: mock.clientSecret,
    });
    expect(token.tokenType.toLowerCase()).toBe('bearer');
    expect(token.scopes).toEqual([`${mock.scopeBase}/connector.write`]);
    expect(mock.state.tokens.map((t) => t.token)).toEqual([token.accessToken]);
  });

  it('client_secret_basic form-urlencodes id and secret before base64 and keeps the secret out of the body', async () => {
    const clientId = 'id with:colon';
    const clientSecret = 'p@ss+wörd/=&x';
    const mock = createPushApiMock({
      credentials: [{ clientId, clientSecret, scopes: ['https://api.push.test/connector.write'] }],
    });
    const capture = capturingFetch(mock.fetch);
    const { tokens } = setup(mock, {
      fetch: capture.fetch,
      clientId,
      clientSecret,
      tokenAuthMethod: 'client_secret_basic',
    });
    await tokens.getToken();
    const [request] = capture.seen;
    const encoded = `${new URLSearchParams({ a: clientId }).toString().slice(2)}:${new URLSearchParams({ a: clientSecret }).toString().slice(2)}`;
    expect(request?.headers.authorization).toBe(`Basic ${Buffer.from(encoded).toString('base64')}`);
    expect(request?.body).not.toContain('client_secret');
    expect(mock.state.tokens).toHaveLength(1);
  });

  it('10,000 concurrent getToken calls make one token request', async () => {
    const { mock, tokens } = setup();
    const results = await Promise.all(Array.from({ length: 10_000 }, () => tokens.getToken()));
    expect(mock.state.tokenRequestCount).toBe(1);
    expect(new Set(results.map((t) => t.accessToken)).size).toBe(1);
  });

  it('a failed refresh is retried by the next call', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, status: 500, times: 1 });
    const { tokens } = setup(mock, { maxRetries: 0 });
    const first = await Promise.allSettled([tokens.getToken(), tokens.getToken()]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(tokenRequests(mock)).toBe(1);
    await expect(tokens.getToken()).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(tokenRequests(mock)).toBe(2);
  });

  it('serves the cached token until min(60 s, 10% of its lifetime) before expiry', async () => {
    let now = 1_000_000;
    const mock = createPushApiMock({ tokenTtlSeconds: 100 });
    const { tokens } = setup(mock, { now: () => now });
    const first = await tokens.getToken();
    expect(first.expiresAt.getTime()).toBe(1_000_000 + 100_000);
    now += 89_000;
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    now += 2_000; // 91 s in: inside the 10 s early-refresh window
    expect((await tokens.getToken()).accessToken).not.toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });

  it("counts a token's lifetime from its request's last attempt, not from its answer's arrival", async () => {
    let now = 1_000_000;
    const mock = createPushApiMock({ tokenTtlSeconds: 10 });
    // The first attempt fails after 2 s; the second is answered 3 s after it left (a slow path).
    let attempts = 0;
    const slow: FetchLike = async (input, init) => {
      attempts += 1;
      if (attempts === 1) {
        now += 2_000;
        return new Response('busy', { status: 503 });
      }
      const response = await mock.fetch(input, init);
      now += 3_000;
      return response;
    };
    const { tokens } = setup(mock, { fetch: slow, now: () => now });
    const token = await tokens.getToken();
    expect(attempts).toBe(2);
    // Issued during the second attempt (which left at 1_002_000): it ends 10 s after that at the latest.
    expect(token.expiresAt.getTime()).toBe(1_002_000 + 10_000);
    now = 1_002_000 + 9_000; // 1 s before the service's end: inside the 10% early-refresh window
    expect((await tokens.getToken()).accessToken).not.toBe(token.accessToken);
  });

  it('refreshes a long-lived token 60 s before it expires', async () => {
    let now = 0;
    const mock = createPushApiMock({ tokenTtlSeconds: 3_600 });
    const { tokens } = setup(mock, { now: () => now });
    const first = await tokens.getToken();
    now = 3_539_000;
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    now = 3_541_000;
    expect((await tokens.getToken()).accessToken).not.toBe(first.accessToken);
  });

  it('forceRefresh fetches a new token; invalidate() makes the next call fetch one', async () => {
    const { mock, tokens } = setup();
    const a = await tokens.getToken();
    const b = await tokens.getToken({ forceRefresh: true });
    expect(b.accessToken).not.toBe(a.accessToken);
    tokens.invalidate();
    const c = await tokens.getToken();
    expect(c.accessToken).not.toBe(b.accessToken);
    expect(mock.state.tokenRequestCount).toBe(3);
  });

  it('invalidating an outdated token keeps the current one, so concurrent 401s cause one refresh', async () => {
    const { mock, tokens } = setup();
    const old = await tokens.getToken();
    tokens.invalidate(old.accessToken);
    const fresh = await tokens.getToken();
    tokens.invalidate(old.accessToken);
    expect((await tokens.getToken()).accessToken).toBe(fresh.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });

  it('caches per scope set, whatever the order of the scopes', async () => {
    const { mock, tokens } = setup();
    const write = `${mock.scopeBase}/connector.write`;
    const read = `${mock.scopeBase}/report.read`;
    const both = await tokens.getToken({ scopes: [write, read] });
    expect((await tokens.getToken({ scopes: [read, write] })).accessToken).toBe(both.accessToken);
    expect((await tokens.getToken()).accessToken).not.toBe(both.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });

  it.each(['invalid_client', 'invalid_scope'])(
    '%s is a TokenError with that code and is never retried',
    async (code) => {
      const mock = createPushApiMock();
      const overrides =
        code === 'invalid_client' ? { clientSecret: 'wrong-secret' } : { scopes: [`${mock.scopeBase}/not.a.scope`] };
      const { tokens } = setup(mock, overrides);
      const error = (await tokens.getToken().catch((e: unknown) => e)) as TokenError;
      expect(error).toBeInstanceOf(TokenError);
      expect(error.error).toBe(code);
      expect(mock.state.tokenRequestCount).toBe(1);
    },
  );

  it('retries 503 and 429 from the token endpoint, honouring Retry-After', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: 1 });
    mock.faults.add({ match: { operation: 'token' }, status: 429, retryAfter: 0, times: 1 });
    const { tokens } = setup(mock);
    await expect(tokens.getToken()).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(tokenRequests(mock)).toBe(3);
  });

  it.each([
    ['a wrong token_type', { access_token: 'tok-quoted-never', token_type: 'mac', expires_in: 60 }],
    ['a missing access_token', { token_type: 'Bearer', expires_in: 60 }],
    ['an empty access_token', { access_token: '', token_type: 'Bearer', expires_in: 60 }],
    ['a negative expires_in', { access_token: 'tok-quoted-never', token_type: 'Bearer', expires_in: -5 }],
    ['a missing expires_in', { access_token: 'tok-quoted-never', token_type: 'Bearer' }],
    ['a non-finite expires_in', { access_token: 'tok-quoted-never', token_type: 'Bearer', expires_in: 'Infinity' }],
  ])('a token response with %s is a TokenError that does not quote the body', async (_name, body) => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, status: 200, body });
    const { tokens } = setup(mock);
    const error = (await tokens.getToken().catch((e: unknown) => e)) as TokenError;
    expect(error).toBeInstanceOf(TokenError);
    expect(error.error).toBe('invalid_token_response');
    // A token value no request id (a UUID, also in the error's JSON) can contain by chance.
    expect(`${error.message}${JSON.stringify(error)}`).not.toContain('tok-quoted-never');
  });

  it('accepts token_type in any case', async () => {
    const mock = createPushApiMock();
    mock.faults.add({
      match: { operation: 'token' },
      status: 200,
      body: { access_token: 'x1', token_type: 'bEaReR', expires_in: 60 },
    });
    await expect(setup(mock).tokens.getToken()).resolves.toMatchObject({ accessToken: 'x1' });
  });

  it('a response whose scope lacks a required scope fails before any data call', async () => {
    const mock = createPushApiMock();
    mock.faults.add({
      match: { operation: 'token' },
      status: 200,
      body: { access_token: 'x2', token_type: 'Bearer', expires_in: 60, scope: `${mock.scopeBase}/report.read` },
    });
    const error = (await setup(mock)
      .tokens.getToken()
      .catch((e: unknown) => e)) as TokenError;
    expect(error).toBeInstanceOf(TokenError);
    expect(error.error).toBe('insufficient_scope');
    expect(error.message).toContain('connector.write');
  });

  it('a shared tokenStore lets two managers use one token, under a key without the secret', async () => {
    const mock = createPushApiMock();
    const keys: string[] = [];
    const inner = new MemoryTokenStore();
    const store = {
      get: (key: string) => inner.get(key),
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1], expiresAt: Date) => {
        keys.push(key);
        inner.set(key, token);
        expect(expiresAt.getTime()).toBe(token.expiresAt.getTime());
      },
    };
    const a = setup(mock, { tokenStore: store }).tokens;
    const b = setup(mock, { tokenStore: store }).tokens;
    const first = await a.getToken();
    expect((await b.getToken()).accessToken).toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(1);
    expect(keys.join()).not.toContain(mock.clientSecret);
    expect(keys.join()).not.toContain(mock.clientId);
  });

  it('names a stored token as earlier versions did: the SHA-256 of token URL, client id and scopes, on every build', async () => {
    const mock = createPushApiMock();
    const keys: string[] = [];
    const inner = new MemoryTokenStore();
    const store = {
      get: (key: string) => {
        keys.push(key);
        return inner.get(key);
      },
      set: (key: string, token: Parameters<MemoryTokenStore['set']>[1]) => inner.set(key, token),
    };
    await setup(mock, { tokenStore: store }).tokens.getToken();
    // Computed here with WebCrypto, as versions before the synchronous hash did: a shared store
    // (Redis, a file) filled by an older version keeps serving the newer one.
    const material = `${mock.authUrl}/oauth2/token\n${mock.clientId}\n${mock.scopeBase}/connector.write`;
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(material)));
    const hex = Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
    expect(keys).toEqual([`push-api-client:token:${hex}`]);
  });

  it('gives the same store key when WebCrypto hashes it (no working node:crypto), non-ASCII included', async () => {
    const credentials = { clientId: 'client-é-ü√', scope: 'https://api.push.test/connector.write' };
    const webCryptoHex = async (text: string) =>
      Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))), (byte) =>
        byte.toString(16).padStart(2, '0'),
      ).join('');
    // The SDK loaded afresh where process.getBuiltinModule finds no node:crypto: it hashes with WebCrypto.
    const original = Object.getOwnPropertyDescriptor(process, 'getBuiltinModule');
    const lookup = process.getBuiltinModule.bind(process);
    vi.resetModules();
    Object.defineProperty(process, 'getBuiltinModule', {
      configurable: true,
      writable: true,
      value: (id: string) => (id === 'node:crypto' || id === 'crypto' ? undefined : lookup(id)),
    });
    let sdk: typeof import('../../src/index.js');
    try {
      sdk = await import('../../src/index.js');
    } finally {
      if (original) Object.defineProperty(process, 'getBuiltinModule', original);
      vi.resetModules();
    }
    const mock = createPushApiMock({
      credentials: [{ clientId: credentials.clientId, clientSecret: 'secret-of-é', scopes: [credentials.scope] }],
    });
    const keys: string[] = [];
    const client = new sdk.PushClient({
      ...mock.clientOptions(),
      clientId: credentials.clientId,
      clientSecret: 'secret-of-é',
      fetch: mock.fetch,
      env: {},
      tokenStore: {
        get: (key: string) => {
          keys.push(key);
          return undefined;
        },
        set: () => undefined,
      },
    });
    const digest = vi.spyOn(crypto.subtle, 'digest');
    try {
      await client.tokens.getToken();
      expect(digest).toHaveBeenCalledWith('SHA-256', expect.anything());
    } finally {
      digest.mockRestore();
    }
    const material = `${mock.authUrl}/oauth2/token\n${credentials.clientId}\n${credentials.scope}`;
    expect(keys).toEqual([`push-api-client:token:${await webCryptoHex(material)}`]);
  });

  it('hashes with node:crypto only where process.getBuiltinModule gives a working one', () => {
    expect(findNodeCrypto()?.createHash('sha256').update('x').digest('hex')).toBe(
      '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881',
    );
    // A bundler's stand-in process, a lookup that throws or finds something else: WebCrypto hashes.
    const throwing = {
      getBuiltinModule() {
        throw new Error('No such built-in module: node:crypto');
      },
    };
    for (const runtime of [null, {}, { getBuiltinModule: 'yes' }, throwing, { getBuiltinModule: () => ({}) }]) {
      expect(findNodeCrypto(runtime)).toBeUndefined();
    }
  });

  it('leaves a node:crypto stand-in whose createHash throws or digests to no hex to WebCrypto', async () => {
    const real = findNodeCrypto();
    // A polyfill's createHash that is there but not implemented (unenv's stubs throw when called),
    // and one whose digest is not the hex string asked for: hashing with them would fail every
    // getToken, or make a key an older version never wrote.
    const stubs = [
      {
        createHash() {
          throw new Error('[unenv] crypto.createHash is not implemented yet!');
        },
      },
      {
        createHash: () => ({
          update(this: unknown) {
            return this;
          },
          digest: () => new Uint8Array(32),
        }),
      },
      { createHash: () => real?.createHash('sha1') },
      // Strings read as Latin-1 whatever the encoding asked: right for ASCII, wrong for a client id like 'clïent'.
      {
        createHash: (algorithm: string) => {
          const hash = real?.createHash(algorithm);
          return {
            update(text: string) {
              hash?.update(text, 'latin1');
              return this;
            },
            digest: (encoding: 'hex') => hash?.digest(encoding),
          };
        },
      },
    ];
    for (const stub of stubs) expect(findNodeCrypto({ getBuiltinModule: () => stub })).toBeUndefined();
    expect(findNodeCrypto({ getBuiltinModule: () => real })).toBe(real);
  });

  it('loads where reading the global process throws (a sandbox guarding Node APIs)', () => {
    const own = Object.getOwnPropertyDescriptor(globalThis, 'process');
    if (own === undefined) throw new Error('this test runs in Node');
    let found: unknown = 'not called';
    Object.defineProperty(globalThis, 'process', {
      configurable: true,
      get() {
        throw new Error('process is not available in this sandbox');
      },
    });
    try {
      // What the module does once as it loads: an exception here would fail its import.
      found = findNodeCrypto();
    } finally {
      Object.defineProperty(globalThis, 'process', own);
    }
    expect(found).toBeUndefined();
  });

  it('a signal aborted before the call rejects at once and asks nobody (no refresh is left unawaited)', async () => {
    const mock = createPushApiMock();
    const { tokens } = setup(mock);
    const controller = new AbortController();
    controller.abort();
    await expect(tokens.getToken({ signal: controller.signal })).rejects.toBeInstanceOf(AbortError);
    expect(mock.state.tokenRequestCount).toBe(0);
  });

  it("a caller's abort stops its wait without cancelling the refresh shared with others", async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, delayMs: 100 });
    const { tokens } = setup(mock);
    const controller = new AbortController();
    const aborted = tokens.getToken({ signal: controller.signal });
    const other = tokens.getToken();
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AbortError);
    await expect(other).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(mock.state.tokenRequestCount).toBe(1);
  });
});

describe('a refresh whose starter leaves, where it ends with its starter (workers)', () => {
  it('the build for workers and edge runtimes hands a refresh over when its starter leaves; Node does not', () => {
    expect(WEB_REFRESH_ENDS_WITH_ITS_STARTER).toBe(true);
    expect(NODE_REFRESH_ENDS_WITH_ITS_STARTER).toBe(false);
  });

  it("a starter's abort hands the refresh over: the caller still waiting gets a token from a refresh of its own", async () => {
    const mock = createPushApiMock();
    // Only the first token request is slow: the one the starter began and gave up.
    mock.faults.add({ match: { operation: 'token' }, delayMs: 5_000 });
    const capture = capturingFetch(mock.fetch);
    const { tokens } = setup(mock, { fetch: capture.fetch, refreshEndsWithItsStarter: true });
    const controller = new AbortController();
    const starter = tokens.getToken({ signal: controller.signal });
    const other = tokens.getToken();
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    await expect(starter).rejects.toBeInstanceOf(AbortError);
    const started = performance.now();
    // On a Worker the first refresh's request stops with the starter's request and never answers:
    // the other caller must not be waiting for it.
    await expect(other).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(capture.seen).toHaveLength(2);
    expect(mock.state.tokens).toHaveLength(1);
  });

  it('a publish that no longer needs its early token hands it over to a caller still waiting', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, delayMs: 5_000 });
    const capture = capturingFetch(mock.fetch);
    const { tokens } = setup(mock, { fetch: capture.fetch, refreshEndsWithItsStarter: true });
    const source = bearerSourceOf(tokens);
    if (source.prefetch === undefined) throw new Error('the token manager offers prefetch');
    const prefetched = source.prefetch({});
    const waiting = tokens.getToken();
    await new Promise((resolve) => setTimeout(resolve, 20));
    prefetched.release();
    await expect(prefetched.ready).rejects.toBeInstanceOf(AbortError);
    await expect(waiting).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(capture.seen).toHaveLength(2);
    expect(mock.state.tokens).toHaveLength(1);
  });

  it('a waiting caller that aborts leaves the refresh to its starter', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, delayMs: 100 });
    const { tokens } = setup(mock, { refreshEndsWithItsStarter: true });
    const controller = new AbortController();
    const starter = tokens.getToken();
    const other = tokens.getToken({ signal: controller.signal });
    controller.abort();
    await expect(other).rejects.toBeInstanceOf(AbortError);
    await expect(starter).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(tokenRequests(mock)).toBe(1);
  });
});

describe('a refresh whose starter stopped waiting without a signal, where it ends with its starter (workers)', () => {
  it('a caller waiting for it starts its own after timeoutMs, instead of waiting forever', async () => {
    const mock = createPushApiMock();
    let tokenRequests = 0;
    // The first token request never answers and ignores its abort: on a Worker, the fetch and the
    // timers of a request that has been answered (its handler raced getToken against a timer of its
    // own, or did not await it) stop where they are.
    const frozen: FetchLike = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (!url.endsWith('/token')) return mock.fetch(input, init);
      tokenRequests += 1;
      return tokenRequests === 1 ? new Promise<Response>(() => {}) : mock.fetch(input, init);
    };
    const { tokens } = setup(mock, { fetch: frozen, refreshEndsWithItsStarter: true, timeoutMs: 200 });
    // The starter's request moved on without telling the manager.
    void tokens.getToken().catch(() => undefined);
    const started = performance.now();
    const waited = await Promise.race([
      tokens.getToken().then((token) => token.tokenType),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 3_000)),
    ]);
    expect(waited).toBe('Bearer');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(tokenRequests).toBe(2);
  });

  it('one that answers in time is waited for: no second token request', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, delayMs: 100 });
    const { tokens } = setup(mock, { refreshEndsWithItsStarter: true, timeoutMs: 1_000 });
    const [first, second] = await Promise.all([tokens.getToken(), tokens.getToken()]);
    expect(second.accessToken).toBe(first.accessToken);
    expect(tokenRequests(mock)).toBe(1);
  });
});

describe('a refresh handed over after its token arrived', () => {
  it('the caller still waiting takes that token: no second token request', async () => {
    const mock = createPushApiMock();
    let sets = 0;
    // A store slow to write (a Workers KV, say): the starter gives up while its token is being stored.
    const store = new MemoryTokenStore();
    const slowStore: TokenStore = {
      get: (key) => store.get(key),
      set: async (key, token) => {
        sets += 1;
        await new Promise((resolve) => setTimeout(resolve, 300));
        store.set(key, token);
      },
    };
    const { tokens } = setup(mock, { refreshEndsWithItsStarter: true, tokenStore: slowStore });
    const controller = new AbortController();
    const starter = tokens.getToken({ signal: controller.signal });
    const other = tokens.getToken();
    while (sets === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(starter).rejects.toBeInstanceOf(AbortError);
    await expect(other).resolves.toMatchObject({ tokenType: 'Bearer' });
    expect(tokenRequests(mock)).toBe(1);
  });
});

describe('early refresh with the default store', () => {
  // A realistic epoch: the store and the manager must agree on the clock, whatever Date.now says.
  const start = Date.now();

  it('refreshes a 100 s token at 90 s even though the store still holds it, not at 100 s', async () => {
    let now = start;
    const mock = createPushApiMock({ tokenTtlSeconds: 100, now: () => now });
    const { tokens } = setup(mock, { now: () => now });
    const first = await tokens.getToken();
    now = start + 89_999;
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(1);
    now = start + 90_000;
    const second = await tokens.getToken();
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
    now = start + 95_000;
    expect((await tokens.getToken()).accessToken).toBe(second.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });

  it('a token for a 2 s lifetime is refreshed within its last 200 ms', async () => {
    let now = start;
    const mock = createPushApiMock({ tokenTtlSeconds: 2, now: () => now });
    const { tokens } = setup(mock, { now: () => now });
    const first = await tokens.getToken();
    now = start + 1_799;
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    now = start + 1_800;
    expect((await tokens.getToken()).accessToken).not.toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });

  it('a token another process stored is used only while more than 60 s remain', async () => {
    const now = start;
    const stored = (remainingMs: number) => ({
      get: () => ({
        accessToken: `stored-${remainingMs}`,
        tokenType: 'Bearer',
        expiresAt: new Date(now + remainingMs),
        scopes: ['https://api.push.test/connector.write'],
      }),
      set: () => undefined,
    });
    const fresh = setup(createPushApiMock(), { now: () => now, tokenStore: stored(61_000) });
    expect((await fresh.tokens.getToken()).accessToken).toBe('stored-61000');
    expect(fresh.mock.state.tokenRequestCount).toBe(0);
    const dying = setup(createPushApiMock(), { now: () => now, tokenStore: stored(60_000) });
    expect((await dying.tokens.getToken()).accessToken).not.toBe('stored-60000');
    expect(dying.mock.state.tokenRequestCount).toBe(1);
  });

  it('MemoryTokenStore drops expired tokens by its own clock', () => {
    let now = 0;
    const store = new MemoryTokenStore({ now: () => now });
    store.set('k', { accessToken: 't', tokenType: 'Bearer', expiresAt: new Date(1_000), scopes: [] });
    now = 999;
    expect(store.get('k')?.accessToken).toBe('t');
    now = 1_000;
    expect(store.get('k')).toBeUndefined();
  });
});

describe('an early refresh that fails', () => {
  const start = Date.now();
  // A 100 s token is refreshed from 90 s on; at 95 s the service still takes it.
  const setupDown = () => {
    let now = start;
    const mock = createPushApiMock({ tokenTtlSeconds: 100, now: () => now });
    const logger = recordingLogger();
    const { tokens } = setup(mock, { now: () => now, logger });
    return { mock, logger, tokens, at: (ms: number) => (now = start + ms) };
  };

  it('hands out the current token until it expires, with a warning, while the token endpoint fails', async () => {
    const { mock, logger, tokens, at } = setupDown();
    const first = await tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: Infinity });
    at(95_000);
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    // Tried once (with a token at hand, no retry is waited for), and tried again by the next call.
    expect(tokenRequests(mock)).toBe(1 + 1);
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    expect(tokenRequests(mock)).toBe(1 + 2);
    const warnings = logger.lines.filter((line) => line.level === 'warn' && line.message.includes('refresh failed'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]?.fields).toEqual({ expiresAt: first.expiresAt, error: 'TokenError' });
    expect(JSON.stringify(logger.lines)).not.toContain(first.accessToken);
    at(100_000);
    await expect(tokens.getToken()).rejects.toBeInstanceOf(TokenError);
    mock.faults.clear();
    expect((await tokens.getToken()).accessToken).not.toBe(first.accessToken);
  });

  it('concurrent callers of a failed early refresh all get the current token, from one refresh and one warning', async () => {
    const { mock, logger, tokens, at } = setupDown();
    const first = await tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: Infinity });
    at(95_000);
    const all = await Promise.all(Array.from({ length: 10 }, () => tokens.getToken()));
    expect(new Set(all.map((token) => token.accessToken))).toEqual(new Set([first.accessToken]));
    expect(tokenRequests(mock)).toBe(1 + 1);
    expect(logger.lines.filter((line) => line.message.includes('refresh failed'))).toHaveLength(1);
  });

  it('falls back neither for a forced refresh nor for a token the service refused', async () => {
    const { mock, tokens, at } = setupDown();
    const first = await tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: Infinity });
    at(95_000);
    await expect(tokens.getToken({ forceRefresh: true })).rejects.toBeInstanceOf(TokenError);
    tokens.invalidate(first.accessToken);
    await expect(tokens.getToken()).rejects.toBeInstanceOf(TokenError);
  });

  it('waits out no Retry-After of the token endpoint while the current token is good: one attempt, then that token', async () => {
    const { mock, tokens, at } = setupDown();
    const first = await tokens.getToken();
    // Retried twice, each after 3 s, this held every request of the margin for 6 s.
    mock.faults.add({ match: { operation: 'token' }, status: 503, retryAfter: 3, times: Infinity });
    at(95_000);
    const started = performance.now();
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(tokenRequests(mock)).toBe(1 + 1);
  });

  it('goes on with its retries when the token at hand expired while its one attempt was on the way', async () => {
    let now = start;
    const mock = createPushApiMock({ tokenTtlSeconds: 100, now: () => now });
    // The second token request (the early refresh at 95 s) comes back after the token's expiry.
    let tokenCalls = 0;
    const fetch: FetchLike = (input, init) => {
      const request = new Request(input, init);
      if (request.url.endsWith('/oauth2/token') && ++tokenCalls === 2) now = start + 100_500;
      return mock.fetch(request);
    };
    const { tokens } = setup(mock, { now: () => now, fetch });
    const first = await tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: 1 });
    now = start + 95_000;
    const next = await tokens.getToken();
    expect(next.accessToken).not.toBe(first.accessToken);
    expect(tokenRequests(mock)).toBe(1 + 2);
  });

  it('retries as before when no token is at hand', async () => {
    const { mock, tokens } = setupDown();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: 2 });
    await expect(tokens.getToken()).resolves.toMatchObject({ tokenType: expect.any(String) });
    expect(tokenRequests(mock)).toBe(3);
  });

  it('a new manager uses a token another process stored, in its margin, while the token endpoint fails', async () => {
    let now = Date.now();
    const start = now;
    const mock = createPushApiMock({ tokenTtlSeconds: 100, now: () => now });
    const store = new MemoryTokenStore({ now: () => now });
    const first = await setup(mock, { now: () => now, tokenStore: store }).tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: Infinity });
    now = start + 95_000;
    const logger = recordingLogger();
    const { tokens } = setup(mock, { now: () => now, tokenStore: store, logger });
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    expect(logger.lines.some((line) => line.level === 'warn' && line.message.includes('refresh failed'))).toBe(true);
    expect(JSON.stringify(logger.lines)).not.toContain(first.accessToken);
    now = start + 100_000;
    await expect(tokens.getToken()).rejects.toBeInstanceOf(TokenError);
  });

  it('does not hand out a token the service refused while the failed refresh was on its way', async () => {
    const { mock, tokens, at } = setupDown();
    const first = await tokens.getToken();
    mock.faults.add({ match: { operation: 'token' }, status: 503, delayMs: 100, times: Infinity });
    at(95_000);
    const refreshing = tokens.getToken();
    tokens.invalidate(first.accessToken);
    await expect(refreshing).rejects.toBeInstanceOf(TokenError);
  });

  it('publishes through a token endpoint that is down while the current token is valid', async () => {
    const mock = createPushApiMock({ tokenTtlSeconds: 2 });
    // Half the lifetime at most: refreshed from 1 s on, taken by the service until 2 s.
    const client = clientFor(mock, { refreshMarginMs: 60_000, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
    await client.finance.publishBatch(mock.appId, [financeRecord(0)]);
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: Infinity });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const report = await client.finance.publish(mock.appId, [financeRecord(1), financeRecord(2)]);
    expect(report.recordsSent).toBe(2);
    await expect(client.finance.publishBatch(mock.appId, [financeRecord(3)])).resolves.toEqual({ success: true });
    expect(mock.state.recordCount(mock.appId)).toBe(4);
    expect(mock.state.tokenRequestCount).toBe(1);
  });
});

describe('a token store that never answers', () => {
  // Redis unreachable: ioredis queues commands until it reconnects, so get and set never settle.
  const hanging = () => ({
    calls: [] as string[],
    get(key: string) {
      this.calls.push(`get ${key.slice(0, 10)}`);
      return new Promise<undefined>(() => {});
    },
    set() {
      this.calls.push('set');
      return new Promise<void>(() => {});
    },
  });

  it('holds getToken for the call timeout at most, then fetches and hands out a token, with a warning for each call', async () => {
    const store = hanging();
    const logger = recordingLogger();
    const { mock, tokens } = setup(createPushApiMock(), { tokenStore: store, logger });
    const started = performance.now();
    const token = await tokens.getToken({ timeoutMs: 100 });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(mock.state.tokens.map((t) => t.token)).toEqual([token.accessToken]);
    expect(store.calls).toEqual(['get push-api-c', 'set']);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    expect(warnings.map((line) => line.message)).toEqual([
      'push-api-client tokenStore.get failed; fetching a new token',
      'push-api-client tokenStore.set failed; using the token anyway',
    ]);
    expect(warnings[0]?.fields).toEqual({ error: 'Error: no answer within 100 ms' });
    // The token came back without the store: the next call takes it from the cache.
    expect((await tokens.getToken()).accessToken).toBe(token.accessToken);
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it("bounds the store by the client's timeoutMs, so that concurrent requests of a client all go through", async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock, { tokenStore: hanging(), timeoutMs: 150 });
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => client.finance.publishBatch(mock.appId, [financeRecord(i)])),
    );
    expect(results.every((result) => result.success)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(mock.state.recordCount(mock.appId)).toBe(5);
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it('a caller that gives up is not held by the store', async () => {
    const { mock, tokens } = setup(createPushApiMock(), { tokenStore: hanging() });
    const started = performance.now();
    await expect(tokens.getToken({ signal: AbortSignal.timeout(50) })).rejects.toBeInstanceOf(AbortError);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(mock.state.tokenRequestCount).toBe(0);
  });

  it('a slow store that answers within the timeout is used', async () => {
    const mock = createPushApiMock();
    const inner = new MemoryTokenStore();
    const slow = {
      get: async (key: string) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return inner.get(key);
      },
      set: async (key: string, token: Parameters<MemoryTokenStore['set']>[1], expiresAt: Date) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        inner.set(key, token);
        expect(expiresAt.getTime()).toBe(token.expiresAt.getTime());
      },
    };
    const first = await setup(mock, { tokenStore: slow }).tokens.getToken({ timeoutMs: 1_000 });
    const second = await setup(mock, { tokenStore: slow }).tokens.getToken({ timeoutMs: 1_000 });
    expect(second.accessToken).toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(1);
  });
});

describe('forceRefresh', () => {
  it('does not join a plain refresh in flight, which answers from the store', async () => {
    const mock = createPushApiMock();
    const token = {
      accessToken: 'stored-token',
      tokenType: 'Bearer',
      expiresAt: new Date(Date.now() + 3_600_000),
      scopes: [`${mock.scopeBase}/connector.write`],
    };
    const slowStore = {
      get: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return token;
      },
      set: () => undefined,
    };
    const { tokens } = setup(mock, { tokenStore: slowStore });
    const plain = tokens.getToken();
    const forced = tokens.getToken({ forceRefresh: true });
    expect((await plain).accessToken).toBe('stored-token');
    expect((await forced).accessToken).not.toBe('stored-token');
    expect(mock.state.tokenRequestCount).toBe(1);
  });

  it('concurrent forced calls share one token request', async () => {
    const { mock, tokens } = setup();
    await tokens.getToken();
    const [a, b] = await Promise.all([
      tokens.getToken({ forceRefresh: true }),
      tokens.getToken({ forceRefresh: true }),
    ]);
    expect(a.accessToken).toBe(b.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);
  });
});
