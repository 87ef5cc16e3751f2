import { createHash } from 'node:crypto';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { bodyLengthOf } from '../../src/testing/body-length.js';
import { getToken, signedUrls, specError, uploadUrlsRequest } from '../support/emulator-requests.js';

async function setup(options: Parameters<typeof createPushApiHandler>[0] = {}) {
  const emulator = createPushApiHandler(options);
  const token = await getToken(emulator);
  return { emulator, token };
}

function put(url: string, body: BodyInit, headers: Record<string, string> = {}): Request {
  return new Request(url, { method: 'PUT', body, headers });
}

async function xmlCode(response: Response): Promise<string | undefined> {
  expect(response.headers.get('content-type')).toBe('application/xml');
  return /<Code>([^<]*)<\/Code>/.exec(await response.text())?.[1];
}

describe('upload addresses', () => {
  it('returns one signed address on the storage host per requested file name', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['users.csv', 'contracts 2024.csv'], 'users');
    expect(Object.keys(urls)).toEqual(['users.csv', 'contracts 2024.csv']);
    for (const address of Object.values(urls)) {
      const url = new URL(address);
      expect(url.origin).toBe(emulator.uploadUrl);
      expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);
      expect(Number(url.searchParams.get('expires'))).toBeGreaterThan(emulator.now() / 1000);
      expect(url.searchParams.get('type')).toBe('users');
      expect(address).not.toContain(token);
    }
  });

  it('encodes names so that a slash or ".." cannot change the path', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['../x/y.csv', '__proto__', 'ünï.csv']);
    expect(new URL(urls['../x/y.csv']!).pathname).toBe(`/${emulator.appId}/..%2Fx%2Fy.csv`);
    expect(Object.keys(urls)).toContain('__proto__');
    expect((await emulator.handle(put(urls['../x/y.csv']!, 'a'))).status).toBe(200);
    expect(emulator.state.file(emulator.appId, '../x/y.csv')?.size).toBe(1);
  });

  it.each([
    ['no filenames', '', 'filenames is required'],
    ['only a type', '?type=users', 'filenames is required'],
    ['the filenames[] spelling', '?filenames[]=a.csv', 'unexpected query parameter'],
    ['an unknown parameter', '?filenames=a.csv&foo=1', '"foo"'],
    ['a type outside users/contracts/other', '?filenames=a.csv&type=invoices', 'type must be one of'],
    ['a repeated type', '?filenames=a.csv&type=users&type=other', 'at most once'],
    ['an empty file name', '?filenames=', 'must not be empty'],
    ['a duplicated file name', '?filenames=a.csv&filenames=a.csv', 'duplicate file name'],
    // A URL parser folds a "." or ".." path segment (and %2E%2E) away: no address could name the file.
    ['the file name ".."', '?filenames=..', 'must not be "." or ".."'],
    ['the file name "."', '?filenames=a.csv&filenames=.', 'must not be "." or ".."'],
  ])('answers 400 to %s', async (_, query, fragment) => {
    const { emulator, token } = await setup();
    const response = await emulator.handle(uploadUrlsRequest(emulator, token, query));
    expect(response.status).toBe(400);
    expect((await specError(response)).message).toContain(fragment);
  });

  it('accepts each of the spec type values', async () => {
    const { emulator, token } = await setup();
    for (const type of ['users', 'contracts', 'other']) {
      await expect(signedUrls(emulator, token, ['f'], type)).resolves.toHaveProperty('f');
    }
  });
});

