import { createPushApiHandler, seededRandom } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { financeRequest, getToken, signedUrls, specError, tokenRequest } from '../support/emulator-requests.js';
import { financeRecord } from '../support/records.js';

async function setup(options: Parameters<typeof createPushApiHandler>[0] = {}) {
  const emulator = createPushApiHandler(options);
  const token = await getToken(emulator);
  const publish = (identifier = 'r') =>
    emulator.handle(financeRequest(emulator, token, { records: [financeRecord(0, { identifier })] }));
  return { emulator, token, publish };
}

describe('fault injection', () => {
  it('answers the next matching request with the chosen status and Retry-After, then behaves again', async () => {
    const { emulator, publish } = await setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 2 });
    const faulted = await publish('a');
    expect(faulted.status).toBe(503);
    expect(faulted.headers.get('retry-after')).toBe('2');
    expect(await specError(faulted)).toMatchObject({ code: '503' });
    expect((await publish('b')).status).toBe(200);
    expect(emulator.state.records().map((record) => record.identifier)).toEqual(['b']);
  });

  it('applies a fault `times` times only to matching requests', async () => {
    const { emulator, token, publish } = await setup();
    const handle = emulator.faults.add({ match: { operation: 'finance', method: 'post' }, status: 500, times: 2 });
    await signedUrls(emulator, token, ['a']);
    expect((await publish()).status).toBe(500);
    expect((await publish()).status).toBe(500);
    expect((await publish()).status).toBe(200);
    expect(handle.hits).toBe(2);
    expect(emulator.faults.injected).toBe(2);
  });

  it('matches by path substring and answers a storage fault in XML', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    emulator.faults.add({ match: { pathIncludes: '/a.csv' }, status: 500 });
    const response = await emulator.handle(new Request(urls['a.csv']!, { method: 'PUT', body: 'x' }));
    expect(response.status).toBe(500);
    expect(await response.text()).toContain('<Code>InternalError</Code>');
  });

  it('answers a token fault in the OAuth error shape, or with a custom body', async () => {
    const { emulator } = await setup();
    emulator.faults.add({ match: { operation: 'token' }, status: 503 });
    emulator.faults.add({ match: { operation: 'token' }, status: 200, body: { token_type: 'Bearer' } });
    const params = {
      grant_type: 'client_credentials',
      client_id: emulator.clientId,
      client_secret: emulator.clientSecret,
      scope: 'https://api.push.test/connector.write',
    };
    const first = await emulator.handle(tokenRequest(emulator, params));
    expect(await first.json()).toMatchObject({ error: 'temporarily_unavailable' });
    const second = await emulator.handle(tokenRequest(emulator, params));
    expect(await second.json()).toEqual({ token_type: 'Bearer' });
  });

  it('drops the connection before processing: nothing is stored', async () => {
    const { emulator, publish } = await setup();
    emulator.faults.add({ match: { operation: 'finance' }, drop: 'before' });
    const response = await publish('lost');
    expect(response.type).toBe('error');
    expect(emulator.state.recordCount()).toBe(0);
    expect(emulator.state.requests.at(-1)).toMatchObject({ status: 0, fault: 'drop-before' });
  });

  it('drops the connection after processing: the records are stored', async () => {
    const { emulator, publish } = await setup();
    emulator.faults.add({ match: { operation: 'finance' }, drop: 'after' });
    const response = await publish('kept');
    expect(response.type).toBe('error');
    expect(emulator.state.records().map((record) => record.identifier)).toEqual(['kept']);
    expect(emulator.state.requests.at(-1)).toMatchObject({ status: 0, fault: 'drop-after' });
  });

  it('delays the answer by delayMs', async () => {
    const { emulator, publish } = await setup();
    emulator.faults.add({ match: { operation: 'finance' }, delayMs: 80 });
    const started = performance.now();
    expect((await publish()).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });

  it('fires with the given probability, reproducibly with a seeded random', async () => {
    const run = async () => {
      const { emulator, publish } = await setup();
      emulator.faults.add({ match: { operation: 'finance' }, status: 429, probability: 0.3, random: seededRandom(42) });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) statuses.push((await publish()).status);
      return statuses;
    };
    const first = await run();
    const faulted = first.filter((status) => status === 429).length;
    expect(faulted).toBeGreaterThan(35);
    expect(faulted).toBeLessThan(85);
    expect(await run()).toEqual(first);
  });

  it('mock.fetch rejects like fetch when the connection is dropped', async () => {
    const { emulator, token } = await setup();
    emulator.faults.add({ drop: 'before' });
    await expect(emulator.fetch(financeRequest(emulator, token, { records: [] }))).rejects.toThrow(TypeError);
  });

  it("mock.fetch rejects with the signal's reason when the caller aborts, as fetch does", async () => {
    const { emulator, token } = await setup();
    const operations = ['finance', 'upload-urls'] as const; // a readonly list is a valid match
    emulator.faults.add({ match: { operation: operations }, delayMs: 2_000, times: Number.POSITIVE_INFINITY });
    const controller = new AbortController();
    const answer = emulator.fetch(financeRequest(emulator, token, { records: [financeRecord()] }), {
      signal: controller.signal,
    });
    controller.abort(new Error('caller gave up'));
    await expect(answer).rejects.toThrow('caller gave up');
    const timedOut = emulator.fetch(financeRequest(emulator, token, { records: [financeRecord()] }), {
      signal: AbortSignal.timeout(20),
    });
    await expect(timedOut).rejects.toMatchObject({ name: 'TimeoutError' });
    const already = new AbortController();
    already.abort();
    await expect(
      emulator.fetch(financeRequest(emulator, token, { records: [financeRecord()] }), { signal: already.signal }),
    ).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('refuses meaningless rules', () => {
    const { faults } = createPushApiHandler();
    expect(() => faults.add({})).toThrow(TypeError);
    expect(() => faults.add({ status: 503, probability: 2 })).toThrow(RangeError);
    expect(() => faults.add({ status: 503, drop: 'before' })).toThrow(TypeError);
  });

  it('refuses, when it is added, a rule whose answer no Response can carry, so handle() never throws', async () => {
    const emulator = createPushApiHandler();
    const { faults } = emulator;
    expect(() => faults.add({ status: 503, retryAfter: '1\r\nset-cookie: x=1' })).toThrow(/retryAfter/);
    expect(() => faults.add({ status: 503, retryAfter: 'in 5 s \u2192' })).toThrow(/retryAfter/);
    expect(() => faults.add({ status: 429, retryAfter: -1 })).toThrow(/retryAfter/);
    expect(() => faults.add({ status: 429, retryAfter: Number.NaN })).toThrow(/retryAfter/);
    expect(() => faults.add({ status: 503, body: { size: 1n } })).toThrow(/body/);
    expect(faults.list()).toEqual([]);
    const answer = await emulator.handle(new Request(`${emulator.authUrl}/oauth2/token`, { method: 'POST' }));
    expect(answer.status).toBe(400);
    // What the HTTP control route takes is taken here too.
    faults.add({ status: 429, retryAfter: 0 });
    faults.add({ status: 503, retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT', body: { nested: { ok: [1, 'two'] } } });
    expect(faults.list()).toHaveLength(2);
  });

  it('removes a rule by its handle, and clear() removes all', async () => {
    const { emulator, publish } = await setup();
    const handle = emulator.faults.add({ status: 500, times: Infinity });
    handle.remove();
    expect((await publish()).status).toBe(200);
    emulator.faults.add({ status: 500, times: Infinity });
    emulator.faults.clear();
    expect((await publish()).status).toBe(200);
  });
});

describe('controls', () => {
  it('setTokenTtl changes the lifetime of tokens issued afterwards', async () => {
    const emulator = createPushApiHandler();
    emulator.setTokenTtl(5);
    const params = {
      grant_type: 'client_credentials',
      client_id: emulator.clientId,
      client_secret: emulator.clientSecret,
      scope: 'https://api.push.test/connector.write',
    };
    const body = await (await emulator.handle(tokenRequest(emulator, params))).json();
    expect(body.expires_in).toBe(5);
    expect(emulator.state.tokens[0]!.expiresAt - emulator.state.tokens[0]!.issuedAt).toBe(5000);
  });

  it('uses the injected clock', async () => {
    let now = 1_000_000;
    const emulator = createPushApiHandler({ now: () => now });
    await getToken(emulator);
    expect(emulator.state.tokens[0]!.issuedAt).toBe(1_000_000);
    now += 500;
    emulator.advanceTime(250);
    expect(emulator.now()).toBe(1_000_750);
  });

  it('addApp and addCredential take effect at once', async () => {
    const emulator = createPushApiHandler();
    emulator.addApp('second');
    emulator.addCredential({ clientId: 'c2', clientSecret: 's2', scopes: ['https://api.push.test/connector.write'] });
    const params = {
      grant_type: 'client_credentials',
      client_id: 'c2',
      client_secret: 's2',
      scope: 'https://api.push.test/connector.write',
    };
    const { access_token: token } = await (await emulator.handle(tokenRequest(emulator, params))).json();
    const response = await emulator.handle(
      financeRequest(emulator, token, { records: [financeRecord()] }, { appId: 'second' }),
    );
    expect(response.status).toBe(200);
    expect(emulator.state.apps).toEqual(['demo-app', 'second']);
    expect(emulator.state.credentials.map((credential) => credential.clientId)).toEqual(['demo-client', 'c2']);
  });

  it('reset() forgets records, tokens, requests, faults and extra apps', async () => {
    const { emulator, token, publish } = await setup();
    await publish();
    emulator.addApp('extra');
    emulator.faults.add({ status: 500, times: 5 });
    emulator.advanceTime(10_000);
    emulator.reset();
    expect(emulator.state.recordCount()).toBe(0);
    expect(emulator.state.tokens).toEqual([]);
    expect(emulator.state.requests).toEqual([]);
    expect(emulator.state.tokenRequestCount).toBe(0);
    expect(emulator.state.apps).toEqual(['demo-app']);
    expect(emulator.faults.list()).toEqual([]);
    expect((await emulator.handle(financeRequest(emulator, token, { records: [] }))).status).toBe(401);
  });

  it('keeps the request log bounded by maxRequestLog', async () => {
    const emulator = createPushApiHandler({ maxRequestLog: 10 });
    for (let i = 0; i < 50; i++) await emulator.handle(new Request(`${emulator.baseUrl}/x${i}`));
    expect(emulator.state.requests.length).toBeLessThanOrEqual(11);
    expect(emulator.state.requests.at(-1)?.path).toBe('/x49');
  });

  it('shows exactly the newest maxRequestLog entries, also between two trims of the log', async () => {
    const emulator = createPushApiHandler({ maxRequestLog: 10 });
    for (let i = 0; i < 11; i++) await emulator.handle(new Request(`${emulator.baseUrl}/x${i}`));
    expect(emulator.state.requests.map((entry) => entry.path)).toEqual(
      Array.from({ length: 10 }, (_, i) => `/x${i + 1}`),
    );
  });
});
