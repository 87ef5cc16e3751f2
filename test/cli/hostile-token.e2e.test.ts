/**
 * A token service answering with a hostile access token (line breaks, terminal controls, bidi
 * marks): it is not an RFC 6750 token, so it is refused, and nothing of it reaches the terminal.
 * A loopback server.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { DEMO_CLIENT_ID, DEMO_SCOPE_BASE } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../support/cli/build.js';
import { RAW_TERMINAL_CONTROL } from '../support/cli/control-chars.js';
import { killChildren, runCli } from '../support/cli/run.js';

const TOKEN = 'tok-abc\ndefgh\r\u001b[2J\u2028\u202eijkl';

let cli: string;
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const scope = new URLSearchParams(body).get('scope') ?? '';
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: TOKEN, token_type: 'Bearer', expires_in: 3600, scope }));
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

describe('push-api token --print-token with a hostile token', () => {
  it('refuses it with a one-line reason and prints nothing of it, on --quiet too', async () => {
    for (const quiet of [false, true]) {
      const result = await runCli(cli, ['token', '--print-token', ...(quiet ? ['--quiet'] : [])], {
        env: {
          PUSH_CLIENT_ID: DEMO_CLIENT_ID,
          PUSH_CLIENT_SECRET: 'hostile-test-secret',
          PUSH_AUTH_URL: `${url}/auth`,
          PUSH_BASE_URL: url,
          PUSH_SCOPE_BASE: DEMO_SCOPE_BASE,
        },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('RFC 6750');
      for (const output of [result.stdout, result.stderr]) {
        expect(output).not.toMatch(RAW_TERMINAL_CONTROL);
        expect(output).not.toContain('defgh');
        expect(output).not.toContain('ijkl');
      }
    }
  });
});
