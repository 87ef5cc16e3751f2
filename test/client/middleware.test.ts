/** Middleware: sees each attempt's request before credentials, may replace it, and knows the operation. */
import { writeFile } from 'node:fs/promises';
import { type Middleware, type MiddlewareContext, PushError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { tempDir } from '../support/files.js';

const SECRET = 'demo-secret-do-not-use-in-production';

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

interface Seen {
  context: MiddlewareContext;
  url: string;
  headers: Record<string, string>;
  body: string;
}

function setup(
  middleware: Middleware[],
  tokenAuthMethod: 'client_secret_post' | 'client_secret_basic' = 'client_secret_post',
) {
  const emulator = createPushApiHandler();
  const wire: Request[] = [];
  const client = clientFor(
    {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        wire.push(request.clone());
        return emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: SECRET,
    },
    { tokenAuthMethod, middleware, maxRetries: 2, backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 },
  );
  return { emulator, client, wire };
}

/** A middleware that records what it saw (its body read from a clone) and adds a header. */
function recorder(seen: Seen[]): Middleware {
  return async (request, next, context) => {
    const body = request.body === null ? '' : await request.clone().text();
    seen.push({ context, url: request.url, headers: Object.fromEntries(request.headers), body });
    const headers = new Headers(request.headers);
    headers.set('x-tenant', 'acme');
    return next(new Request(request, { headers }));
  };
}

describe('middleware', () => {
  it.each(['client_secret_post', 'client_secret_basic'] as const)(
    'never sees the client secret or the token, which are added after it (%s)',
    async (method) => {
      const seen: Seen[] = [];
      const { client, wire } = setup([recorder(seen)], method);
      await client.finance.publishBatch('demo-app', [record]);
      expect(seen.map((item) => item.context)).toEqual([
        { operation: 'token', attempt: 1 },
        { operation: 'finance', attempt: 1 },
      ]);
      const everything = JSON.stringify(seen);
      expect(everything).not.toContain(SECRET);
      expect(everything).not.toMatch(/authorization/i);
      // The wire still carried the credentials, and the header the middleware added.
      const tokenRequest = wire[0];
      const form = new URLSearchParams(await tokenRequest?.clone().text());
      if (method === 'client_secret_post') expect(form.get('client_secret')).toBe(SECRET);
      else expect(tokenRequest?.headers.get('authorization')).toMatch(/^Basic /);
      expect(form.get('grant_type')).toBe('client_credentials');
      expect(wire[1]?.headers.get('authorization')).toMatch(/^Bearer /);
      expect(wire.every((request) => request.headers.get('x-tenant') === 'acme')).toBe(true);
    },
  );

  it('runs on every attempt, numbered from 1', async () => {
    const seen: Seen[] = [];
    const { client, emulator } = setup([recorder(seen)]);
    emulator.faults.add({ match: { operation: 'upload-urls' }, status: 503, times: 2 });
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    expect(seen.filter((item) => item.context.operation === 'uploadUrls').map((item) => item.context.attempt)).toEqual([
      1, 2, 3,
    ]);
  });

  it('runs on the signed-address PUT as operation upload; its headers go there, Authorization never does', async () => {
    const seen: Seen[] = [];
    const { client, wire } = setup([recorder(seen)]);
    const files = await tempDir();
    try {
      const file = await files.write('users.csv', 'email\nada@example.com\n');
      await writeFile(file, 'email\nada@example.com\n');
      const report = await client.uploads.upload('demo-app', [file]);
      expect(report.files[0]?.status).toBe('uploaded');
    } finally {
      await files.cleanup();
    }
    const put = seen.find((item) => item.context.operation === 'upload');
    expect(put?.context.attempt).toBe(1);
    expect(put?.url).toMatch(/^https:\/\/uploads\.push\.test\//);
    const wirePut = wire.find((request) => request.method === 'PUT');
    expect(wirePut?.headers.get('x-tenant')).toBe('acme');
    expect(wirePut?.headers.get('authorization')).toBeNull();
  });

  it('may answer without calling next, and the answer goes through the usual error mapping', async () => {
    const { client, emulator } = setup([
      async (request, next, context) =>
        context.operation === 'finance'
          ? new Response(JSON.stringify({ code: '422', message: 'refused locally', success: false }), {
              status: 422,
              headers: { 'content-type': 'application/json' },
            })
          : next(request),
    ]);
    await expect(client.finance.publishBatch('demo-app', [record])).rejects.toMatchObject({ status: 422 });
    expect(emulator.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
  });

  it('cannot send a request to another origin: nothing leaves, and no credential goes there', async () => {
    const { client, wire } = setup([
      async (request, next) => next(new Request(request.url.replace('api.push.test', 'evil.test'), request)),
    ]);
    await expect(client.uploads.getUploadUrls('demo-app', ['a.csv'])).rejects.toBeInstanceOf(PushError);
    expect(wire.some((request) => request.url.includes('evil.test'))).toBe(false);
  });

  it('a middleware that never settles ends with the attempt timeout', async () => {
    const { client } = setup([
      (request, next, context) => (context.operation === 'finance' ? new Promise(() => {}) : next(request)),
    ]);
    await expect(
      client.finance.publishBatch('demo-app', [record], { timeoutMs: 50, maxRetries: 0 }),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('is inherited by withOptions clients', async () => {
    const seen: Seen[] = [];
    const { client } = setup([recorder(seen)]);
    await client.withOptions({ timeoutMs: 5_000 }).uploads.getUploadUrls('demo-app', ['a.csv']);
    expect(seen.map((item) => item.context.operation)).toContain('uploadUrls');
  });
});
