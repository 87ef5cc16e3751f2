/** Every outcome the service answered names the answer's `x-request-id`, for support tickets. */
import { TokenError, UnprocessableEntityError, UploadError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { emulatorClient } from '../support/clients.js';

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
  const client = emulatorClient(
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

  it('a refused token request carries the id of the token answer', async () => {
    const { emulator, client } = setup('not-the-secret');
    const error = await client.tokens.getToken().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).requestId).toBe(answered(emulator, 'token')[0]);
    expect((error as TokenError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
