import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { PushClient, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { secretForms } from '../security/scan.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { recordingLogger } from '../support/recorders.js';

const listen = useLoopbackServers();

/** A loopback server that records each request (body included) and answers with `answer`. */
async function serve(answer: (res: ServerResponse) => void) {
  const seen: string[] = [];
  const url = await listen((req, res, body) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'} ${body}`);
    answer(res);
  });
  return { url, seen };
}

const clientId = 'redirect-client';
const clientSecret = 'sEcReT+redirect/value=1';

describe('token requests never follow redirects', () => {
  it.each(['client_secret_post', 'client_secret_basic'] as const)(
    'a token endpoint answering 307 to another origin is a TokenError; the other origin receives nothing and the secret appears nowhere (%s)',
    async (tokenAuthMethod) => {
      const other = await serve((res) => res.end('{"access_token":"stolen","token_type":"Bearer","expires_in":60}'));
      const auth = await serve((res) => res.writeHead(307, { location: `${other.url}/oauth2/token` }).end());
      const logger = recordingLogger();
      const client = new PushClient({
        clientId,
        clientSecret,
        authUrl: auth.url,
        baseUrl: other.url,
        scopes: ['https://api.push.test/connector.write'],
        tokenAuthMethod,
        logger,
        env: {},
      });
      const error = await client.tokens.getToken().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TokenError);
      expect((error as TokenError).status).toBe(307);
      expect((error as TokenError).message).toMatch(/redirect/);
      expect(other.seen).toEqual([]);
      // A misconfigured endpoint is not retried.
      expect(auth.seen).toHaveLength(1);
      const output = [
        String(error),
        JSON.stringify(error),
        inspect(error, { depth: Infinity, showHidden: true }),
        inspect(logger.lines, { depth: Infinity }),
      ].join('\n');
      for (const secret of secretForms(clientId, clientSecret)) expect(output).not.toContain(secret);
    },
  );

  it('a same-origin redirect from the token endpoint is refused too', async () => {
    const auth = await serve((res) => res.writeHead(308, { location: '/elsewhere/oauth2/token' }).end());
    const client = new PushClient({
      clientId,
      clientSecret,
      authUrl: auth.url,
      baseUrl: auth.url,
      scopes: ['https://api.push.test/connector.write'],
      env: {},
    });
    await expect(client.tokens.getToken()).rejects.toBeInstanceOf(TokenError);
    expect(auth.seen.map((line) => line.split(' ')[1])).toEqual(['/oauth2/token']);
  });
});
