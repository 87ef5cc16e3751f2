import type { ServerResponse } from 'node:http';
import { ConfigurationError, ConnectionError, PushApiError, PushError, RedirectError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { FetchHttpClient } from '../../src/http/http-client.js';
import type { RequestSpec } from '../../src/http/types.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { remoteDns } from '../support/remote-dns.js';

const serve = useLoopbackServers();

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const http = new FetchHttpClient({
  timeoutMs: 2_000,
  maxRetries: 0,
  retryAmbiguous: false,
  allowInsecureHttp: false,
  userAgent: 'test',
  logger: silent,
  tokens: () => ({ getToken: async () => ({ accessToken: 'tok-redirect' }), invalidate: () => undefined }),
});

function bearer(url: string, extra: Partial<RequestSpec> = {}): RequestSpec {
  return { operation: 'test', method: 'GET', url: new URL(url), auth: 'bearer', retryPolicy: 'never', ...extra };
}

describe('redirects', () => {
  it('a redirect to another origin never carries the Authorization header', async () => {
    const seen: (string | undefined)[] = [];
    const other = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.end('landed');
    });
    const origin = await serve((_req, res) => res.writeHead(302, { location: `${other}/elsewhere` }).end());
    const response = await http.send(bearer(`${origin}/start`));
    expect(await response.text()).toBe('landed');
    expect(seen).toEqual([undefined]);
  });

  it('a redirect within the same origin keeps the Authorization header', async () => {
    const seen: (string | undefined)[] = [];
    const origin = await serve((req, res) => {
      seen.push(req.headers.authorization);
      if (req.url === '/start') res.writeHead(307, { location: '/next' }).end();
      else res.end('ok');
    });
    await http.send(bearer(`${origin}/start`));
    expect(seen).toEqual(['Bearer tok-redirect', 'Bearer tok-redirect']);
  });

  it('a caller-set Authorization header is dropped on a cross-origin redirect too', async () => {
    const seen: (string | undefined)[] = [];
    const other = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.end('ok');
    });
    const origin = await serve((_req, res) => res.writeHead(301, { location: other }).end());
    await http.send({ ...bearer(`${origin}/`), auth: 'none', headers: { Authorization: 'Basic c2VjcmV0' } });
    expect(seen).toEqual([undefined]);
  });

  it('a Cookie, whoever set it, is dropped on a cross-origin redirect; other headers follow', async () => {
    const seen: (string | undefined)[][] = [];
    const other = await serve((req, res) => {
      seen.push([req.headers.cookie, req.headers['x-tenant'] as string | undefined]);
      res.end('ok');
    });
    const sameOrigin: (string | undefined)[] = [];
    const origin = await serve((req, res) => {
      sameOrigin.push(req.headers.cookie);
      if (req.url === '/') res.writeHead(302, { location: '/next' }).end();
      else res.writeHead(302, { location: other }).end();
    });
    await http.send({ ...bearer(`${origin}/`), headers: { Cookie: 'session=gateway-credential', 'x-tenant': 'acme' } });
    // Within the origin the cookie stays; the other origin never gets it.
    expect(sameOrigin).toEqual(['session=gateway-credential', 'session=gateway-credential']);
    expect(seen).toEqual([[undefined, 'acme']]);
  });

  it('a redirect to plain http on a non-loopback host is refused', async () => {
    const origin = await serve((_req, res) => res.writeHead(302, { location: 'http://example.com/steal' }).end());
    await expect(http.send(bearer(`${origin}/`))).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('a 303 after a POST is not followed: a RedirectError names the status and the target origin', async () => {
    const seen: string[] = [];
    const origin = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/post') res.writeHead(303, { location: '/result?sig=abc' }).end();
      else res.end('ok');
    });
    const error = await http
      .send(
        bearer(`${origin}/post`, { method: 'POST', body: () => '{}', headers: { 'content-type': 'application/json' } }),
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as RedirectError).status).toBe(303);
    expect((error as RedirectError).targetOrigin).toBe(origin);
    expect((error as Error).message).toContain(`HTTP 303 to ${origin}`);
    expect((error as Error).message).not.toContain('sig=abc');
    expect(seen).toEqual(['POST /post']);
  });

  it('a 303 after a PUT is followed with a GET and no body', async () => {
    const seen: string[] = [];
    const origin = await serve((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'}`);
      if (req.url === '/put') res.writeHead(303, { location: '/result' }).end();
      else res.end('ok');
    });
    await http.send(
      bearer(`${origin}/put`, { method: 'PUT', body: () => '{}', headers: { 'content-type': 'application/json' } }),
    );
    expect(seen).toEqual(['PUT /put application/json', 'GET /result -']);
  });

  it('gives up after 5 redirects', async () => {
    let hops = 0;
    const origin = await serve((_req, res) => {
      hops++;
      res.writeHead(302, { location: `/loop${hops}` }).end();
    });
    const error = await http.send(bearer(`${origin}/`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushApiError);
    expect((error as Error).message).toMatch(/redirects/);
    expect(hops).toBe(6);
  });
});

