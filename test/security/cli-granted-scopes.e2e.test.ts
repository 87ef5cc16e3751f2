/**
 * `push-api token` against a token endpoint that lists the access token it issues among the granted
 * scopes: without `--print-token`, neither the table nor `--json` shows the token. A loopback server.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { DEMO_CLIENT_ID, DEMO_SCOPE_BASE } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { killChildren, runCli } from '../support/cli/run.js';

const TOKEN = 'tok-listed-in-scope-0123456789abcdef';

let cli: string;
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const asked = new URLSearchParams(body).get('scope') ?? '';
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope: `${asked} ${TOKEN}` }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  url = `http://127.0.0.1:${port}`;
  cli = await buildCli();
}, 60_000);
afterAll(async () => {
  killChildren();
  server.close();
});

describe('push-api token with the token listed among the granted scopes', () => {
  it.each([[[]], [['--json']]])('prints the granted scopes without it (%j)', async (flags) => {
    const result = await runCli(cli, ['token', ...flags], {
      env: {
        PUSH_CLIENT_ID: DEMO_CLIENT_ID,
        PUSH_CLIENT_SECRET: 'scope-test-secret',
        PUSH_AUTH_URL: `${url}/auth`,
        PUSH_BASE_URL: url,
        PUSH_SCOPE_BASE: DEMO_SCOPE_BASE,
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toContain(`${DEMO_SCOPE_BASE}/connector.write`);
    expect(result.stdout).not.toContain(TOKEN);
    expect(result.stderr).not.toContain(TOKEN);
    if (flags.includes('--json')) {
      expect(JSON.parse(result.stdout).scopes).toEqual([`${DEMO_SCOPE_BASE}/connector.write`]);
    }
  });
});
