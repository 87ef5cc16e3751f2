import type { PushClientHooks, PushClientOptions } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { recordingLogger } from '../support/recorders.js';
import { SAMPLE_RECORD } from '../support/records.js';

const record = SAMPLE_RECORD;

type Seen = { hook: keyof PushClientHooks; event: Record<string, unknown> };

/** A client on an in-process emulator whose hooks record every event, in order. */
function setup(options: PushClientOptions = {}) {
  const emulator = createPushApiHandler();
  const seen: Seen[] = [];
  const keep = (hook: keyof PushClientHooks) => (event: object) =>
    void seen.push({ hook, event: event as Record<string, unknown> });
  const client = clientFor(
    {
      fetch: emulator.fetch,
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    {
      hooks: {
        request: keep('request'),
        response: keep('response'),
        retry: keep('retry'),
        tokenRefresh: keep('tokenRefresh'),
      },
      ...options,
    },
  );
  return { emulator, client, seen };
}

describe('hooks', () => {
  it('tell each attempt, the retry between them and the token refresh, with the ids the server answered', async () => {
    const { emulator, client, seen } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });
    await client.finance.publish('demo-app', [record]);

    const answered = emulator.state.requests;
    const finance = 'https://api.push.test/services/push/v1/customer/apps/demo-app/finance';
    expect(seen.map(({ hook, event }) => [hook, event.operation, event.attempt, event.status])).toEqual([
      ['request', 'token', 1, undefined],
      ['response', 'token', 1, 200],
      ['tokenRefresh', 'token', undefined, undefined],
      ['request', 'finance', 1, undefined],
      ['response', 'finance', 1, 503],
      ['retry', 'finance', 1, 503],
      ['request', 'finance', 2, undefined],
      ['response', 'finance', 2, 200],
    ]);
    const [tokenCall, financeCall] = [seen[0]?.event.callId, seen[3]?.event.callId];
    expect(tokenCall).not.toBe(financeCall);
    expect(seen.slice(3).every(({ event }) => event.callId === financeCall)).toBe(true);
    expect(seen[4]?.event).toEqual({
      callId: financeCall,
      operation: 'finance',
      method: 'POST',
      url: finance,
      attempt: 1,
      status: 503,
      durationMs: expect.any(Number),
      requestId: answered[1]?.id,
      error: 'ServerError',
    });
    expect(seen[5]?.event).toMatchObject({ requestId: answered[1]?.id, error: 'ServerError', delayMs: 0 });
    expect(seen[7]?.event).toMatchObject({ requestId: answered[2]?.id, error: undefined });
    expect(seen[2]?.event).toEqual({
      operation: 'token',
      reason: 'initial',
      scopes: ['https://api.push.test/connector.write'],
      durationMs: expect.any(Number),
      expiresAt: expect.any(Date),
      error: undefined,
    });
  });

  it('never carry a header value, a body, a token, the secret or a signed query', async () => {
    const { emulator, client, seen } = setup();
    await client.uploads.upload('demo-app', [{ name: 'users.csv', data: 'email\nsecret-cell@example.com\n' }]);
    await client.finance.publish('demo-app', [record]);
    const token = emulator.state.tokens[0]?.token;
    expect(token).toBeTruthy();
    const text = JSON.stringify(seen);
    for (const secret of [token, 'demo-secret-do-not-use-in-production', 'secret-cell', 'ada@example.com', 'Bearer']) {
      expect(text).not.toContain(secret);
    }
    const upload = seen.find(({ event }) => event.operation === 'upload');
    expect(upload?.event.url).toMatch(/^https:\/\/uploads\.push\.test\/[^?]+$/);
    const allowed = new Set([
      'callId',
      'operation',
      'method',
      'url',
      'attempt',
      'status',
      'durationMs',
      'requestId',
      'error',
      'delayMs',
      'reason',
      'scopes',
      'expiresAt',
    ]);
    for (const { event } of seen) for (const key of Object.keys(event)) expect(allowed).toContain(key);
  });

  it('report a refresh after a refused token as rejected, and a forced one as forced', async () => {
    const { emulator, client, seen } = setup();
    await client.finance.publish('demo-app', [record]);
    emulator.revokeAllTokens();
    await client.finance.publish('demo-app', [record]);
    await client.tokens.getToken({ forceRefresh: true });
    const refreshes = seen.filter(({ hook }) => hook === 'tokenRefresh').map(({ event }) => event.reason);
    expect(refreshes).toEqual(['initial', 'rejected', 'forced']);
    // The refused attempt and its re-send with the new token share the attempt number.
    const second = seen.filter(({ hook, event }) => hook === 'response' && event.operation === 'finance').slice(1);
    expect(second.map(({ event }) => [event.attempt, event.status])).toEqual([
      [1, 401],
      [1, 200],
    ]);
  });

  it('a hook that throws is logged as a warning and never fails the request', async () => {
    const logger = recordingLogger();
    const { client } = setup({
      logger,
      hooks: {
        response: () => {
          throw new Error('metrics backend down');
        },
      },
    });
    const report = await client.finance.publish('demo-app', [record]);
    expect(report.recordsSent).toBe(1);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    expect(warnings.length).toBe(2);
    expect(warnings[0]).toMatchObject({
      message: 'push-api-client response hook threw; ignored',
      fields: { error: 'metrics backend down' },
    });
  });

  it('an async hook that rejects is logged as a warning, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const logger = recordingLogger();
      const { client } = setup({
        logger,
        hooks: {
          request: async () => {
            throw new Error('exporter unreachable');
          },
        },
      });
      const report = await client.finance.publish('demo-app', [record]);
      expect(report.recordsSent).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 20)); // unhandled rejections are told after a turn
      expect(unhandled).toEqual([]);
      const warnings = logger.lines.filter((line) => line.level === 'warn');
      expect(warnings.map((line) => line.fields)).toEqual([
        { error: 'exporter unreachable' }, // token request
        { error: 'exporter unreachable' }, // finance batch
      ]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('give each hook an event of its own: what one hook writes, no later event shows', async () => {
    const responses: Record<string, unknown>[] = [];
    const { client } = setup({
      hooks: {
        request: (event) => {
          Object.assign(event, { url: 'rewritten', attempt: 42, operation: 'rewritten' });
        },
        response: (event) => void responses.push({ ...event }),
      },
    });
    await client.finance.publish('demo-app', [record]);
    expect(responses.map(({ operation, attempt, url }) => [operation, attempt, url])).toEqual([
      ['token', 1, 'https://auth.push.test/oauth2/token'],
      ['finance', 1, 'https://api.push.test/services/push/v1/customer/apps/demo-app/finance'],
    ]);
  });
});
