import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { dataUrl, financeRequest, getToken, specError, uploadUrlsRequest } from '../support/emulator-requests.js';
import { financeRecord } from '../support/records.js';

const write = 'https://api.push.test/connector.write';
const read = 'https://api.push.test/report.read';

describe('access checks on the data operations', () => {
  it('answers 401 with a Bearer challenge when the token is missing', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(financeRequest(emulator, undefined, { records: [financeRecord()] }));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await specError(response)).toMatchObject({ code: '401' });
  });

  it('answers 401 to an unknown token', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(uploadUrlsRequest(emulator, 'not-a-token', '?filenames=a'));
    expect(response.status).toBe(401);
    expect((await specError(response)).message).toMatch(/unknown/);
  });

  it('answers 401 once the token has expired on the emulator clock', async () => {
    const emulator = createPushApiHandler({ tokenTtlSeconds: 60, now: () => 1_700_000_000_000 });
    const token = await getToken(emulator);
    emulator.advanceTime(59_999);
    expect((await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'))).status).toBe(200);
    emulator.advanceTime(1);
    const response = await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'));
    expect(response.status).toBe(401);
    expect((await specError(response)).message).toMatch(/expired/);
  });

  it('answers 401 to a revoked token, and revokeAllTokens revokes every token', async () => {
    const emulator = createPushApiHandler();
    const first = await getToken(emulator);
    const second = await getToken(emulator);
    const third = await getToken(emulator);
    expect(emulator.revokeToken(first)).toBe(true);
    expect(emulator.revokeToken('never-issued')).toBe(false);
    expect((await emulator.handle(uploadUrlsRequest(emulator, first, '?filenames=a'))).status).toBe(401);
    expect((await emulator.handle(uploadUrlsRequest(emulator, second, '?filenames=a'))).status).toBe(200);
    expect(emulator.revokeAllTokens()).toBe(2);
    expect((await emulator.handle(uploadUrlsRequest(emulator, third, '?filenames=a'))).status).toBe(401);
    expect(emulator.state.tokens.every((token) => token.revoked)).toBe(true);
  });

  it('answers 403 when the token lacks connector.write', async () => {
    const emulator = createPushApiHandler();
    const token = await getToken(emulator, read);
    const response = await emulator.handle(financeRequest(emulator, token, { records: [financeRecord()] }));
    expect(response.status).toBe(403);
    expect((await specError(response)).message).toContain(write);
    const urls = await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'));
    expect(urls.status).toBe(403);
  });

  it('answers 404 for an unknown app, but only after the token is checked', async () => {
    const emulator = createPushApiHandler();
    const token = await getToken(emulator);
    const unknown = await emulator.handle(financeRequest(emulator, token, { records: [] }, { appId: 'nope' }));
    expect(unknown.status).toBe(404);
    expect(await specError(unknown)).toMatchObject({ code: '404' });
    const anonymous = await emulator.handle(financeRequest(emulator, undefined, { records: [] }, { appId: 'nope' }));
    expect(anonymous.status).toBe(401);
  });

  it('checks scope before app existence and query parameters', async () => {
    const emulator = createPushApiHandler();
    const token = await getToken(emulator, read);
    const response = await emulator.handle(uploadUrlsRequest(emulator, token, '?bogus=1', 'nope'));
    expect(response.status).toBe(403);
  });

  it('answers 404 in the spec shape for unknown paths', async () => {
    const emulator = createPushApiHandler();
    for (const url of [
      `${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/other`,
      `${emulator.baseUrl}/services/push/v2/customer/apps/demo-app/finance`,
      `${emulator.baseUrl}/`,
      `${emulator.authUrl}/token`,
      'https://elsewhere.test/x',
    ]) {
      const response = await emulator.handle(new Request(url));
      expect(response.status).toBe(404);
      await specError(response);
    }
  });

  it('answers 405 with Allow for a wrong method on a data path', async () => {
    const emulator = createPushApiHandler();
    const put = await emulator.handle(new Request(dataUrl(emulator, 'finance'), { method: 'PUT', body: '{}' }));
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('POST');
    await specError(put);
    const post = await emulator.handle(new Request(dataUrl(emulator, 'upload'), { method: 'POST' }));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });

  it('decodes the app id from the path, so ids needing URL encoding work', async () => {
    const emulator = createPushApiHandler({ apps: ['team a/ü?#'] });
    const token = await getToken(emulator);
    const response = await emulator.handle(
      financeRequest(emulator, token, { records: [financeRecord()] }, { appId: 'team a/ü?#' }),
    );
    expect(response.status).toBe(200);
    expect(emulator.state.recordCount('team a/ü?#')).toBe(1);
  });

  it('adds a distinct x-request-id to every response and logs it', async () => {
    const emulator = createPushApiHandler();
    const ok = await emulator.handle(new Request(`${emulator.baseUrl}/nowhere`));
    const again = await emulator.handle(financeRequest(emulator, undefined, {}));
    const ids = [ok.headers.get('x-request-id'), again.headers.get('x-request-id')];
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).not.toBe(ids[0]);
    expect(emulator.state.requests.map((entry) => entry.id)).toEqual(ids);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once the window is used up, and lets requests through in the next window', async () => {
    const emulator = createPushApiHandler({
      rateLimit: { requests: 2, windowMs: 10_000 },
      now: () => 1_700_000_000_000,
    });
    const token = await getToken(emulator);
    const send = () => emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'));
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    emulator.advanceTime(4_000);
    const limited = await send();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('6');
    expect(await specError(limited)).toMatchObject({ code: '429' });
    emulator.advanceTime(6_000);
    expect((await send()).status).toBe(200);
  });

  it('does not count token requests or unauthenticated requests', async () => {
    const emulator = createPushApiHandler({ rateLimit: { requests: 1, windowMs: 1000 } });
    await getToken(emulator);
    await emulator.handle(uploadUrlsRequest(emulator, undefined, '?filenames=a'));
    const token = await getToken(emulator);
    expect((await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'))).status).toBe(200);
  });

  it('can be set and removed at run time', async () => {
    const emulator = createPushApiHandler();
    const token = await getToken(emulator);
    emulator.setRateLimit({ requests: 0, windowMs: 1000 });
    expect((await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'))).status).toBe(429);
    emulator.setRateLimit(undefined);
    expect((await emulator.handle(uploadUrlsRequest(emulator, token, '?filenames=a'))).status).toBe(200);
  });
});