describe('PUT to a signed address', () => {
  it('stores the bytes and answers 200 with the quoted md5 as ETag', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['users.csv'], 'users');
    const bytes = new TextEncoder().encode('id,email\n1,a@example.com\n');
    const response = await emulator.handle(put(urls['users.csv']!, bytes, { 'content-type': 'text/csv' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);
    const file = emulator.state.file(emulator.appId, 'users.csv');
    expect(file).toMatchObject({
      name: 'users.csv',
      type: 'users',
      size: bytes.byteLength,
      contentType: 'text/csv',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      authorization: undefined,
      uploadCount: 1,
    });
    expect(Buffer.from(file!.bytes!).equals(Buffer.from(bytes))).toBe(true);
  });

  it('overwrites an earlier upload of the same name', async () => {
    const { emulator, token } = await setup();
    const first = await signedUrls(emulator, token, ['a.csv']);
    await emulator.handle(put(first['a.csv']!, 'old content'));
    const second = await signedUrls(emulator, token, ['a.csv']);
    await emulator.handle(put(second['a.csv']!, 'new'));
    expect(emulator.state.files(emulator.appId)).toHaveLength(1);
    expect(Buffer.from(emulator.state.file(emulator.appId, 'a.csv')!.bytes!).toString()).toBe('new');
    expect(emulator.state.file(emulator.appId, 'a.csv')!.uploadCount).toBe(2);
  });

  it('keeps bytes up to maxStoredUploadBytes in total, then only size and sha256, and frees a replaced file', async () => {
    const { emulator, token } = await setup({ maxStoredUploadBytes: 10 });
    const urls = await signedUrls(emulator, token, ['a.csv', 'b.csv']);
    expect((await emulator.handle(put(urls['a.csv']!, '123456'))).status).toBe(200);
    expect((await emulator.handle(put(urls['b.csv']!, '78901'))).status).toBe(200);
    const a = emulator.state.file(emulator.appId, 'a.csv');
    const b = emulator.state.file(emulator.appId, 'b.csv');
    expect(Buffer.from(a!.bytes!).toString()).toBe('123456');
    expect(b).toMatchObject({ bytes: undefined, size: 5, sha256: createHash('sha256').update('78901').digest('hex') });
    expect(emulator.state.uploadStorage).toEqual({ storedBytes: 6, maxStoredBytes: 10, filesWithoutBytes: 1 });

    const again = await signedUrls(emulator, token, ['a.csv', 'b.csv']);
    await emulator.handle(put(again['a.csv']!, '1'));
    await emulator.handle(put(again['b.csv']!, '789'));
    expect(Buffer.from(emulator.state.file(emulator.appId, 'b.csv')!.bytes!).toString()).toBe('789');
    expect(emulator.state.uploadStorage).toEqual({ storedBytes: 4, maxStoredBytes: 10, filesWithoutBytes: 0 });
  });

  it('stores a 0-byte file', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['empty.csv']);
    expect((await emulator.handle(put(urls['empty.csv']!, ''))).status).toBe(200);
    expect(emulator.state.file(emulator.appId, 'empty.csv')?.size).toBe(0);
  });

  it('records an Authorization header sent to the storage host, and redacts it in the log', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    await emulator.handle(put(urls['a.csv']!, 'x', { authorization: `Bearer ${token}` }));
    expect(emulator.state.file(emulator.appId, 'a.csv')?.authorization).toBe(`Bearer ${token}`);
    const entry = emulator.state.requests.at(-1)!;
    expect(entry.headers.authorization).toBe('Bearer [redacted]');
    expect(entry.query.signature).toEqual(['[redacted]']);
    expect(JSON.stringify(emulator.state.requests)).not.toContain(token);
  });

  it.each([
    [
      'a changed file name',
      (url: URL) => {
        url.pathname = url.pathname.replace('a.csv', 'b.csv');
      },
    ],
    [
      'a changed expiry',
      (url: URL) => url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 1)),
    ],
    ['a changed type', (url: URL) => url.searchParams.set('type', 'other')],
    ['a changed signature', (url: URL) => url.searchParams.set('signature', '0'.repeat(64))],
    [
      'another app',
      (url: URL) => {
        url.pathname = url.pathname.replace('demo-app', 'other-app');
      },
    ],
  ])('answers 403 SignatureDoesNotMatch to %s', async (_, tamper) => {
    const { emulator, token } = await setup({ apps: ['demo-app', 'other-app'] });
    const url = new URL((await signedUrls(emulator, token, ['a.csv'], 'users'))['a.csv']!);
    tamper(url);
    const response = await emulator.handle(put(url.href, 'x'));
    expect(response.status).toBe(403);
    expect(await xmlCode(response)).toBe('SignatureDoesNotMatch');
    expect(emulator.state.files('demo-app')).toHaveLength(0);
    expect(emulator.state.files('other-app')).toHaveLength(0);
  });

  it('answers 403 AccessDenied without signature parameters', async () => {
    const { emulator } = await setup();
    const response = await emulator.handle(put(`${emulator.uploadUrl}/demo-app/a.csv`, 'x'));
    expect(response.status).toBe(403);
    expect(await xmlCode(response)).toBe('AccessDenied');
  });

  it('answers 403 AccessDenied once the address has expired on the emulator clock', async () => {
    const { emulator, token } = await setup({ signedUrlTtlSeconds: 60 });
    const urls = await signedUrls(emulator, token, ['a.csv']);
    emulator.advanceTime(61_000);
    const response = await emulator.handle(put(urls['a.csv']!, 'x'));
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain('<Code>AccessDenied</Code>');
    expect(text).toContain('expired');
  });

  it('expireSignedUrls makes every address issued so far expire, but not later ones', async () => {
    const { emulator, token } = await setup();
    const old = await signedUrls(emulator, token, ['a.csv']);
    emulator.expireSignedUrls();
    const fresh = await signedUrls(emulator, token, ['a.csv']);
    const refused = await emulator.handle(put(old['a.csv']!, 'x'));
    expect(refused.status).toBe(403);
    expect(await xmlCode(refused)).toBe('AccessDenied');
    expect((await emulator.handle(put(fresh['a.csv']!, 'x'))).status).toBe(200);
  });

  it('answers 501 to chunked transfer encoding', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    const response = await emulator.handle(put(urls['a.csv']!, 'x', { 'transfer-encoding': 'chunked' }));
    expect(response.status).toBe(501);
    expect(await xmlCode(response)).toBe('NotImplemented');
  });

  it('judges a body without the header by what the runtime would send, with requireContentLength on', async () => {
    const { emulator, token } = await setup({ requireContentLength: true });
    const urls = await signedUrls(emulator, token, ['a.csv', 'b.csv', 'c.csv']);
    const missing = await emulator.handle(put(urls['a.csv']!, 'abc'));
    if (bodyLengthOf(put(urls['a.csv']!, 'abc')) !== undefined) {
      // The Request shows its body's length (Node 20 and 22, Deno): bytes and Blobs go out with it.
      expect(missing.status).toBe(200);
      expect((await emulator.handle(put(urls['b.csv']!, new Blob(['abcd'])))).status).toBe(200);
      expect(emulator.state.file(emulator.appId, 'b.csv')?.size).toBe(4);
    } else {
      // It hides it (Node 24): only the header says.
      expect(missing.status).toBe(411);
      expect(await xmlCode(missing)).toBe('MissingContentLength');
    }
    expect((await emulator.handle(put(urls['c.csv']!, 'abc', { 'content-length': '3' }))).status).toBe(200);
  });

  it('answers 411 from what the socket saw, whatever the Request headers say', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    const wire = { contentLength: undefined, transferEncoding: undefined };
    const response = await emulator.handle(put(urls['a.csv']!, 'abc', { 'content-length': '3' }), { wire });
    expect(response.status).toBe(411);
  });

  it('answers 400 IncompleteBody when Content-Length does not match the body', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    const response = await emulator.handle(put(urls['a.csv']!, 'abc', { 'content-length': '10' }));
    expect(response.status).toBe(400);
    expect(await xmlCode(response)).toBe('IncompleteBody');
  });

  it('answers 400 EntityTooLarge over maxUploadBytes', async () => {
    const { emulator, token } = await setup({ maxUploadBytes: 4 });
    const urls = await signedUrls(emulator, token, ['a.csv']);
    const response = await emulator.handle(put(urls['a.csv']!, 'too big'));
    expect(response.status).toBe(400);
    expect(await xmlCode(response)).toBe('EntityTooLarge');
  });

  it('answers 405 MethodNotAllowed to a method other than PUT', async () => {
    const { emulator, token } = await setup();
    const urls = await signedUrls(emulator, token, ['a.csv']);
    const get = await emulator.handle(new Request(urls['a.csv']!));
    expect(get.status).toBe(405);
    expect(await xmlCode(get)).toBe('MethodNotAllowed');
  });
});
