/**
 * What a middleware cannot do: move a request to another origin (loopback included), change its
 * method, move a request that carries the client secret, see a secret an answer echoes, or take
 * the place of the SDK's credentials; and the transport's redirect rules still apply after it.
 */
import {
  type Middleware,
  type PublishReport,
  PushError,
  RedirectError,
  ResponseTooLargeError,
  UnprocessableEntityError,
} from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { HOSTILE_SECRET, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';

const SECRET = 'demo-secret-do-not-use-in-production';
const serve = useLoopbackServers();
const startHostile = useHostileService();

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

type Answer = (request: Request) => Response | undefined;

/**
 * A client of the emulator at https://api.push.test; `answer` may play the service instead, and
 * other hosts (a loopback server) are reached over real HTTP.
 */
function setup(
  middleware: Middleware[],
  options: { answer?: Answer; tokenAuthMethod?: 'client_secret_post' | 'client_secret_basic' } = {},
) {
  const emulator = createPushApiHandler();
  const wire: Request[] = [];
  const client = clientFor(
    {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        wire.push(request.clone());
        if (!new URL(request.url).hostname.endsWith('push.test')) return fetch(request);
        return options.answer?.(request) ?? emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: SECRET,
    },
    {
      middleware,
      tokenAuthMethod: options.tokenAuthMethod ?? 'client_secret_post',
      maxRetries: 2,
      backoff: { initialDelayMs: 0, maxDelayMs: 0 },
      maxRetryAfterMs: 0,
    },
  );
  const sent = (operation: string) => emulator.state.requests.filter((request) => request.operation === operation);
  return { emulator, client, wire, sent };
}

const onlyFor =
  (operation: string, change: (request: Request) => Request): Middleware =>
  (request, next, context) =>
    next(context.operation === operation ? change(request) : request);

describe('middleware and the transport rules', () => {
  it('cannot send a data request to loopback: refused, the loopback server gets nothing, no token leaves', async () => {
    const received: string[] = [];
    const local = await serve((req, res) => {
      received.push(String(req.headers.authorization));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
    });
    const { client, sent } = setup([onlyFor('finance', (request) => new Request(`${local}/steal`, request))]);
    const error = await client.finance.publishBatch('demo-app', [record]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushError);
    expect((error as PushError).message).toMatch(/another origin/);
    expect(received).toEqual([]);
    // Final: not retried, not "maybe sent".
    expect(sent('finance')).toHaveLength(0);
  });

  it('cannot change the method', async () => {
    const { client, sent } = setup([
      onlyFor('uploadUrls', (request) => new Request(request.url, { method: 'DELETE', headers: request.headers })),
    ]);
    await expect(client.uploads.getUploadUrls('demo-app', ['a.csv'])).rejects.toThrow(/method/);
    expect(sent('upload-urls')).toHaveLength(0);
  });

  it.each(['client_secret_post', 'client_secret_basic'] as const)(
    'cannot move the token request, which carries the secret, even on its own host (%s)',
    async (tokenAuthMethod) => {
      const { client, wire } = setup(
        [onlyFor('token', (request) => new Request(request.url.replace('/oauth2/token', '/echo'), request))],
        { tokenAuthMethod },
      );
      await expect(client.tokens.getToken()).rejects.toThrow(/client secret/);
      expect(wire).toHaveLength(0);
    },
  );

  it('may move a bearer request within the API origin, which keeps its bearer token', async () => {
    const { client, sent } = setup([
      onlyFor('request', (request) => {
        const url = new URL(request.url);
        url.searchParams.append('filenames', 'b.csv');
        return new Request(url, request);
      }),
    ]);
    const urls = await client.request<Record<string, string>>({
      method: 'GET',
      path: '/services/push/v1/customer/apps/demo-app/upload',
      query: { filenames: 'a.csv' },
    });
    expect(Object.keys(urls).sort()).toEqual(['a.csv', 'b.csv']);
    expect(sent('upload-urls')[0]?.headers.authorization).toBe('Bearer [redacted]');
  });

  it('cannot replace the SDK credentials: its own Authorization is overwritten by the bearer token', async () => {
    const { client, wire } = setup([
      (request, next, context) => {
        if (context.operation === 'token') return next(request);
        const headers = new Headers(request.headers);
        headers.set('authorization', 'Bearer from-middleware');
        return next(new Request(request, { headers }));
      },
    ]);
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    const get = wire.find((request) => request.method === 'GET');
    expect(get?.headers.get('authorization')).toMatch(/^Bearer /);
    expect(get?.headers.get('authorization')).not.toBe('Bearer from-middleware');
  });

  it('a cross-origin redirect after it: its headers follow, Authorization does not', async () => {
    let redirected = false;
    const { client, wire } = setup(
      [
        (request, next) => {
          const headers = new Headers(request.headers);
          headers.set('x-tenant', 'acme');
          return next(new Request(request, { headers }));
        },
      ],
      {
        answer: (request) => {
          const url = new URL(request.url);
          if (url.hostname === 'api.push.test' && request.method === 'GET' && !redirected) {
            redirected = true;
            return new Response(null, {
              status: 307,
              headers: { location: `https://mirror.push.test${url.pathname}` },
            });
          }
          if (url.hostname === 'mirror.push.test') {
            return Response.json({ 'a.csv': 'https://uploads.push.test/files/a.csv?sig=1' });
          }
          return undefined;
        },
      },
    );
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    const mirror = wire.find((request) => request.url.startsWith('https://mirror.push.test/'));
    expect(mirror?.headers.get('x-tenant')).toBe('acme');
    expect(mirror?.headers.get('authorization')).toBeNull();
  });

  it('a redirect to loopback after it is refused by the network-scope rule', async () => {
    const received: string[] = [];
    const local = await serve((req, res) => {
      received.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const { client } = setup([(request, next) => next(request)], {
      answer: (request) =>
        request.method === 'GET' && new URL(request.url).hostname === 'api.push.test'
          ? new Response(null, { status: 307, headers: { location: `${local}/x` } })
          : undefined,
    });
    await expect(client.uploads.getUploadUrls('demo-app', ['a.csv'])).rejects.toBeInstanceOf(RedirectError);
    expect(received).toEqual([]);
  });

  it('a middleware that throws before sending fails the batch: not retried, not "outcome unknown"', async () => {
    let calls = 0;
    const { client, sent } = setup([
      (request, next, context) => {
        if (context.operation !== 'finance') return next(request);
        calls++;
        throw new Error('gateway signer unavailable');
      },
    ]);
    const outcome = await client.finance.publish('demo-app', [record]).catch((caught: unknown) => caught);
    const report = (
      outcome instanceof PushError ? (outcome as PushError & { report: PublishReport }).report : outcome
    ) as PublishReport | undefined;
    expect(calls).toBe(1);
    expect(sent('finance')).toHaveLength(0);
    expect(report?.recordsFailed).toBe(1);
    expect(report?.recordsUnknown).toBe(0);
  });
});

describe('what a middleware hands back', () => {
  it('an answer of its own past the size cap is a ResponseTooLargeError, as from the service', async () => {
    const { client, sent } = setup([
      async (request, next, context) =>
        context.operation === 'uploadUrls'
          ? new Response('x'.repeat(9 * 1024 * 1024), { headers: { 'content-type': 'application/json' } })
          : next(request),
    ]);
    await expect(client.uploads.getUploadUrls('demo-app', ['a.csv'])).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect(sent('upload-urls')).toHaveLength(0);
  });

  it('something other than a Response is a PushError, and nothing is sent', async () => {
    const { client, sent } = setup([
      ((request, next, context) =>
        context.operation === 'finance' ? Promise.resolve({ status: 200 }) : next(request)) as Middleware,
    ]);
    await expect(client.finance.publishBatch('demo-app', [record])).rejects.toThrow(/returned no Response/);
    expect(sent('finance')).toHaveLength(0);
  });

  it('a next kept and called after the request settled sends nothing', async () => {
    let kept: ((request: Request) => Promise<Response>) | undefined;
    let keptRequest: Request | undefined;
    const { client, sent } = setup([
      (request, next, context) => {
        if (context.operation === 'finance') {
          kept = next;
          keptRequest = request.clone();
        }
        return next(request);
      },
    ]);
    await client.finance.publishBatch('demo-app', [record]);
    expect(sent('finance')).toHaveLength(1);
    await expect(kept?.(keptRequest as Request)).rejects.toThrow(/after the finance request had settled/);
    expect(sent('finance')).toHaveLength(1);
  });
});

describe('middleware and answers that echo secrets', () => {
  it('sees the token answer and data answers with the client secret and the bearer token scrubbed', async () => {
    const service = await startHostile((request, res) => {
      const echo = `${request.body} ${request.authorization ?? ''}`;
      if (request.route === 'token') {
        res
          .writeHead(200, { 'content-type': 'application/json', 'x-echo': encodeURIComponent(echo) })
          .end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600, echo }));
        return true;
      }
      if (request.path === '/echo') {
        res.writeHead(200, { 'content-type': 'text/plain', 'x-echo': encodeURIComponent(echo) }).end(echo);
        return true;
      }
      if (request.path === '/echo-error') {
        res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ message: echo }));
        return true;
      }
      return false;
    });
    const seen: string[] = [];
    const logging: Middleware = async (request, next) => {
      const response = await next(request);
      seen.push(`${JSON.stringify(Object.fromEntries(response.headers))} ${await response.clone().text()}`);
      return response;
    };
    const client = service.client({ middleware: [logging] });
    const data = await client.request({ method: 'GET', path: '/echo' });
    await expect(client.request({ method: 'GET', path: '/echo-error' })).rejects.toBeInstanceOf(
      UnprocessableEntityError,
    );
    expect(seen).toHaveLength(3);
    // The service did echo: the secret's place is marked, not empty.
    expect(seen[0]).toMatch(/client_secret=\S/);
    for (const text of [...seen, String(data)]) {
      expect(text).not.toContain(HOSTILE_SECRET);
      expect(text).not.toContain(encodeURIComponent(HOSTILE_SECRET));
    }
    // The token answer shows a marker where the new token is; a data answer's echo of it is scrubbed.
    expect(seen[0]).toMatch(/"access_token":"concealed-access-token-/);
    for (const text of seen) expect(text).not.toContain(HOSTILE_TOKEN);
  });
});

