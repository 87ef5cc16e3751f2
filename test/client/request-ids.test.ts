/** Every outcome the service answered names the answer's `x-request-id`, for support tickets. */
import { TokenError, UnprocessableEntityError, UploadError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const records = Array.from({ length: 5 }, (_, i) => ({
  created: '2025-01-31',
  amount: i + 1,
  currency: 'USD',
  identifier: `user${i}@example.com`,
  type: 'expense' as const,
  vendor: 'Acme',
}));

function setup(clientSecret = 'demo-secret-do-not-use-in-production') {
  const emulator = createPushApiHandler();
  const client = clientFor(
    {
      fetch: emulator.fetch,
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret,
    },
    { maxRetries: 0 },
  );
  return { emulator, client };
}

/** The id the emulator answered the n-th request of an operation with. */
function answered(emulator: ReturnType<typeof createPushApiHandler>, operation: string): string[] {
  return emulator.state.requests.filter((request) => request.operation === operation).map((request) => request.id);
}

describe('request ids', () => {
  it('each batch report carries the id of the answer that settled it, sent or failed', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 422, times: 1 });
    const report = await client.finance.publish('demo-app', records, { batchSize: 2, concurrency: 1 });
    const ids = answered(emulator, 'finance');
    expect(report.batches.map((batch) => [batch.status, batch.requestId])).toEqual([
      ['failed', ids[0]],
      ['sent', ids[1]],
      ['sent', ids[2]],
    ]);
    expect(report.batches[0]?.error).toBeInstanceOf(UnprocessableEntityError);
    const batchError = report.batches[0]?.error;
    expect(batchError instanceof UnprocessableEntityError && batchError.requestId).toBe(ids[0]);
    expect(emulator.state.deliveries('demo-app').map((delivery) => delivery.requestId)).toEqual(ids.slice(1));
  });

  it('each uploaded or failed file carries the id of its last PUT answer', async () => {
    const { emulator, client } = setup();
    emulator.faults.add({ match: { operation: 'upload', pathIncludes: 'bad.csv' }, status: 403 });
    const report = await client.uploads.upload('demo-app', [
      { name: 'good.csv', data: 'a\n' },
      { name: 'bad.csv', data: 'b\n' },
    ]);
    const puts = emulator.state.requests.filter((request) => request.operation === 'upload');
    const idOf = (name: string) => puts.filter((put) => put.path.endsWith(name)).at(-1)?.id;
    expect(report.files.map((file) => [file.name, file.status, file.requestId])).toEqual([
      ['good.csv', 'uploaded', idOf('good.csv')],
      ['bad.csv', 'failed', idOf('bad.csv')],
    ]);
    expect(idOf('bad.csv')).toBeTruthy();
    expect(report.files[1]?.error).toBeInstanceOf(UploadError);
    const fileError = report.files[1]?.error;
    expect(fileError instanceof UploadError && fileError.requestId).toBe(idOf('bad.csv'));
  });

  it('a file whose expired address could not be renewed carries the id of the refusal', async () => {
    const emulator = createPushApiHandler();
    const client = clientFor(
      {
        fetch: async (input, init) => {
          // The address expires before its PUT, and the request for a fresh one is refused.
          if (init?.method === 'PUT') {
            emulator.expireSignedUrls();
            emulator.faults.add({ match: { operation: 'upload-urls' }, status: 422 });
          }
          return emulator.fetch(input, init);
        },
        authUrl: 'https://auth.push.test',
        baseUrl: 'https://api.push.test',
        scopeBase: 'https://api.push.test',
        clientId: 'demo-client',
        clientSecret: 'demo-secret-do-not-use-in-production',
      },
      { maxRetries: 0 },
    );
    const report = await client.uploads
      .upload('demo-app', [{ name: 'a.csv', data: 'a\n' }])
      .catch((error: { report: Awaited<ReturnType<typeof client.uploads.upload>> }) => error.report);
    const refusal = emulator.state.requests.filter((request) => request.operation === 'upload-urls').at(-1);
    expect(refusal?.status).toBe(422);
    const [file] = report.files;
    expect(file?.status).toBe('failed');
    expect(file?.requestId).toBe(refusal?.id);
    expect(file?.error instanceof UploadError && file.error.requestId).toBe(refusal?.id);
  });

  it('a request id past 200 characters is cut, wherever it is carried', async () => {
    const emulator = createPushApiHandler();
    const hostileId = 'r'.repeat(15_000);
    const client = clientFor(
      {
        // A service that answers every request with an enormous x-request-id.
        fetch: async (input, init) => {
          const answer = await emulator.fetch(input, init);
          const headers = new Headers(answer.headers);
          headers.set('x-request-id', hostileId);
          return new Response(answer.body, { status: answer.status, headers });
        },
        authUrl: 'https://auth.push.test',
        baseUrl: 'https://api.push.test',
        scopeBase: 'https://api.push.test',
        clientId: 'demo-client',
        clientSecret: 'demo-secret-do-not-use-in-production',
      },
      { maxRetries: 0, hooks: { response: (event) => void seenIds.push(event.requestId) } },
    );
    const seenIds: (string | undefined)[] = [];
    emulator.faults.add({ match: { operation: 'finance' }, status: 422, times: 1 });
    const report = await client.finance.publish('demo-app', records, { batchSize: 3, concurrency: 1 });
    const batchError = report.batches[0]?.error;
    const carried = [
      ...report.batches.map((batch) => batch.requestId),
      batchError instanceof UnprocessableEntityError ? batchError.requestId : 'missing',
      ...seenIds,
    ];
    expect(carried).toHaveLength(2 + 1 + 3);
    for (const id of carried) {
      expect(id?.length).toBe(200);
      expect(hostileId.startsWith(id?.slice(0, -1) ?? '')).toBe(true);
    }
  });

  it('an answer the client cannot use (a 2xx it refuses) still names its request id', async () => {
    const lastId = (emulator: ReturnType<typeof createPushApiHandler>, operation: string) =>
      answered(emulator, operation).at(-1);

    const token = setup();
    token.emulator.faults.add({ match: { operation: 'token' }, status: 200, body: 'not json' });
    const tokenError = await token.client.tokens.getToken().catch((e: unknown) => e);
    expect(tokenError).toMatchObject({ name: 'TokenError', requestId: lastId(token.emulator, 'token') });

    const urls = setup();
    urls.emulator.faults.add({ match: { operation: 'upload-urls' }, status: 200, body: 'not json' });
    const notJson = await urls.client.uploads.getUploadUrls('demo-app', ['a.csv']).catch((e: unknown) => e);
    expect(notJson).toMatchObject({ name: 'PushError', requestId: lastId(urls.emulator, 'upload-urls') });
    urls.emulator.faults.add({ match: { operation: 'upload-urls' }, status: 200, body: { 'other.csv': 'x' } });
    const unasked = await urls.client.uploads.getUploadUrls('demo-app', ['a.csv']).catch((e: unknown) => e);
    expect(unasked).toMatchObject({ name: 'UploadError', requestId: lastId(urls.emulator, 'upload-urls') });

    const finance = setup();
    finance.emulator.faults.add({ match: { operation: 'finance' }, status: 200, body: 'x'.repeat(9 * 1024 * 1024) });
    const report = await finance.client.finance.publish('demo-app', records);
    const id = lastId(finance.emulator, 'finance');
    expect(report.batches[0]).toMatchObject({ status: 'unknown', requestId: id });
    expect(report.batches[0]?.error).toMatchObject({ name: 'ResponseTooLargeError', requestId: id });
  });

  it('a refused token request carries the id of the token answer', async () => {
    const { emulator, client } = setup('not-the-secret');
    const error = await client.tokens.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).requestId).toBe(answered(emulator, 'token')[0]);
    expect((error as TokenError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
