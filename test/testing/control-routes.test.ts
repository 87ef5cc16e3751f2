import type { PushClient } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { json, type RawAnswer, send } from '../support/raw-http.js';
import { financeRecord } from '../support/records.js';

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ apps: ['app-a', 'app-b'] });
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => emulator.mock.reset());

function post(path: string, body: unknown, type = 'application/json') {
  return send(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The field a 400 names: its message reads `Bad Request: <field>: <why>`. */
function fieldOf(answer: RawAnswer): string | undefined {
  return /^Bad Request: ([\w.]+): /.exec(String(json(answer).message))?.[1];
}

function client(): PushClient {
  return clientFor(emulator, { maxRetries: 0 });
}

describe('POST /_emulator/faults', () => {
  it('adds the fault object faults.add takes and answers 201 with its id', async () => {
    const answer = await post('/_emulator/faults', {
      match: { operation: 'finance' },
      status: 429,
      retryAfter: 1,
      times: 2,
    });
    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/json');
    const { id } = json(answer);
    expect(typeof id).toBe('number');
    expect(emulator.mock.faults.list()).toEqual([
      { match: { operation: 'finance' }, status: 429, retryAfter: 1, times: 2 },
    ]);
    const second = json(await post('/_emulator/faults', { match: { operation: 'token' }, drop: 'before' }));
    expect(second.id).not.toBe(id);
  });

  it('holds at most 10,000 rules: past them a POST is a 409 and faults.add a RangeError, and nothing is added', async () => {
    const handles = Array.from({ length: 10_000 }, (_, i) =>
      emulator.mock.faults.add({ match: { pathIncludes: `/nowhere-${i}` }, status: 503 }),
    );
    const answer = await post('/_emulator/faults', { match: { operation: 'finance' }, status: 503 });
    expect(answer.status).toBe(409);
    expect(String(json(answer).message)).toContain('at most 10000 fault rules');
    expect(() => emulator.mock.faults.add({ status: 503 })).toThrow(RangeError);
    expect(emulator.mock.faults.list()).toHaveLength(10_000);
    handles[0]?.remove();
    expect((await post('/_emulator/faults', { match: { operation: 'finance' }, status: 503 })).status).toBe(201);
  });

  it('makes the next SDK call meet the fault', async () => {
    await post('/_emulator/faults', { match: { operation: 'finance' }, status: 503, times: 'Infinity' });
    const sdk = client();
    await expect(sdk.finance.publishBatch('app-a', [financeRecord()])).rejects.toMatchObject({ status: 503 });
    expect(emulator.mock.state.requests.at(-1)).toMatchObject({ operation: 'finance', status: 503, fault: 'status' });
  });

  it.each([
    [{ status: 99 }, 'status'],
    [{ status: '500' }, 'status'],
    [{ status: 500, drop: 'after' }, 'drop'],
    [{}, 'status'],
    [{ drop: 'sideways' }, 'drop'],
    [{ status: 500, times: 0 }, 'times'],
    [{ status: 500, times: 'forever' }, 'times'],
    [{ status: 500, probability: 2 }, 'probability'],
    [{ status: 500, match: { operation: 'uploads' } }, 'match.operation'],
    [{ status: 500, match: { host: 'x' } }, 'match.host'],
    [{ status: 500, random: 1 }, 'random'],
    [{ delayMs: -1 }, 'delayMs'],
    [{ status: 503, retryAfter: '1\r\nset-cookie: x=1' }, 'retryAfter'],
    [{ status: 503, match: { method: 'GET /' } }, 'match.method'],
    [[], 'body'],
    ['{"status":', 'body'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const answer = await post('/_emulator/faults', body);
    expect(answer.status).toBe(400);
    expect(json(answer)).toMatchObject({ code: '400', success: false });
    expect(fieldOf(answer)).toBe(field);
    expect(emulator.mock.faults.list()).toEqual([]);
  });

  it("names the operations a fault may match, for the SDK's spelling uploadUrls too", async () => {
    const answer = await post('/_emulator/faults', { status: 503, match: { operation: 'uploadUrls' } });
    expect(answer.status).toBe(400);
    expect(json(answer)).toMatchObject({
      message: 'Bad Request: match.operation: expected one of token, upload-urls, upload, finance, or a list of them',
    });
  });

  it('refuses a body that is not declared JSON (a cross-site form POST) with 415', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const answer = await post('/_emulator/faults', '{"status":500}', type);
      expect(answer.status).toBe(415);
      expect(json(answer)).toMatchObject({ code: '415', success: false });
    }
    expect(emulator.mock.faults.list()).toEqual([]);
  });

  it('refuses a body over the cap with 413', async () => {
    const answer = await post('/_emulator/faults', { status: 500, body: 'x'.repeat(20_000) });
    expect(answer.status).toBe(413);
    expect(emulator.mock.faults.list()).toEqual([]);
  });
});

describe('DELETE /_emulator/faults', () => {
  it('clears every fault and answers 200 JSON', async () => {
    emulator.mock.faults.add({ status: 500, times: Infinity });
    emulator.mock.faults.add({ drop: 'after' });
    const answer = await send(`${emulator.url}/_emulator/faults`, { method: 'DELETE' });
    expect(answer.status).toBe(200);
    expect(json(answer)).toEqual({ cleared: 2 });
    expect(emulator.mock.faults.list()).toEqual([]);
  });

  it('answers 405 JSON to another method', async () => {
    const answer = await send(`${emulator.url}/_emulator/faults`, { method: 'GET' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('POST, DELETE');
    expect(json(answer)).toMatchObject({ code: '405' });
  });
});

describe('POST /_emulator/reset', () => {
  it('clears records, files, tokens, the request log and faults; keeps apps, credentials and clock', async () => {
    const sdk = client();
    await sdk.finance.publishBatch('app-b', [financeRecord()]);
    await sdk.uploads.upload('app-b', [{ name: 'users.csv', data: 'id\n1\n' }]);
    emulator.mock.addApp('app-c');
    emulator.mock.advanceTime(60_000);
    emulator.mock.faults.add({ match: { operation: 'upload' }, status: 500, times: Infinity });
    const clockBefore = emulator.mock.now();

    const answer = await post('/_emulator/reset', {});
    expect(answer.status).toBe(200);
    expect(json(answer)).toMatchObject({ reset: true, apps: ['app-a', 'app-b', 'app-c'] });

    const { state } = emulator.mock;
    expect(state.recordCount('app-b')).toBe(0);
    expect(state.files('app-b')).toEqual([]);
    expect(state.tokens).toEqual([]);
    expect(state.requests).toEqual([]);
    expect(emulator.mock.faults.list()).toEqual([]);
    expect(state.apps).toEqual(['app-a', 'app-b', 'app-c']);
    expect(state.credentials.map((c) => c.clientId)).toEqual([emulator.mock.clientId]);
    expect(emulator.mock.now()).toBeGreaterThanOrEqual(clockBefore);
    expect(emulator.mock.now() - Date.now()).toBeGreaterThan(50_000);
    // The credential still works: a client can start over at once.
    await client().finance.publishBatch('app-c', [financeRecord()]);
    expect(state.recordCount('app-c')).toBe(1);
  });

  it('starts a fresh rate-limit window: the next scenario gets the whole limit, which stays set', async () => {
    emulator.mock.setRateLimit({ requests: 2, windowMs: 60_000 });
    const sdk = clientFor(emulator, { maxRetries: 0 });
    await sdk.finance.publishBatch('app-a', [financeRecord()]);
    await sdk.finance.publishBatch('app-a', [financeRecord()]);
    expect((await post('/_emulator/reset', {})).status).toBe(200);

    const next = clientFor(emulator, { maxRetries: 0 });
    await next.finance.publishBatch('app-a', [financeRecord()]);
    await next.finance.publishBatch('app-a', [financeRecord()]);
    await expect(next.finance.publishBatch('app-a', [financeRecord()])).rejects.toMatchObject({ status: 429 });
    expect(emulator.mock.state.requests.map((request) => request.status)).toEqual([200, 200, 200, 429]);
  });

  it('takes an empty body, and refuses fields it does not know or a form body', async () => {
    expect((await post('/_emulator/reset', '')).status).toBe(200);
    const unknown = await post('/_emulator/reset', { everything: true });
    expect(unknown.status).toBe(400);
    expect(fieldOf(unknown)).toBe('everything');
    expect((await post('/_emulator/reset', '', 'application/x-www-form-urlencoded')).status).toBe(415);
  });
});

describe('POST /_emulator/clock', () => {
  it('moves the clock by advanceMs, so a token expires without waiting', async () => {
    const sdk = client();
    const token = await sdk.tokens.getToken();
    const answer = await post('/_emulator/clock', { advanceMs: 2 * 3600 * 1000 });
    expect(answer.status).toBe(200);
    const { now } = json(answer);
    expect(now as number).toBeLessThanOrEqual(emulator.mock.now());
    expect((now as number) - Date.now()).toBeGreaterThan(2 * 3600 * 1000 - 5000);
    expect(emulator.mock.state.tokens.find((t) => t.token === token.accessToken)!.expiresAt).toBeLessThan(
      now as number,
    );
  });

  it.each([[{}], [{ advanceMs: -5 }], [{ advanceMs: '10' }], [{ advanceMs: 10, extra: 1 }]])(
    'answers 400 naming the field for %j',
    async (body) => {
      const before = emulator.mock.now();
      const answer = await post('/_emulator/clock', body);
      expect(answer.status).toBe(400);
      expect(['advanceMs', 'extra']).toContain(fieldOf(answer));
      expect(emulator.mock.now() - before).toBeLessThan(1000);
    },
  );
});

describe('the control routes are not service requests', () => {
  it('leaves them out of the request log', async () => {
    await post('/_emulator/clock', { advanceMs: 1 });
    await send(`${emulator.url}/_emulator/faults`, { method: 'DELETE' });
    expect(emulator.mock.state.requests).toEqual([]);
  });
});
