/**
 * `.withResponse()`, `client.request`, middleware and `withOptions` over real HTTP against the
 * emulator on 127.0.0.1: the request ids the service logged, the headers that arrived.
 */
import { writeFile } from 'node:fs/promises';
import { type Middleware, type MiddlewareContext, PushClient } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { tempDir } from '../support/files.js';

let server: RunningEmulator;
beforeAll(async () => {
  server = await startEmulator();
});
afterAll(() => server.close());
beforeEach(() => server.mock.reset());

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

function logged(operation: string) {
  return server.mock.state.requests.filter((request) => request.operation === operation);
}

/** Adds `x-tenant` and records what it was told. */
function tenant(seen: MiddlewareContext[]): Middleware {
  return (request, next, context) => {
    seen.push(context);
    const headers = new Headers(request.headers);
    headers.set('x-tenant', 'acme');
    return next(new Request(request, { headers }));
  };
}

describe('over HTTP', () => {
  it('withResponse: each method sends once, and its headers hold the x-request-id the emulator logged', async () => {
    const client = clientFor(server);
    const token = await client.tokens.getToken().withResponse();
    expect(token.response?.headers).toBeInstanceOf(Headers);
    expect(token.response?.headers.get('x-request-id')).toBe(logged('token')[0]?.id);
    expect(token.response?.requestId).toBe(logged('token')[0]?.id);
    expect((await client.tokens.getToken().withResponse()).response).toBeNull();
    expect(logged('token')).toHaveLength(1);

    const urls = await client.uploads.getUploadUrls(server.mock.appId, ['a.csv']).withResponse();
    expect(Object.keys(urls.data)).toEqual(['a.csv']);
    expect(urls.response?.headers.get('x-request-id')).toBe(logged('upload-urls')[0]?.id);

    const batch = await client.finance.publishBatch(server.mock.appId, [record]).withResponse();
    expect(batch).toMatchObject({ data: { success: true }, response: { status: 200 } });
    expect(batch.response.headers.get('x-request-id')).toBe(logged('finance')[0]?.id);

    const raw = await client
      .request({
        method: 'GET',
        path: `/services/push/v1/customer/apps/${server.mock.appId}/upload`,
        query: { filenames: 'b.csv' },
      })
      .withResponse();
    expect(raw.response.headers.get('x-request-id')).toBe(logged('upload-urls')[1]?.id);
    expect(logged('upload-urls')).toHaveLength(2);
    expect(logged('finance')).toHaveLength(1);
  });

  it('client.request: the token has the client scopes by default, and exactly the given ones otherwise', async () => {
    const client = clientFor(server);
    const path = `/services/push/v1/customer/apps/${server.mock.appId}/upload`;
    await client.request({ method: 'GET', path, query: { filenames: 'a.csv' } });
    const clientScopes = [`${server.mock.scopeBase}/connector.write`];
    expect(server.mock.state.tokens.map((token) => token.scopes)).toEqual([clientScopes]);
    const scopes = [`${server.mock.scopeBase}/connector.write`, `${server.mock.scopeBase}/report.read`];
    await client.request({ method: 'GET', path, query: { filenames: 'a.csv' }, scopes });
    expect(server.mock.state.tokens.map((token) => [...token.scopes].sort())).toEqual([clientScopes, scopes.sort()]);
  });

  it('middleware runs on every request, the signed-address PUT included, and its header arrives there without Authorization', async () => {
    const seen: MiddlewareContext[] = [];
    const client = clientFor(server, { middleware: [tenant(seen)] });
    const files = await tempDir();
    try {
      const file = await files.write('users.csv', '');
      await writeFile(file, 'email\nada@example.com\n');
      const report = await client.uploads.upload(server.mock.appId, [file]);
      expect(report.files[0]?.status).toBe('uploaded');
    } finally {
      await files.cleanup();
    }
    expect(seen).toEqual([
      { operation: 'token', attempt: 1 },
      { operation: 'uploadUrls', attempt: 1 },
      { operation: 'upload', attempt: 1 },
    ]);
    const put = server.mock.state.requests.find((request) => request.method === 'PUT');
    expect(put?.headers['x-tenant']).toBe('acme');
    expect(put?.headers.authorization).toBeUndefined();
    expect(logged('upload-urls')[0]?.headers.authorization).toBe('Bearer [redacted]');
  });

  it('withOptions inherits middleware and hooks, and an override replaces them', async () => {
    const seen: MiddlewareContext[] = [];
    const requests: string[] = [];
    const original = clientFor(server, {
      middleware: [tenant(seen)],
      hooks: { request: (event) => requests.push(event.operation) },
    });
    await original.withOptions({ timeoutMs: 5_000 }).uploads.getUploadUrls(server.mock.appId, ['a.csv']);
    expect(seen.map((context) => context.operation)).toEqual(['token', 'uploadUrls']);
    expect(requests).toEqual(['token', 'upload-urls']);
    const bare = original.withOptions({ middleware: [], hooks: {} });
    await bare.uploads.getUploadUrls(server.mock.appId, ['b.csv']);
    expect(seen).toHaveLength(2);
    expect(requests).toHaveLength(2);
    expect(logged('upload-urls').map((request) => request.headers['x-tenant'])).toEqual(['acme', undefined]);
  });

  it('a PushClient built from the emulator options takes middleware too', async () => {
    const seen: MiddlewareContext[] = [];
    const client = new PushClient({ ...server.clientOptions(), middleware: [tenant(seen)] });
    await client.finance.publishBatch(server.mock.appId, [record]);
    expect(logged('finance')[0]?.headers['x-tenant']).toBe('acme');
  });
});