describe('streamed bodies', () => {
  it('a redirect answering a streamed PUT fails clearly and is not re-sent', async () => {
    let hits = 0;
    const origin = await serve((_req, res) => {
      hits += 1;
      res.writeHead(307, { location: '/elsewhere' }).end();
    });
    const body = () => new Blob([new Uint8Array(64)]).stream();
    const error = await http
      .send({
        operation: 'upload',
        method: 'PUT',
        url: new URL(`${origin}/put`),
        headers: { 'content-length': '64' },
        body,
        auth: 'none',
        retryPolicy: 'idempotent',
        call: { headers: {}, maxRetries: 2 },
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/upload answered with a redirect.*streamed body/);
    expect(hits).toBe(1);
  });
});

describe('a body never follows a redirect to another origin', () => {
  /** A server that records every request it receives, body included; `redirect` may answer instead. */
  async function recorder(
    redirect?: (res: ServerResponse, path: string) => boolean,
  ): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const url = await serve((req, res, body) => {
      seen.push(`${req.method} ${req.url} ${body}`);
      if (!redirect?.(res, req.url ?? '')) res.end('{"success":true}');
    });
    return { url, seen };
  }

  it.each([
    [307, 'PUT'],
    [308, 'PUT'],
    [301, 'PUT'],
  ] as const)(
    'a %i to another origin answering a %s with a body fails, unretried, and sends nothing there',
    async (code, method) => {
      const other = await recorder();
      let hits = 0;
      const origin = await serve((_req, res) => {
        hits += 1;
        res.writeHead(code, { location: `${other.url}/records` }).end();
      });
      const error = await http
        .send(
          bearer(`${origin}/records`, {
            method,
            headers: { 'content-type': 'application/json' },
            body: () => '{"records":[{"amount":1}]}',
            retryPolicy: 'idempotent',
            call: { headers: {}, maxRetries: 2 },
          }),
        )
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PushError);
      expect(error).not.toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toMatch(/redirect to another origin/);
      expect(other.seen).toEqual([]);
      expect(hits).toBe(1);
    },
  );

  it('a 307 within the same origin re-sends the body of a PUT', async () => {
    const origin = await recorder((res, path) => {
      if (path !== '/start') return false;
      res.writeHead(307, { location: '/next' }).end();
      return true;
    });
    await http.send(bearer(`${origin.url}/start`, { method: 'PUT', body: () => 'payload' }));
    expect(origin.seen).toEqual(['PUT /start payload', 'PUT /next payload']);
  });

  it.each([301, 302, 307, 308])(
    'a POST answered %i is never followed, even within the origin, and is not re-sent',
    async (code) => {
      const other = await recorder();
      const origin = await recorder((res, path) => {
        if (path !== '/records') return false;
        res.writeHead(code, { location: `${other.url}/records` }).end();
        return true;
      });
      const error = await http
        .send(
          bearer(`${origin.url}/records`, {
            method: 'POST',
            body: () => 'payload',
            retryPolicy: 'non-idempotent',
            call: { headers: {}, maxRetries: 2 },
          }),
        )
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RedirectError);
      expect((error as Error).message).toMatch(/whether the service acted on it is unknown/);
      expect(origin.seen).toEqual(['POST /records payload']);
      expect(other.seen).toEqual([]);
    },
  );

  it("with redirects: 'none' a 3xx is an error and its target receives nothing", async () => {
    const other = await recorder();
    const origin = await serve((_req, res) => res.writeHead(302, { location: `${other.url}/x` }).end());
    const error = await http.send(bearer(`${origin}/`, { redirects: 'none' })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushApiError);
    expect((error as PushApiError).status).toBe(302);
    expect(other.seen).toEqual([]);
  });
});

/**
 * Every hop stays as far from this machine as the service: a remote service (a made-up name that
 * the test's fetch sends to 127.0.0.1) cannot redirect the client into this machine or its network.
 */
