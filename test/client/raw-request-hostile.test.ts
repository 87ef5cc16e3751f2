/**
 * `client.request` against a hostile service on 127.0.0.1: huge and deeply nested answers, echoed
 * secrets, and paths or query values built to leave the base URL or inject a header.
 */
import {
  ConfigurationError,
  ConnectionError,
  PushError,
  ResponseTooLargeError,
  UnprocessableEntityError,
} from 'push-api-client';
import { describe, expect, it } from 'vitest';
import {
  drainedOrClosed,
  HOSTILE_SECRET,
  HOSTILE_TOKEN,
  type HostileService,
  useHostileService,
} from '../support/hostile-service.js';

const start = useHostileService();
const fast = { backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 };

/** Every text an error offers to a log line or a bug report. */
function everything(error: unknown): string {
  const e = error as PushError & { body?: unknown; headers?: unknown };
  return [e.message, e.stack, JSON.stringify(e), JSON.stringify(e.body), JSON.stringify(e.headers)].join('\n');
}

function dataRequests(service: HostileService) {
  return service.requests.filter((request) => request.route !== 'token');
}

describe('client.request against a hostile service', () => {
  it('refuses a 2xx answer past the 8 MiB cap with ResponseTooLargeError', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'other') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const write = async () => {
        // 12 MiB of spaces, unless the client hangs up first.
        while (sent < 12 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) await drainedOrClosed(res);
        }
        res.end();
      };
      void write();
      return true;
    });
    const error = await service
      .client()
      .request({ method: 'GET', path: '/reports' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
  });

  it('refuses a JSON answer nested deeper than 512 levels, with a PushError, instead of handing it on', async () => {
    const depth = 100_000;
    const service = await start((request, res) => {
      if (request.route !== 'other') return false;
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-deep' });
      res.end(`${'['.repeat(depth)}${']'.repeat(depth)}`);
      return true;
    });
    const error = await service
      .client()
      .request({ method: 'GET', path: '/reports' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushError);
    expect((error as PushError).message).toMatch(/deeper than 512/);
    expect((error as PushError).requestId).toBe('req-deep');
    // 512 levels and brackets inside strings are fine.
    const fine = await start((request, res) => {
      if (request.route !== 'other') return false;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ text: '['.repeat(5_000), nested: JSON.parse(`${'['.repeat(511)}${']'.repeat(511)}`) }));
      return true;
    });
    const data = await fine.client().request<{ text: string }>({ method: 'GET', path: '/reports' });
    expect(data.text).toHaveLength(5_000);
  });

  it('scrubs the bearer token and the client secret that an answer echoes from data, headers and errors', async () => {
    const echo = `token=${HOSTILE_TOKEN} secret=${HOSTILE_SECRET}`;
    const service = await start((request, res) => {
      if (request.path === '/echo-ok') {
        res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': echo }).end(echo);
        return true;
      }
      if (request.path === '/echo-json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo }));
        return true;
      }
      if (request.path === '/echo-escaped') {
        // JSON may escape any character: `\/` for `/`, `\u0041` for `A`; parsing gives the secret back.
        const escaped = JSON.stringify({ echo }).replaceAll('/', '\\/').replace('T', '\\u0054');
        res.writeHead(200, { 'content-type': 'application/json' }).end(escaped);
        return true;
      }
      if (request.path === '/echo-error') {
        res
          .writeHead(422, { 'content-type': 'application/json', 'x-echo': echo })
          .end(JSON.stringify({ code: '422', message: echo, success: false }));
        return true;
      }
      return false;
    });
    const client = service.client();
    const text = await client.request({ method: 'GET', path: '/echo-ok' }).withResponse();
    expect(String(text.data)).not.toContain(HOSTILE_TOKEN);
    expect(String(text.data)).not.toContain(HOSTILE_SECRET);
    expect(text.response.headers.get('x-echo')).not.toContain(HOSTILE_TOKEN);
    expect(text.response.headers.get('x-echo')).not.toContain(HOSTILE_SECRET);
    const json = await client.request<{ echo: string }>({ method: 'GET', path: '/echo-json' });
    expect(json.echo).not.toContain(HOSTILE_TOKEN);
    expect(json.echo).not.toContain(HOSTILE_SECRET);
    const escaped = await client.request<{ echo: string }>({ method: 'GET', path: '/echo-escaped' });
    expect(escaped.echo).toMatch(/^token=\S+ secret=/);
    expect(escaped.echo).not.toContain(HOSTILE_TOKEN);
    expect(escaped.echo).not.toContain(HOSTILE_SECRET);
    const error = await client.request({ method: 'POST', path: '/echo-error', body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(everything(error)).not.toContain(HOSTILE_TOKEN);
    expect(everything(error)).not.toContain(HOSTILE_SECRET);
  });

  it('resolves to the text of a non-JSON answer, to the value of a +json one, and refuses invalid JSON', async () => {
    const service = await start((request, res) => {
      if (request.path === '/text') res.writeHead(200, { 'content-type': 'text/csv' }).end('a,b\n1,2\n');
      else if (request.path === '/problem')
        res.writeHead(200, { 'content-type': 'application/problem+json; charset=utf-8' }).end('{"a":1}');
      else if (request.path === '/broken')
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-broken' }).end('{"a":');
      else return false;
      return true;
    });
    const client = service.client();
    expect(await client.request({ method: 'GET', path: '/text' })).toBe('a,b\n1,2\n');
    expect(await client.request({ method: 'GET', path: '/problem' })).toEqual({ a: 1 });
    const error = await client.request({ method: 'GET', path: '/broken' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PushError);
    expect((error as PushError).requestId).toBe('req-broken');
  });

  it('retries PUT and DELETE after a 500, never PATCH, and never re-sends a POST whose connection dropped', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'other') return false;
      if (request.path === '/drop') {
        res.socket?.destroy();
        return true;
      }
      if (request.hit % 2 === 1) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"code":"500","message":"boom"}');
        return true;
      }
      res.writeHead(204).end();
      return true;
    });
    const client = service.client({ maxRetries: 2, ...fast });
    const count = (method: string) => dataRequests(service).filter((request) => request.method === method).length;
    await client.request({ method: 'PUT', path: '/thing', body: { a: 1 } });
    expect(count('PUT')).toBe(2);
    await client.request({ method: 'DELETE', path: '/thing' });
    expect(count('DELETE')).toBe(2);
    await expect(client.request({ method: 'PATCH', path: '/thing', body: { a: 1 } })).rejects.toMatchObject({
      status: 500,
    });
    expect(count('PATCH')).toBe(1);
    const dropped = await client.request({ method: 'POST', path: '/drop', body: { a: 1 } }).catch((e: unknown) => e);
    expect(dropped).toBeInstanceOf(ConnectionError);
    expect((dropped as ConnectionError).requestMaybeSent).toBe(true);
    expect(dataRequests(service).filter((request) => request.path === '/drop')).toHaveLength(1);
  });

  it('sends query keys and values percent-encoded: CR and LF never make a header', async () => {
    const seen: { url: string | undefined; headers: Record<string, unknown> }[] = [];
    const service = await start((request, res, req) => {
      if (request.route !== 'other') return false;
      seen.push({ url: req.url, headers: { ...req.headers } });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return true;
    });
    await service.client().request({
      method: 'GET',
      path: '/reports',
      query: { from: 'x\r\nX-Injected: 1', 'k\r\nX-Key: 2': 'y', list: ['a&b=c', '#frag'] },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['x-injected']).toBeUndefined();
    expect(seen[0]?.headers['x-key']).toBeUndefined();
    const url = new URL(seen[0]?.url ?? '', service.url);
    expect(url.pathname).toBe('/reports');
    expect(url.searchParams.get('from')).toBe('x\r\nX-Injected: 1');
    expect(url.searchParams.getAll('list')).toEqual(['a&b=c', '#frag']);
    expect(url.hash).toBe('');
  });

  it('refuses a header value with CR or LF before sending anything', async () => {
    const service = await start();
    await expect(
      service.client().request({ method: 'GET', path: '/reports', headers: { 'x-a': 'v\r\nX-Injected: 1' } }),
    ).rejects.toBeInstanceOf(ConfigurationError);
    expect(service.requests).toHaveLength(0);
  });

  it.each([
    '../../token',
    '../oauth2/token',
    '%2e%2e/%2e%2e/oauth2/token',
    '.%2E/x',
    './x',
    '//evil.example/x',
    '///evil.example/x',
    'https://evil.example/x',
    'HTTPS://evil.example/x',
    'http:evil.example',
    'javascript:alert(1)',
    ' https://evil.example/x',
    '/x\t/y',
    '/x%2F..%2F..%2Foauth2/token',
    '/x%5C..%5Coauth2',
  ])('keeps the path %j from leaving the base URL: refused, and nothing is sent', async (path) => {
    const service = await start();
    // A base URL with a path of its own, which `..` would climb out of towards the token endpoint.
    const client = service.client({ baseUrl: `${service.url}/gw/` });
    await expect(client.request({ method: 'GET', path })).rejects.toBeInstanceOf(ConfigurationError);
    expect(service.requests).toHaveLength(0);
  });

  it('a path with @ or : stays a path under the base URL, host unchanged', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'other') return false;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(request.path);
      return true;
    });
    expect(await service.client().request({ method: 'GET', path: '/@evil.example/x' })).toBe('/@evil.example/x');
    expect(await service.client().request({ method: 'GET', path: '/a:b@evil.example' })).toBe('/a:b@evil.example');
  });

  it("getToken().withResponse(): the token endpoint's headers come without the client secret it echoed", async () => {
    const service = await start((request, res) => {
      if (request.route !== 'token') return false;
      res
        .writeHead(200, { 'content-type': 'application/json', 'x-echo': request.body, 'x-request-id': 'req-token' })
        .end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      return true;
    });
    const { response } = await service.client().tokens.getToken().withResponse();
    expect(response?.requestId).toBe('req-token');
    expect(response?.headers.get('x-echo')).toMatch(/client_secret=\S/);
    expect(response?.headers.get('x-echo')).not.toContain(encodeURIComponent(HOSTILE_SECRET).replaceAll('%20', '+'));
    expect(JSON.stringify([...(response?.headers ?? [])])).not.toContain(HOSTILE_SECRET);
  });
});
