/** What the uploader checks before sending anything, and how it asks for addresses. */
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import type { PushClient } from 'push-api-client';
import { ConfigurationError, NotFoundError, UploadError } from 'push-api-client';
import { createPushApiMock, type PushApiMock } from 'push-api-client/testing/msw';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';

const mock: PushApiMock = createPushApiMock({ requireContentLength: true });
const server = setupServer(...mock.handlers);
let client: PushClient;
let dir: string;
const sentUrls: string[] = [];

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  dir = await mkdtemp(path.join(tmpdir(), 'push-uploads-input-'));
  client = clientFor(mock.clientOptions(), {
    fetch: (input, init) => {
      sentUrls.push(input instanceof Request ? input.url : String(input));
      return globalThis.fetch(input, init);
    },
  });
});
afterEach(() => {
  mock.reset();
  server.resetHandlers();
  sentUrls.length = 0;
});
afterAll(async () => {
  server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('checks before any request', () => {
  it('refuses a file over 5 GiB without sending anything (sparse file)', async () => {
    const big = path.join(dir, 'huge.bin');
    await writeFile(big, '');
    await truncate(big, MAX_UPLOAD_BYTES + 1);
    await expect(client.uploads.upload(mock.appId, [{ name: 'small.csv', data: 'a' }, big])).rejects.toThrow(
      /"huge.bin" is 5368709121 bytes; the limit for one upload is 5368709120 bytes/,
    );
    expect(sentUrls).toEqual([]);
  });

  it.each([
    ['an empty name', [{ name: '', data: 'x' }], /must not be empty/],
    ['a path separator', [{ name: 'a/b.csv', data: 'x' }], /path separator/],
    ['a backslash', [{ name: 'a\\b.csv', data: 'x' }], /path separator/],
    ['a control character', [{ name: 'a\nb.csv', data: 'x' }], /control characters/],
    [
      'a duplicate name',
      [
        { name: 'a.csv', data: 'x' },
        { name: 'a.csv', data: 'y' },
      ],
      /Duplicate file name/,
    ],
    ['a missing file', ['/nonexistent/push-api-client/a.csv'], /Cannot read/],
  ])('refuses %s with an UploadError and sends nothing', async (_, inputs, message) => {
    const pending = client.uploads.upload(mock.appId, inputs);
    await expect(pending).rejects.toBeInstanceOf(UploadError);
    await expect(pending).rejects.toThrow(message);
    expect(sentUrls).toEqual([]);
  });

  it('refuses an empty app id and a bad concurrency with a ConfigurationError', async () => {
    await expect(client.uploads.upload('', [{ name: 'a', data: 'x' }])).rejects.toBeInstanceOf(ConfigurationError);
    await expect(client.uploads.getUploadUrls('', ['a'])).rejects.toBeInstanceOf(ConfigurationError);
    await expect(
      client.uploads.upload(mock.appId, [{ name: 'a', data: 'x' }], { concurrency: 0 }),
    ).rejects.toBeInstanceOf(ConfigurationError);
    expect(sentUrls).toEqual([]);
  });

  it('sends nothing for an empty list', async () => {
    expect(await client.uploads.getUploadUrls(mock.appId, [])).toEqual({});
    expect(await client.uploads.upload(mock.appId, [])).toMatchObject({
      files: [],
      filesUploaded: 0,
      filesFailed: 0,
      bytesUploaded: 0,
    });
    expect(sentUrls).toEqual([]);
  });
});

describe('getUploadUrls', () => {
  const addressRequests = () => sentUrls.filter((url) => new URL(url).pathname.endsWith('/upload'));

  it('sends repeated filenames= and the type, and returns one address per name', async () => {
    const urls = await client.uploads.getUploadUrls(mock.appId, ['a.csv', 'b c.csv'], { type: 'users' });
    expect(Object.keys(urls)).toEqual(['a.csv', 'b c.csv']);
    const [request] = addressRequests();
    expect(new URL(request ?? '').search).toBe('?filenames=a.csv&filenames=b+c.csv&type=users');
  });

  it('splits a long list over several requests, each URL under 8 KB, and every name gets its address', async () => {
    const names = Array.from({ length: 1500 }, (_, i) => `monthly-export-${i}-über.csv`);
    const urls = await client.uploads.getUploadUrls(mock.appId, names);
    const requests = addressRequests();
    expect(requests.length).toBeGreaterThan(1);
    for (const url of requests) expect(url.length).toBeLessThan(8 * 1024);
    expect(Object.keys(urls).sort()).toEqual([...names].sort());
  });

  it('encodes the app id so that it cannot change the path', async () => {
    await expect(client.uploads.getUploadUrls('../../admin', ['a.csv'])).rejects.toBeInstanceOf(NotFoundError);
    expect(new URL(addressRequests()[0] ?? '').pathname).toBe('/services/push/v1/customer/apps/..%2F..%2Fadmin/upload');
  });

  it('passes the type on to the stored files', async () => {
    await client.uploads.upload(mock.appId, [{ name: 'c.csv', data: 'x' }], { type: 'contracts' });
    expect(mock.state.file(mock.appId, 'c.csv')?.type).toBe('contracts');
  });

  it.each([
    [
      'an address for a name that was not asked for',
      { 'a.csv': 'https://uploads.push.test/x', 'evil.csv': 'https://x.test/' },
      /not requested/,
    ],
    ['no address for a name', {}, /no address for "a.csv"/],
    ['a relative address', { 'a.csv': '/a.csv' }, /not an absolute URL/],
    ['plain http to a remote host', { 'a.csv': 'http://uploads.push.test/a.csv' }, /only https/],
  ])('refuses a response with %s, and uploads nothing', async (_, body, message) => {
    server.use(http.get(`${mock.baseUrl}/services/push/v1/customer/apps/:app/upload`, () => HttpResponse.json(body)));
    await expect(client.uploads.upload(mock.appId, [{ name: 'a.csv', data: 'x' }])).rejects.toThrow(message);
    expect(mock.state.requests.filter((request) => request.operation === 'upload')).toHaveLength(0);
  });
});
