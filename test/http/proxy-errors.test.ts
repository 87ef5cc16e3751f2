/**
 * A proxy that refuses the client (407, wrong password): the error says so in words, not only
 * undici's code. Loopback only: the proxy refuses every CONNECT, so nothing goes further.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConnectionError, PushClient } from 'push-api-client';
import { EnvHttpProxyAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let proxy: http.Server;
let proxyUrl: string;

beforeAll(async () => {
  proxy = http.createServer((_request, response) => {
    response.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
  });
  proxy.on('connect', (_request, socket) => {
    socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n');
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxyUrl = `http://user:wrong-password@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(() => {
  proxy.close();
});

describe('a proxy that refuses the client', () => {
  it('names the 407 in the error, and never the proxy password', async () => {
    const dispatcher = new EnvHttpProxyAgent({ httpProxy: proxyUrl, httpsProxy: proxyUrl, noProxy: '' });
    const client = new PushClient({
      clientId: 'id',
      clientSecret: 'secret',
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      env: {},
      dispatcher,
      maxRetries: 0,
    });
    const error = await client.tokens.getToken().catch((caught: unknown) => caught);
    await dispatcher.close();
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/^token request failed: UND_ERR_\w+ \(Proxy response \(407\)/);
    expect(JSON.stringify(error)).not.toContain('wrong-password');
    expect((error as Error).message).not.toContain('wrong-password');
  });
});
