import { createPushApiHandler, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, SCOPE_NAMES } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { FORM, tokenRequest } from '../support/emulator-requests.js';

const base = { grant_type: 'client_credentials', client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET };
const scopeBase = 'https://api.push.test';
const write = `${scopeBase}/connector.write`;

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
}

describe('token endpoint', () => {
  it('issues a bearer token with the configured lifetime and the requested scope', async () => {
    const emulator = createPushApiHandler({ tokenTtlSeconds: 120 });
    const response = await emulator.handle(tokenRequest(emulator, { ...base, scope: write }));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await response.json();
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 120, scope: write });
    expect(body.access_token.length).toBeGreaterThanOrEqual(40);
    expect(emulator.state.tokens).toMatchObject([
      { token: body.access_token, clientId: DEMO_CLIENT_ID, scopes: [write] },
    ]);
  });

  it('issues a different, unguessable token every time', async () => {
    const emulator = createPushApiHandler();
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const body = await (await emulator.handle(tokenRequest(emulator, { ...base, scope: write }))).json();
      tokens.add(body.access_token);
    }
    expect(tokens.size).toBe(20);
  });

  it('answers 400 invalid_scope to a request without scope, which the spec requires', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(tokenRequest(emulator, base));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_scope', error_description: 'scope is required' });
    expect(emulator.state.tokens).toEqual([]);
  });

  it('grants every scope of the credential when scope is omitted, with lenientScope', async () => {
    const emulator = createPushApiHandler({ lenientScope: true });
    const body = await (await emulator.handle(tokenRequest(emulator, base))).json();
    expect(body.scope.split(' ')).toEqual(SCOPE_NAMES.map((name) => `${scopeBase}/${name}`));
  });

  it('accepts several space-separated scopes', async () => {
    const emulator = createPushApiHandler();
    const scope = `${write} ${scopeBase}/report.read`;
    const body = await (await emulator.handle(tokenRequest(emulator, { ...base, scope }))).json();
    expect(body.scope).toBe(scope);
  });

  it('accepts HTTP Basic client authentication', async () => {
    const emulator = createPushApiHandler();
    const request = tokenRequest(
      emulator,
      { grant_type: 'client_credentials', scope: write },
      { authorization: basic(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) },
    );
    expect((await emulator.handle(request)).status).toBe(200);
  });

  it('refuses a request that uses both Basic and body credentials', async () => {
    const emulator = createPushApiHandler();
    const request = tokenRequest(emulator, base, { authorization: basic(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) });
    const response = await emulator.handle(request);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers invalid_client with 400 for a wrong secret in the body', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(tokenRequest(emulator, { ...base, client_secret: 'wrong' }));
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(await response.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('answers invalid_client with 401 and a Basic challenge when Basic credentials are wrong', async () => {
    const emulator = createPushApiHandler();
    const request = tokenRequest(
      emulator,
      { grant_type: 'client_credentials' },
      { authorization: basic('nobody', 'x') },
    );
    const response = await emulator.handle(request);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('answers invalid_client for an unknown client id', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(tokenRequest(emulator, { ...base, client_id: 'someone-else' }));
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('answers invalid_request when client_id is missing', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(tokenRequest(emulator, { grant_type: 'client_credentials' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers unsupported_grant_type for any grant but client_credentials', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(tokenRequest(emulator, { ...base, grant_type: 'password' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('answers invalid_request when grant_type is missing or repeated', async () => {
    const emulator = createPushApiHandler();
    const { grant_type: _, ...withoutGrant } = base;
    const missing = await emulator.handle(tokenRequest(emulator, withoutGrant));
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    const repeated = new Request(`${emulator.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: FORM,
      body: `${new URLSearchParams(base)}&grant_type=client_credentials`,
    });
    const response = await emulator.handle(repeated);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers invalid_scope for a scope the credential does not hold', async () => {
    const emulator = createPushApiHandler({
      credentials: [{ clientId: 'reader', clientSecret: 's', scopes: [`${scopeBase}/report.read`] }],
    });
    const response = await emulator.handle(
      tokenRequest(emulator, {
        grant_type: 'client_credentials',
        client_id: 'reader',
        client_secret: 's',
        scope: write,
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
  });

  it('answers invalid_scope for an unknown or empty scope', async () => {
    const emulator = createPushApiHandler();
    for (const scope of ['made-up', ' ']) {
      const response = await emulator.handle(tokenRequest(emulator, { ...base, scope }));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
    }
  });

  it('accepts only form-encoded bodies', async () => {
    const emulator = createPushApiHandler();
    const request = new Request(`${emulator.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(base),
    });
    const response = await emulator.handle(request);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('answers 405 to a GET on the token endpoint', async () => {
    const emulator = createPushApiHandler();
    const response = await emulator.handle(new Request(`${emulator.authUrl}/oauth2/token`));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers 413 to a token request body over maxBodyBytes', async () => {
    const emulator = createPushApiHandler({ maxBodyBytes: 100 });
    const response = await emulator.handle(tokenRequest(emulator, { ...base, padding: 'x'.repeat(200) }));
    expect(response.status).toBe(413);
  });

  it('counts token requests, failed ones included', async () => {
    const emulator = createPushApiHandler();
    await emulator.handle(tokenRequest(emulator, base));
    await emulator.handle(tokenRequest(emulator, { ...base, client_secret: 'bad' }));
    expect(emulator.state.tokenRequestCount).toBe(2);
  });

  it('never records the client secret in the request log', async () => {
    const emulator = createPushApiHandler();
    await emulator.handle(tokenRequest(emulator, base));
    await emulator.handle(
      tokenRequest(
        emulator,
        { grant_type: 'client_credentials' },
        { authorization: basic(DEMO_CLIENT_ID, DEMO_CLIENT_SECRET) },
      ),
    );
    const log = JSON.stringify(emulator.state.requests);
    expect(log).not.toContain(DEMO_CLIENT_SECRET);
    expect(log).not.toContain(Buffer.from(`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`).toString('base64'));
    expect(emulator.state.requests[1]?.headers.authorization).toBe('Basic [redacted]');
    expect(JSON.stringify(emulator.state.credentials)).not.toContain(DEMO_CLIENT_SECRET);
  });

  it('keeps out of the log a secret or a token a client put in the query string', async () => {
    const emulator = createPushApiHandler();
    const token = await (
      await emulator.handle(
        tokenRequest(emulator, {
          grant_type: 'client_credentials',
          client_id: DEMO_CLIENT_ID,
          client_secret: DEMO_CLIENT_SECRET,
          scope: `${emulator.scopeBase}/connector.write`,
        }),
      )
    ).json();
    const query = new URLSearchParams({ client_id: DEMO_CLIENT_ID, client_secret: DEMO_CLIENT_SECRET });
    await emulator.fetch(`${emulator.authUrl}/oauth2/token?${query}`, { method: 'POST', headers: FORM });
    // RFC 6750 §2.3 lets a bearer token ride in the query; the emulator does not accept it, but logs it.
    await emulator.fetch(
      `${emulator.baseUrl}/services/push/v1/customer/apps/${emulator.appId}/upload?filenames=a.csv&access_token=${token.access_token}`,
    );
    const log = JSON.stringify(emulator.state.requests);
    expect(log).not.toContain(DEMO_CLIENT_SECRET);
    expect(log).not.toContain(token.access_token);
    expect(emulator.state.requests[1]?.query).toEqual({ client_id: [DEMO_CLIENT_ID], client_secret: ['[redacted]'] });
    expect(emulator.state.requests[2]?.query.access_token).toEqual(['[redacted]']);
  });
});
