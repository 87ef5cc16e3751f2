/**
 * The address batches of one upload call, seen from the wire: sized by the request URL and by the
 * bytes of their files, the next asked for ahead of the workers.
 */
import type { FetchLike, UploadStreamInput } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it, vi } from 'vitest';
import { ADDRESS_BATCH_BYTES, MAX_UPLOAD_URLS_URL_LENGTH } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';
import { capturingFetch } from '../support/recorders.js';

const MiB = 1024 * 1024;

function isAddressRequest(url: URL): boolean {
  return url.pathname.endsWith('/upload');
}

/** The names of each address request, in the order they were sent. */
function addressGroups(urls: readonly string[]): string[][] {
  return urls
    .map((url) => new URL(url))
    .filter(isAddressRequest)
    .map((url) => url.searchParams.getAll('filenames'));
}

/**
 * Large files whose bytes are never read: the storage host is played by `answerPut`, which answers
 * without reading the body, so a batch of hundreds of MiB costs nothing. Every request is logged
 * in order (`address:<names>` or `put:<name>`).
 */
function heldStorage(mock: PushApiMock, answerPut: (name: string) => Promise<void> = async () => {}) {
  const events: string[] = [];
  const addressUrls: string[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (method === 'PUT' && url.href.startsWith(mock.uploadUrl)) {
      const name = decodeURIComponent(url.pathname.split('/').pop() ?? '');
      events.push(`put:${name}`);
      await answerPut(name);
      return new Response(null, { status: 200, headers: { etag: '"1"' } });
    }
    if (isAddressRequest(url)) {
      addressUrls.push(url.href);
      events.push(`address:${url.searchParams.getAll('filenames').join(',')}`);
    }
    return mock.fetch(input, init);
  };
  return { fetch, events, addressUrls };
}

/**
 * Time for an address request already decided to reach the fetch (it crosses a few async steps
 * first), before a check that none was made. Only such checks use it: on a slow machine they can
 * miss a request made too early, never fail a right one.
 */
