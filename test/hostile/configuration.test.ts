/** Configuration a hostile service or a careless setup can hand the client. */
import { inspect } from 'node:util';
import { ConfigurationError, PushClient, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';

/** The longest token lifetime the client believes: a day, whatever `expires_in` says. */
const MAX_TOKEN_LIFETIME_SECONDS = 86_400;

const start = useHostileService();

const base = { clientId: 'id', clientSecret: 'secret-value', scopes: ['s'], env: {} };

describe('credentials in a configured URL', () => {
  it.each([
    ['authUrl', { authUrl: 'https://user:hunter22@auth.example', baseUrl: 'https://api.example' }],
    ['baseUrl', { authUrl: 'https://auth.example', baseUrl: 'https://user:hunter22@api.example' }],
    ['baseUrl', { authUrl: 'https://auth.example', baseUrl: 'https://:hunter22@api.example' }],
    ['baseUrl', { authUrl: 'https://auth.example', baseUrl: 'https://hunter22@api.example' }],
  ])('%s with user:password@ is a ConfigurationError that does not repeat it', (name, urls) => {
    let error: unknown;
    try {
      new PushClient({ ...base, ...urls });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).toMatch(/credentials/);
    for (const view of [String(error), (error as Error).stack, JSON.stringify(error), inspect(error)]) {
      expect(view).not.toContain('hunter22');
    }
  });

  it('from the environment too (PUSH_BASE_URL)', () => {
    const env = {
      PUSH_CLIENT_ID: 'id',
      PUSH_CLIENT_SECRET: 'secret-value',
      PUSH_AUTH_URL: 'https://auth.example',
      PUSH_BASE_URL: 'https://admin:hunter22@api.example',
      PUSH_SCOPE_BASE: 'https://api.example',
    };
    expect(() => new PushClient({ env })).toThrow(ConfigurationError);
    expect(() => new PushClient({ env })).not.toThrow(/hunter22/);
  });
});

describe('expires_in', () => {
  function serviceAnswering(expiresIn: unknown) {
    return start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      // Written by hand: JSON.stringify cannot write 1e400.
      res.end(`{"access_token":"${HOSTILE_TOKEN}","token_type":"Bearer","expires_in":${expiresIn}}`);
      return true;
    });
  }

  it.each(['1e300', '1e400', '99999999999999999999', '"86400000"'])(
    '%s is cut to 24 hours, and the cache works (one token request for many calls)',
    async (expiresIn) => {
      const service = await serviceAnswering(expiresIn);
      const client = service.client();
      const before = Date.now();
      const first = await client.tokens.getToken();
      const second = await client.tokens.getToken();
      expect(first.expiresAt.toISOString()).toBe(second.expiresAt.toISOString());
      const lifetime = (first.expiresAt.getTime() - before) / 1000;
      expect(lifetime).toBeGreaterThan(MAX_TOKEN_LIFETIME_SECONDS - 60);
      expect(lifetime).toBeLessThanOrEqual(MAX_TOKEN_LIFETIME_SECONDS + 1);
      expect(service.on('token')).toHaveLength(1);
    },
  );

  it.each(['-5', '0', '"NaN"', '"1e300"', '"soon"', 'null', '{}'])(
    '%s is refused with a TokenError',
    async (expiresIn) => {
      const service = await serviceAnswering(expiresIn);
      const error = await service
        .client()
        .tokens.getToken()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TokenError);
      expect((error as TokenError).error).toBe('invalid_token_response');
      expect((error as Error).message).not.toContain(HOSTILE_TOKEN);
    },
  );
});
