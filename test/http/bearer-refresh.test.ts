import { setupServer } from 'msw/node';
import { AuthenticationError, ServerError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { noHooks } from '../../src/http/fetch.js';
import { FetchHttpClient } from '../../src/http/http-client.js';
import type { RequestSpec } from '../../src/http/types.js';
import { emulatorTokenManager } from '../support/clients.js';
import { recordingLogger } from '../support/recorders.js';
import { financeRecord } from '../support/records.js';

const mock = createPushApiMock();
const server = setupServer(...mock.handlers);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => mock.reset());
afterAll(() => server.close());

function wire(maxRetries = 2, retried: number[] = []) {
  const logger = recordingLogger();
  // No fetch option: msw must see globalThis.fetch.
  const http: FetchHttpClient = new FetchHttpClient({
    timeoutMs: 2_000,
    maxRetries,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'push-api-client/test node/test',
    logger,
    backoff: { initialDelayMs: 1, maxDelayMs: 5 },
    hooks: { ...noHooks, retry: (event) => retried.push(event.attempt) },
    tokens: () => tokens,
  });
  const tokens = emulatorTokenManager(http, mock);
  return { http, tokens, logger };
}

function finance(): RequestSpec {
  return {
    operation: 'finance',
    method: 'POST',
    url: new URL(`${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/finance`),
    headers: { 'content-type': 'application/json' },
    body: () => JSON.stringify({ records: [financeRecord()] }),
    auth: 'bearer',
    retryPolicy: 'non-idempotent',
  };
}

const financeRequests = () => mock.state.requests.filter((r) => r.operation === 'finance');
const tokenRequests = () => mock.state.requests.filter((r) => r.operation === 'token').length;

describe('bearer requests through msw', () => {
  it('adds the bearer token and the User-Agent', async () => {
    const { http } = wire();
    const response = await http.send(finance());
    expect(await response.json()).toEqual({ success: true });
    const [seen] = financeRequests();
    expect(seen?.headers.authorization).toMatch(/^Bearer/);
    expect(seen?.headers['user-agent']).toBe('push-api-client/test node/test');
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a 401 refreshes the token and re-sends once', async () => {
    const retried: number[] = [];
    const { http, tokens } = wire(0, retried);
    const first = await tokens.getToken();
    mock.revokeToken(first.accessToken);
    await http.send(finance());
    expect(financeRequests().map((r) => r.status)).toEqual([401, 200]);
    expect(tokenRequests()).toBe(2);
    // maxRetries is 0: the re-send did not use a retry.
    expect(retried).toEqual([]);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a second 401 in a row is an AuthenticationError, with no further refresh', async () => {
    const { http } = wire();
    mock.faults.add({ match: { operation: 'finance' }, status: 401, times: 3 });
    await expect(http.send(finance())).rejects.toBeInstanceOf(AuthenticationError);
    expect(financeRequests()).toHaveLength(2);
    expect(tokenRequests()).toBe(2);
  });

  it('concurrent requests rejected with the same revoked token cause one refresh', async () => {
    const { http, tokens } = wire();
    mock.revokeToken((await tokens.getToken()).accessToken);
    await Promise.all(Array.from({ length: 20 }, () => http.send(finance())));
    expect(tokenRequests()).toBe(2);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
  });

  it('an ambiguous 502 on finance is not re-sent', async () => {
    const { http } = wire();
    mock.faults.add({ match: { operation: 'finance' }, status: 502, times: 1 });
    await expect(http.send(finance())).rejects.toBeInstanceOf(ServerError);
    expect(financeRequests()).toHaveLength(1);
  });

  it('a 429 on finance is re-sent after Retry-After', async () => {
    const { http } = wire();
    mock.faults.add({ match: { operation: 'finance' }, status: 429, retryAfter: 0, times: 1 });
    await http.send(finance());
    expect(financeRequests().map((r) => r.status)).toEqual([429, 200]);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a dropped connection after processing is ambiguous and not re-sent', async () => {
    const { http } = wire();
    mock.faults.add({ match: { operation: 'finance' }, drop: 'after', times: 1 });
    const error = await http.send(finance()).catch((e: unknown) => e);
    expect((error as { requestMaybeSent?: boolean }).requestMaybeSent).toBe(true);
    expect(financeRequests()).toHaveLength(1);
    expect(mock.state.recordCount(mock.appId)).toBe(1);
  });

  it('a token failure is not retried again by the data request', async () => {
    const { http } = wire(1);
    mock.faults.add({ match: { operation: 'token' }, status: 500, times: 10 });
    await expect(http.send(finance())).rejects.toMatchObject({ name: 'TokenError' });
    // 1 + maxRetries token attempts, and no finance request at all.
    expect(tokenRequests()).toBe(2);
    expect(financeRequests()).toHaveLength(0);
  });
});
