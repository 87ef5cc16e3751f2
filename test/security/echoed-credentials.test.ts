import { inspect } from 'node:util';
import { PermissionDeniedError, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { TokenManager } from '../../src/auth/token-manager.js';
import { FetchHttpClient } from '../../src/http/http-client.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { recordingLogger } from '../support/recorders.js';
import { secretForms } from './scan.js';

const serve = useLoopbackServers();

const ACCESS_TOKEN = 'at-echoed-0123456789abcdef';

function transport(logger = recordingLogger()) {
  return new FetchHttpClient({
    timeoutMs: 2_000,
    maxRetries: 0,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'test',
    logger,
    tokens: () => ({ getToken: async () => ({ accessToken: ACCESS_TOKEN }), invalidate: () => undefined }),
  });
}

const everyForm = (error: unknown) =>
  [String(error), JSON.stringify(error), inspect(error, { depth: Infinity, showHidden: true })].join('\n');

describe('credentials echoed by the server never reach an error', () => {
  it('an access token echoed in an error body and header is scrubbed from message, body, headers, JSON and inspect', async () => {
    const base = await serve((req, res) => {
      const auth = req.headers.authorization ?? '';
      res.writeHead(403, { 'content-type': 'application/json', 'x-debug-auth': auth });
      res.end(JSON.stringify({ code: 'forbidden', message: `token ${auth} lacks a scope`, received: auth }));
    });
    const error = await transport()
      .send({ operation: 'finance', method: 'GET', url: new URL(`${base}/x`), auth: 'bearer', retryPolicy: 'never' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    const denied = error as PermissionDeniedError;
    expect(denied.message).toBe('403 token Bearer [redacted] lacks a scope');
    expect(denied.body).toMatchObject({ received: 'Bearer [redacted]' });
    expect(denied.headers['x-debug-auth']).toBe('Bearer [redacted]');
    expect(everyForm(error)).not.toContain(ACCESS_TOKEN);
  });

  it('a token error echoing the form-encoded client secret is scrubbed', async () => {
    const clientSecret = 'p@ss+wörd/=&secret';
    const base = await serve((_req, res, body) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: `could not parse ${body}` }));
    });
    const tokens = new TokenManager({
      http: transport(),
      authUrl: new URL(base),
      clientId: 'echo-client',
      clientSecret,
      scopes: ['https://api.push.test/connector.write'],
    });
    const error = await tokens.getToken().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).errorDescription).toContain('client_secret=[redacted]');
    for (const secret of secretForms('echo-client', clientSecret)) expect(everyForm(error)).not.toContain(secret);
  });
});