function quiet(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

/** A stream input of `size` declared bytes that is never read. */
function unread(name: string, size: number): UploadStreamInput {
  return {
    name,
    size,
    stream: (async function* () {
      yield new Uint8Array(0);
    })(),
  };
}

describe('address batches of an upload', () => {
  it('asks for every address in one request when all names fit in one URL', async () => {
    const mock = createPushApiMock();
    const { fetch, seen } = capturingFetch(mock.fetch);
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch });
    const files = Array.from({ length: 300 }, (_, i) => ({ name: `file-${i}.csv`, data: `row ${i}\n` }));
    const report = await client.uploads.upload(mock.appId, files, { type: 'users' });
    const groups = addressGroups(seen.map((request) => request.url));
    expect(groups).toHaveLength(1);
    expect(groups[0]).toHaveLength(300);
    // Each file got its own address: the first and the last are stored under their names.
    expect(report.filesUploaded).toBe(300);
    expect(mock.state.file(mock.appId, 'file-0.csv')?.size).toBe('row 0\n'.length);
    expect(mock.state.file(mock.appId, 'file-299.csv')?.size).toBe('row 299\n'.length);
  });

  it('fills each request up to the URL limit, as getUploadUrls splits them', async () => {
    const mock = createPushApiMock();
    const { fetch, seen } = capturingFetch(mock.fetch);
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch });
    const names = Array.from({ length: 1000 }, (_, i) => `export-${i}-ü ${'x'.repeat(i % 40)}.csv`);
    await client.uploads.getUploadUrls(mock.appId, names, { type: 'users' });
    const asked = addressGroups(seen.map((request) => request.url));
    seen.length = 0;
    const report = await client.uploads.upload(
      mock.appId,
      names.map((name) => ({ name, data: '0123456789' })),
      { type: 'users', concurrency: 1000 },
    );
    expect(report.filesUploaded).toBe(1000);
    const batches = addressGroups(seen.map((request) => request.url));
    // The same groups as the request URLs getUploadUrls builds: one request per batch, none split again.
    const byFirstName = (a: string[], b: string[]) => names.indexOf(a[0] ?? '') - names.indexOf(b[0] ?? '');
    expect([...batches].sort(byFirstName)).toEqual(asked);
    expect(batches.length).toBeGreaterThan(2);
    for (const request of seen) expect(request.url.length).toBeLessThan(MAX_UPLOAD_URLS_URL_LENGTH);
  });

  it('starts a new batch where the files would pass the byte budget, and gives a larger file a batch of its own', async () => {
    const mock = createPushApiMock();
    const { fetch, events } = heldStorage(mock);
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch });
    const sizes = [300 * MiB, 200 * MiB, 100 * MiB, ADDRESS_BATCH_BYTES + 1, 1, 1];
    const report = await client.uploads.upload(
      mock.appId,
      sizes.map((size, i) => unread(`file-${i}.csv`, size)),
      { concurrency: 1, maxRetries: 0 },
    );
    expect(report.files).toHaveLength(6);
    expect(events.filter((event) => event.startsWith('address:'))).toEqual([
      'address:file-0.csv,file-1.csv',
      'address:file-2.csv',
      'address:file-3.csv',
      'address:file-4.csv,file-5.csv',
    ]);
  });

  it('keeps files that come to exactly the byte budget in one batch', async () => {
    const mock = createPushApiMock();
    const { fetch, events } = heldStorage(mock);
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch });
    const sizes = [ADDRESS_BATCH_BYTES - 1, 1, 1];
    await client.uploads.upload(
      mock.appId,
      sizes.map((size, i) => unread(`file-${i}.csv`, size)),
      { concurrency: 1, maxRetries: 0 },
    );
    expect(events.filter((event) => event.startsWith('address:'))).toEqual([
      'address:file-0.csv,file-1.csv',
      'address:file-2.csv',
    ]);
  });

  it('asks for the next batch when as many files of this one are left as there are workers, not before', async () => {
    const mock = createPushApiMock();
    const held = new Map<string, () => void>();
    const putSeen = new Map<string, () => void>();
    const putStarted = (name: string) =>
      new Promise<void>((resolve) => {
        if (events.includes(`put:${name}`)) resolve();
        else putSeen.set(name, resolve);
      });
    const { fetch, events } = heldStorage(
      mock,
      (name) =>
        new Promise<void>((resolve) => {
          held.set(name, resolve);
          putSeen.get(name)?.();
        }),
    );
    const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch });
    const release = (i: number) => held.get(`file-${i}.csv`)?.();
    const addressRequests = () => events.filter((event) => event.startsWith('address:')).length;
    // Batches of five files (500 MiB): [0..4], [5..9].
    const run = client.uploads.upload(
      mock.appId,
      Array.from({ length: 10 }, (_, i) => unread(`file-${i}.csv`, 100 * MiB)),
      { concurrency: 2, adaptive: false, maxRetries: 0 },
    );
    await Promise.all([putStarted('file-0.csv'), putStarted('file-1.csv')]);
    await quiet();
    expect(addressRequests()).toBe(1);
    // File 2 is taken: three files of the batch are left, more than the two workers.
    release(0);
    await putStarted('file-2.csv');
    await quiet();
    expect(addressRequests()).toBe(1);
    // File 3 is taken: two are left, so the next batch is asked for while both workers are busy.
    release(1);
    await putStarted('file-3.csv');
    // Waited for rather than given a fixed time: on a loaded machine the request may take longer.
    await vi.waitFor(() => expect(addressRequests()).toBe(2), { timeout: 5_000, interval: 5 });
    expect(events.filter((event) => event.startsWith('address:'))).toEqual([
      'address:file-0.csv,file-1.csv,file-2.csv,file-3.csv,file-4.csv',
      'address:file-5.csv,file-6.csv,file-7.csv,file-8.csv,file-9.csv',
    ]);
    expect(events).not.toContain('put:file-4.csv');
    for (let i = 2; i < 10; i++) {
      release(i);
      if (i + 2 < 10) await putStarted(`file-${i + 2}.csv`);
    }
    const report = await run;
    expect(report.files).toHaveLength(10);
    expect(addressRequests()).toBe(2);
  });
});
