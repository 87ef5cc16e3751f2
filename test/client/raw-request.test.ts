/** `client.request`: any data API path, through the same transport as the wrapped operations. */
import { ConfigurationError, NotFoundError, PermissionDeniedError, UnprocessableEntityError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { recordingLogger } from '../support/recorders.js';

// The wire form: `created` is epoch milliseconds (the SDK converts dates; a raw request does not).
const record = {
  created: Date.UTC(2025, 0, 31),
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense',
  vendor: 'Acme',
};

function setup(baseUrl = 'https://api.push.test', maxRetries = 2) {
  const emulator = createPushApiHandler();
  const seen: Request[] = [];
  const client = clientFor(
    {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        seen.push(request.clone());
        // A base URL with a path of its own reaches the emulator with that prefix removed.
        const url = new URL(request.url);
        if (url.pathname.startsWith('/gw/')) url.pathname = url.pathname.slice(3);
        return emulator.fetch(new Request(url, request));
      },
      authUrl: 'https://auth.push.test',
      baseUrl,
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    { maxRetries, backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 },
  );
  return { emulator, client, seen };
}

function sent(emulator: ReturnType<typeof createPushApiHandler>, operation: string) {
  return emulator.state.requests.filter((request) => request.operation === operation);
}

const uploadPath = '/services/push/v1/customer/apps/demo-app/upload';
const financePath = '/services/push/v1/customer/apps/demo-app/finance';

describe('client.request', () => {
  it('GETs a path under the base URL with repeated query keys and resolves to the parsed JSON', async () => {
    const { client, seen } = setup();
    const data = await client.request<Record<string, string>>({
      method: 'GET',
      path: uploadPath,
      query: { filenames: ['a.csv', 'b.csv'], type: 'users', skipped: undefined },
    });
    expect(Object.keys(data).sort()).toEqual(['a.csv', 'b.csv']);
    const get = seen.find((request) => request.method === 'GET');
    expect(get?.url).toBe(`https://api.push.test${uploadPath}?filenames=a.csv&filenames=b.csv&type=users`);
    expect(get?.headers.get('authorization')).toMatch(/^Bearer /);
  });

  it('appends the path to the base URL own path', async () => {
    const { client, seen } = setup('https://api.push.test/gw/');
    const { response } = await client
      .request({ method: 'GET', path: uploadPath.slice(1), query: { filenames: 'a.csv' } })
      .withResponse();
    expect(response.status).toBe(200);
    expect(seen.find((request) => request.method === 'GET')?.url).toBe(
      `https://api.push.test/gw${uploadPath}?filenames=a.csv`,
    );
  });

  it('POSTs a JSON body, and withResponse gives the request id of that one POST', async () => {
    const { emulator, client, seen } = setup();
    const { data, response } = await client
      .request({ method: 'POST', path: financePath, body: { records: [record] } })
      .withResponse();
    const posts = sent(emulator, 'finance');
    expect(posts).toHaveLength(1);
    expect(response.requestId).toBe(posts[0]?.id);
    expect(data).toEqual(expect.anything());
    expect(emulator.state.deliveries('demo-app')).toHaveLength(1);
    const post = seen.find((request) => request.method === 'POST' && request.url.includes('/finance'));
    expect(post?.headers.get('content-type')).toBe('application/json');
  });

  it('maps an error status to its typed error, with the request id', async () => {
    const { emulator, client } = setup();
    const error = await client
      .request({ method: 'GET', path: '/services/push/v1/customer/apps/nobody/upload', query: { filenames: 'a' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).requestId).toBe(sent(emulator, 'upload-urls').at(-1)?.id);
  });

  it('gets a token for exactly the given scopes; a token without connector.write is refused by the service', async () => {
    const { emulator, client } = setup();
    const scope = `${emulator.scopeBase}/report.read`;
    const error = await client
      .request({ method: 'GET', path: uploadPath, query: { filenames: 'a.csv' }, scopes: [scope] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PermissionDeniedError);
    const tokens = emulator.state.tokens;
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.scopes).toEqual([scope]);
    // The client's own scopes still work, with a token of their own.
    await client.request({ method: 'GET', path: uploadPath, query: { filenames: 'a.csv' } });
    expect(emulator.state.tokens).toHaveLength(2);
  });

  it('refreshes a revoked token once on a 401 and re-sends', async () => {
    const { emulator, client } = setup();
    await client.tokens.getToken();
    emulator.faults.add({ match: { operation: 'upload-urls' }, status: 401, times: 1 });
    await client.request({ method: 'GET', path: uploadPath, query: { filenames: 'a.csv' } });
    expect(sent(emulator, 'token')).toHaveLength(2);
    expect(sent(emulator, 'upload-urls')).toHaveLength(2);
  });

  it('retries a GET after a 500, and never re-sends a POST whose outcome is unknown', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'upload-urls' }, status: 500, times: 1 });
    await client.request({ method: 'GET', path: uploadPath, query: { filenames: 'a.csv' } });
    expect(sent(emulator, 'upload-urls')).toHaveLength(2);
    emulator.faults.add({ match: { operation: 'finance' }, status: 500, times: 1 });
    await expect(
      client.request({ method: 'POST', path: financePath, body: { records: [record] } }),
    ).rejects.toMatchObject({ status: 500 });
    expect(sent(emulator, 'finance')).toHaveLength(1);
  });

  it('re-sends a POST after a 503, which says the service did not take it', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    await client.request({ method: 'POST', path: financePath, body: { records: [record] } });
    expect(sent(emulator, 'finance')).toHaveLength(2);
    expect(emulator.state.deliveries('demo-app')).toHaveLength(1);
  });

  it('a 422 answer becomes an UnprocessableEntityError', async () => {
    const { client } = setup();
    await expect(
      client.request({ method: 'POST', path: financePath, body: { records: [{ ...record, amount: 'x' }] } }),
    ).rejects.toBeInstanceOf(UnprocessableEntityError);
  });

  it.each([
    'https://elsewhere.test/x',
    '//elsewhere.test/x',
    '/a/../../x',
    '/a/%2e%2e/x',
    '/a%2fb',
    '/a?x=1',
    '/a#f',
    '/a\\b',
    '/a b',
    // `..;` is `..` to Tomcat, Spring and the gateways in front of them; NUL ends a path for some.
    '/..;/admin',
    '/a/%2e%2e;x/b',
    '/a/..%3B/b',
    '/.;/x',
    '/a%00/b',
    '/..%0a/x',
  ])('refuses the path %j before sending anything', async (path) => {
    const { emulator, client } = setup();
    await expect(client.request({ method: 'GET', path })).rejects.toBeInstanceOf(ConfigurationError);
    expect(emulator.state.requests).toHaveLength(0);
  });

  it('refuses an unknown method and a transport-owned header', async () => {
    const { client } = setup();
    await expect(client.request({ method: 'TRACE' as 'GET', path: uploadPath })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
    await expect(
      client.request({ method: 'GET', path: uploadPath, headers: { authorization: 'Bearer stolen' } }),
    ).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('refuses a body JSON would silently turn into something else (a Blob as {}), before sending anything', async () => {
    const { client, emulator, seen } = setup();
    const bodies: unknown[] = [
      new Blob(['receipt']),
      new Uint8Array([1, 2]),
      Buffer.from('receipt'),
      new ArrayBuffer(4),
      new FormData(),
      new URLSearchParams('a=1'),
      new ReadableStream(),
      new Map([['a', 1]]),
      new Set([1]),
    ];
    for (const body of bodies) {
      const error = await client.request({ method: 'PUT', path: uploadPath, body }).catch((caught: unknown) => caught);
      expect(error, String(body)).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(/^request: body is a \w+/);
    }
    expect(seen).toHaveLength(0);
    expect(emulator.state.requests).toHaveLength(0);
    // An object that only holds such a value is the caller's JSON, and goes as JSON says.
    await client.request({ method: 'PUT', path: uploadPath, body: { at: new Date(0) } }).catch(() => undefined);
    expect(await seen.at(-1)?.text()).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it('is told to hooks and logs as operation request, with the query and the token left out', async () => {
    const emulator = createPushApiHandler();
    const logger = recordingLogger();
    const events: { operation: string; url: string }[] = [];
    const client = clientFor(
      {
        fetch: emulator.fetch,
        authUrl: 'https://auth.push.test',
        baseUrl: 'https://api.push.test',
        scopeBase: 'https://api.push.test',
        clientId: 'demo-client',
        clientSecret: 'demo-secret-do-not-use-in-production',
      },
      { logger, logLevel: 'debug', hooks: { request: (event) => events.push(event) } },
    );
    await client.request({ method: 'GET', path: uploadPath, query: { filenames: 'secret-name.csv' } });
    const token = (await client.tokens.getToken()).accessToken;
    expect(events.map((event) => [event.operation, event.url])).toEqual([
      ['token', 'https://auth.push.test/oauth2/token'],
      ['request', `https://api.push.test${uploadPath}`],
    ]);
    const logged = JSON.stringify(logger.lines);
    expect(logged).toContain('"operation":"request"');
    expect(logged).not.toContain('secret-name.csv');
    expect(logged).not.toContain(token);
  });
});
