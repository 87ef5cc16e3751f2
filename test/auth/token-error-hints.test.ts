/**
 * The token errors a new user meets while setting up say which setting to check: a wrong secret
 * names the credential's settings, a wrong scope prefix names `scopeBase`, and an `authUrl` with
 * no token endpoint under it names the address tried and `authUrl`, with the mistake of giving
 * the token endpoint's own address spelled out. None of them shows the secret.
 */
import { TokenError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

/** One origin for all three addresses, as `push-api emulator` serves them. */
const ORIGIN = 'https://push.example';
const emulator = () =>
  createPushApiHandler({ authUrl: `${ORIGIN}/auth`, baseUrl: ORIGIN, uploadUrl: `${ORIGIN}/storage` });

async function tokenError(options: Parameters<typeof clientFor>[1]): Promise<TokenError> {
  const mock = emulator();
  const error = await clientFor(mock, { maxRetries: 0, ...options })
    .tokens.getToken()
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(TokenError);
  expect(String((error as TokenError).message)).not.toContain(mock.clientSecret);
  return error as TokenError;
}

describe('token errors met while setting up', () => {
  it('a wrong secret names clientId and clientSecret, and not the secret', async () => {
    const error = await tokenError({ clientSecret: 'typed-wrong-secret' });
    expect(error.error).toBe('invalid_client');
    expect(error.message).toMatch(/check clientId and clientSecret \(PUSH_CLIENT_ID, PUSH_CLIENT_SECRET\)$/);
    expect(error.message).not.toContain('typed-wrong-secret');
  });

  it('a scope prefix the credential lacks names scopeBase', async () => {
    const error = await tokenError({ scopeBase: 'https://api.other.example' });
    expect(error.error).toBe('invalid_scope');
    expect(error.message).toMatch(/; check scopeBase \(PUSH_SCOPE_BASE\) or scopes$/);
  });

  it('an authUrl with no token endpoint under it names the address tried and authUrl', async () => {
    const error = await tokenError({ authUrl: ORIGIN });
    expect(error.status).toBe(404);
    expect(error.message).toBe(
      `Token request failed with HTTP 404: no token endpoint at ${ORIGIN}/oauth2/token; check authUrl (PUSH_AUTH_URL): tokens are requested from {authUrl}/oauth2/token`,
    );
  });

  it("an authUrl that is the token endpoint's own address says it must not end in /oauth2/token", async () => {
    const error = await tokenError({ authUrl: `${ORIGIN}/auth/oauth2/token` });
    expect(error.status).toBe(404);
    expect(error.message).toContain(`no token endpoint at ${ORIGIN}/auth/oauth2/token/oauth2/token`);
    expect(error.message).toContain('check authUrl (PUSH_AUTH_URL), which must not end in /oauth2/token');
  });

  it('shows the token address without its query', async () => {
    const error = await tokenError({ authUrl: `${ORIGIN}/?tenant=acme` });
    expect(error.message).toContain(`no token endpoint at ${ORIGIN}/`);
    expect(error.message).not.toContain('tenant=acme');
  });
});