describe('middleware and the token the token endpoint hands out', () => {
  const logging =
    (seen: string[], rebuild: (response: Response) => Response | Promise<Response>): Middleware =>
    async (request, next) => {
      const response = await next(request);
      seen.push(`${JSON.stringify(Object.fromEntries(response.headers))} ${await response.clone().text()}`);
      return rebuild(response);
    };

  const rebuilds: [string, (response: Response) => Response | Promise<Response>][] = [
    ['the answer it was given', (response) => response],
    ['a clone', (response) => response.clone()],
    ['a new Response of its body', async (response) => new Response(await response.text(), response)],
  ];
  for (const [name, rebuild] of rebuilds) {
    it(`never sees the access token, and the client still uses it when it returns ${name}`, async () => {
      const seen: string[] = [];
      const { client, wire, sent } = setup([logging(seen, rebuild)]);
      await client.finance.publishBatch('demo-app', [record]);
      const { accessToken } = await client.tokens.getToken();
      expect(accessToken).not.toMatch(/concealed/);
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const text of seen) expect(text).not.toContain(accessToken);
      expect(seen[0]).toMatch(/"access_token":"concealed-access-token-[0-9a-f-]+"/);
      const post = wire.find((request) => request.method === 'POST' && request.url.includes('/finance'));
      expect(post?.headers.get('authorization')).toBe(`Bearer ${accessToken}`);
      expect(sent('finance')).toHaveLength(1);
    });
  }

  it('a token answer the middleware makes itself is used as it is', async () => {
    const own: Middleware = async (request, next, context) =>
      context.operation === 'token'
        ? Response.json({ access_token: 'own-token', token_type: 'Bearer', expires_in: 3600 })
        : next(request);
    const { client } = setup([own]);
    expect((await client.tokens.getToken()).accessToken).toBe('own-token');
  });
});
