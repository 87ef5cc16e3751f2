import { inspect } from 'node:util';
import { ConfigurationError, TokenError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { FetchHttpClient } from '../../src/http/http-client.js';
import { clientFor, emulatorTokenManager } from '../support/clients.js';
import { capturingFetch, recordingLogger } from '../support/recorders.js';

type Mock = ReturnType<typeof createPushApiMock>;

/** A vault stand-in: hands out the given answers in turn (the last one from then on), counting calls. */
function vault(...answers: string[]) {
  const calls: number[] = [];
  const provider = async () => {
    calls.push(calls.length);
    return answers[Math.min(calls.length - 1, answers.length - 1)] ?? '';
  };
  return { provider, calls };
}

function rotate(mock: Mock, clientSecret: string): void {
  mock.addCredential({ clientId: mock.clientId, clientSecret, scopes: [`${mock.scopeBase}/connector.write`] });
}

const sentSecrets = (seen: { body?: string }[]) =>
  seen.map((request) => new URLSearchParams(request.body).get('client_secret'));

describe('clientSecret from a provider', () => {
  it('is called when a token is requested, not for a cached token', async () => {
    const mock = createPushApiMock();
    const { provider, calls } = vault(mock.clientSecret);
    const client = clientFor(mock, { clientSecret: provider });
    const first = await client.tokens.getToken();
    expect((await client.tokens.getToken()).accessToken).toBe(first.accessToken);
    expect(calls).toHaveLength(1);
    await client.tokens.getToken({ forceRefresh: true });
    expect(calls).toHaveLength(2);
  });

  it('after invalid_client, asks once more and picks up a rotated secret without a restart', async () => {
    const mock = createPushApiMock();
    const capture = capturingFetch(mock.fetch);
    // The vault still serves the old secret once after the rotation (a cache of its own), then the new one.
    const { provider, calls } = vault(mock.clientSecret, mock.clientSecret, 'rotated-secret-2');
    const client = clientFor(mock, { clientSecret: provider, fetch: capture.fetch });
    await client.tokens.getToken();
    rotate(mock, 'rotated-secret-2');

    const token = await client.tokens.getToken({ forceRefresh: true });
    expect(token.accessToken).toBe(mock.state.tokens.at(-1)?.token);
    expect(calls).toHaveLength(3);
    expect(sentSecrets(capture.seen)).toEqual([mock.clientSecret, mock.clientSecret, 'rotated-secret-2']);
    // And data requests go on with it.
    const report = await client.finance.publish(mock.appId, [
      { created: Date.UTC(2025, 0, 1), amount: 1, currency: 'USD', identifier: 'a', type: 'expense', vendor: 'V' },
    ]);
    expect(report.recordsSent).toBe(1);
  });

  it('asks only once more: a secret still refused fails with invalid_client after two token requests', async () => {
    const mock = createPushApiMock();
    rotate(mock, 'nobody-knows-this');
    const { provider, calls } = vault('stale-secret-1', 'stale-secret-2');
    const client = clientFor(mock, { clientSecret: provider });
    const error = await client.tokens.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).error).toBe('invalid_client');
    expect(calls).toHaveLength(2);
    expect(mock.state.requests.filter((r) => r.operation === 'token')).toHaveLength(2);
  });

  it('a string secret refused with invalid_client is not sent again', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock, { clientSecret: 'wrong-secret' });
    await expect(client.tokens.getToken()).rejects.toBeInstanceOf(TokenError);
    expect(mock.state.requests.filter((r) => r.operation === 'token')).toHaveLength(1);
  });

  it('scrubs the secret it returned from an error body that echoes it, and never shows it', async () => {
    const mock = createPushApiMock();
    const secret = 'vault-secret-7f3a';
    rotate(mock, secret);
    mock.faults.add({
      match: { operation: 'token' },
      status: 400,
      body: { error: 'invalid_request', error_description: `could not parse client_secret=${secret}` },
    });
    const client = clientFor(mock, { clientSecret: async () => secret });
    const error = await client.tokens.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    const shown = `${String(error)} ${inspect(error, { depth: 5 })} ${JSON.stringify(error)}`;
    expect(shown).not.toContain(secret);
    expect(shown).toContain('[redacted]');
    expect(`${inspect(client, { depth: 5 })} ${JSON.stringify(client)}`).not.toContain(secret);
  });

  it('a provider that throws or returns no string fails with ConfigurationError, and nothing is sent', async () => {
    const mock = createPushApiMock();
    const failing = clientFor(mock, {
      clientSecret: async () => {
        throw new Error('vault sealed');
      },
    });
    await expect(failing.tokens.getToken()).rejects.toBeInstanceOf(ConfigurationError);
    const empty = clientFor(mock, { clientSecret: async () => '' });
    await expect(empty.tokens.getToken()).rejects.toThrow(/non-empty string/);
    expect(mock.state.requests).toHaveLength(0);
  });
});

describe('refreshMarginMs', () => {
  it('refreshes a 100 s token 30 s before expiry when set to 30000, and caps the margin at half the lifetime', async () => {
    let now = Date.now();
    const start = now;
    const mock = createPushApiMock({ tokenTtlSeconds: 100, now: () => now });
    const http = new FetchHttpClient({
      fetch: mock.fetch,
      timeoutMs: 2_000,
      maxRetries: 0,
      retryAmbiguous: false,
      allowInsecureHttp: false,
      userAgent: 'test',
      logger: recordingLogger(),
    });
    const tokens = emulatorTokenManager(http, mock, { now: () => now, refreshMarginMs: 30_000 });
    const first = await tokens.getToken();
    now = start + 69_999;
    expect((await tokens.getToken()).accessToken).toBe(first.accessToken);
    now = start + 70_000;
    const second = await tokens.getToken();
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(mock.state.tokenRequestCount).toBe(2);

    // A margin longer than the lifetime would refresh on every call; half the lifetime is used.
    const eager = emulatorTokenManager(http, mock, { now: () => now, refreshMarginMs: 500_000 });
    const third = await eager.getToken();
    now += 49_999;
    expect((await eager.getToken()).accessToken).toBe(third.accessToken);
    now += 1;
    expect((await eager.getToken()).accessToken).not.toBe(third.accessToken);
  });

  it('is validated: a negative margin is a ConfigurationError naming the option', () => {
    const mock = createPushApiMock();
    expect(() => clientFor(mock, { refreshMarginMs: -1 })).toThrow(/refreshMarginMs/);
  });
});