describe('a redirect never goes closer to this machine than the service', () => {
  function remoteClient(names: string[] = ['api.remote.test', 'cdn.remote.test', '10.20.30.40', '10.20.30.41']) {
    const dns = remoteDns(names);
    const client = new FetchHttpClient({
      timeoutMs: 2_000,
      maxRetries: 0,
      retryAmbiguous: false,
      allowInsecureHttp: true,
      userAgent: 'test',
      logger: silent,
      fetch: dns.fetch,
      tokens: () => ({ getToken: async () => ({ accessToken: 'tok-redirect' }), invalidate: () => undefined }),
    });
    return { client, dns };
  }

  async function sink(): Promise<{ port: string; seen: string[] }> {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.end('{"success":true}');
    });
    return { port: new URL(url).port, seen };
  }

  async function redirectingService(location: (sinkPort: string) => string, code = 302) {
    const target = await sink();
    const service = await serve((_req, res) => res.writeHead(code, { location: location(target.port) }).end());
    return { port: new URL(service).port, target };
  }

  it.each([
    'http://127.0.0.1:PORT/x',
    'http://127.1:PORT/x',
    'http://2130706433:PORT/x',
    'http://0x7f000001:PORT/x',
    'http://0177.0.0.1:PORT/x',
    'http://0x7f.1:PORT/x',
    'http://127.0.0.1.:PORT/x',
    'http://LOCALHOST:PORT/x',
    'http://localhost.:PORT/x',
    'http://files.localhost:PORT/x',
    'http://[::1]:PORT/x',
    'http://[::ffff:127.0.0.1]:PORT/x',
    'http://[::ffff:7f00:1]:PORT/x',
    'http://[0:0:0:0:0:0:0:1]:PORT/x',
    'http://0.0.0.0:PORT/x',
    'http://[::]:PORT/x',
    '//127.0.0.1:PORT/x',
  ])('a remote GET redirected to %s is refused, and nothing reaches it', async (spelling) => {
    const { client, dns } = remoteClient();
    const { port, target } = await redirectingService((sinkPort) => spelling.replace('PORT', sinkPort));
    const error = await client.send(bearer(`http://api.remote.test:${port}/start`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as Error).message).toMatch(/points into this machine \(loopback\)/);
    expect(target.seen).toEqual([]);
    expect(dns.elsewhere).toEqual([]);
  });

  it.each([
    'http://10.0.0.1/x',
    'http://172.16.0.1/x',
    'http://192.168.1.1/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/latest/meta-data/',
    'http://100.64.0.1/x',
    'http://[fe80::1]/x',
    'http://[fd00::1]/x',
    'http://[::ffff:169.254.169.254]/x',
    'http://[64:ff9b::10.0.0.1]/x',
  ])('a remote GET redirected to the private address %s is refused before any connection', async (address) => {
    const { client, dns } = remoteClient();
    const { port } = await redirectingService(() => address);
    const error = await client.send(bearer(`http://api.remote.test:${port}/start`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as Error).message).toMatch(/points into a private network/);
    expect(dns.elsewhere).toEqual([]);
  });

  it('the second hop of a chain is judged against the service too', async () => {
    const { client, dns } = remoteClient();
    const target = await sink();
    const seen: string[] = [];
    const middle = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(307, { location: `http://127.0.0.1:${target.port}/x` }).end();
    });
    const service = await serve((_req, res) =>
      res.writeHead(302, { location: `http://cdn.remote.test:${new URL(middle).port}/hop` }).end(),
    );
    const error = await client
      .send(bearer(`http://api.remote.test:${new URL(service).port}/start`))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect(seen).toEqual(['GET /hop']);
    expect(target.seen).toEqual([]);
    expect(dns.elsewhere).toEqual([]);
  });

  it('a 303 after a remote PUT is not followed into this machine', async () => {
    const { client } = remoteClient();
    const { port, target } = await redirectingService((sinkPort) => `http://127.1:${sinkPort}/result`, 303);
    const error = await client
      .send(bearer(`http://api.remote.test:${port}/put`, { method: 'PUT', body: () => '{}' }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect(target.seen).toEqual([]);
  });

  it('a first address closer than the service it belongs to is not used', async () => {
    const { client } = remoteClient();
    const target = await sink();
    const error = await client
      .send({
        ...bearer(`http://127.0.0.1:${target.port}/files/a.csv`),
        auth: 'none',
        method: 'PUT',
        body: () => 'file',
        service: new URL('https://api.remote.test'),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushError);
    expect((error as Error).message).toMatch(/points into this machine/);
    expect(target.seen).toEqual([]);
  });

  it('a remote service may redirect to another remote host, and a private one to a private host', async () => {
    const { client, dns } = remoteClient();
    const landing = await sink();
    const remote = await serve((_req, res) =>
      res.writeHead(302, { location: `http://cdn.remote.test:${landing.port}/landed` }).end(),
    );
    await client.send(bearer(`http://api.remote.test:${new URL(remote).port}/start`));
    const privateHop = await serve((_req, res) =>
      res.writeHead(302, { location: `http://10.20.30.41:${landing.port}/private` }).end(),
    );
    await client.send(bearer(`http://10.20.30.40:${new URL(privateHop).port}/start`));
    expect(landing.seen).toEqual(['GET /landed', 'GET /private']);
    expect(dns.elsewhere).toEqual([]);
  });

  it('a private service may not redirect into this machine', async () => {
    const { client } = remoteClient();
    const { port, target } = await redirectingService((sinkPort) => `http://localhost:${sinkPort}/x`);
    const error = await client.send(bearer(`http://10.20.30.40:${port}/start`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect(target.seen).toEqual([]);
  });

  it('a loopback service (the emulator) may redirect within this machine', async () => {
    const landing = await sink();
    const local = await serve((_req, res) => res.writeHead(302, { location: `http://127.1:${landing.port}/in` }).end());
    await http.send(bearer(`${local}/start`));
    expect(landing.seen).toEqual(['GET /in']);
  });

  it('names a huge target host cut short', async () => {
    const { client } = remoteClient();
    const host = `${'a'.repeat(5_000)}.localhost`;
    const { port } = await redirectingService(() => `http://${host}/x`);
    const error = await client.send(bearer(`http://api.remote.test:${port}/start`)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as Error).message.length).toBeLessThan(1_000);
  });
});
