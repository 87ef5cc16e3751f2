/**
 * The upload-address request (spec, operation 2) through `client.uploads.getUploadUrls`: the URLs
 * the client sends, and how it checks each answer, crafted ones included (the emulator's faults
 * answer 200 with a body of the test's choosing).
 */
import fc from 'fast-check';
import { ConfigurationError, type PushClientOptions, PushError, UploadError } from 'push-api-client';
import type { EmulatorOptions } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { fileNameProblem } from '../../src/internal/text.js';
import { MAX_UPLOAD_URLS_URL_LENGTH } from '../../src/uploads/limits.js';
import { clientFor } from '../support/clients.js';
import { capturingFetch, rejectionOf } from '../support/recorders.js';

/** A client of an in-process emulator; `addressRequests()` are the upload-address URLs it sent. */
function recordedClient(options: PushClientOptions = {}, emulator: EmulatorOptions = {}) {
  const mock = createPushApiMock(emulator);
  const { fetch, seen } = capturingFetch(mock.fetch);
  const client = clientFor({ clientOptions: () => mock.clientOptions(), fetch }, options);
  const addressRequests = () =>
    seen.map((request) => new URL(request.url)).filter((url) => url.pathname.endsWith('/upload'));
  /** The next address request is answered 200 with `body` (a string is sent as it is). */
  const answerWith = (body: string | Record<string, unknown>) =>
    mock.faults.add({ match: { operation: 'upload-urls' }, status: 200, body });
  return { mock, client, addressRequests, answerWith };
}

describe('upload-address endpoint', () => {
  it('puts the app id in the spec path', async () => {
    const { mock, client, addressRequests } = recordedClient();
    await client.uploads.getUploadUrls(mock.appId, ['a.csv']);
    const [url] = addressRequests();
    expect(`${url?.origin}${url?.pathname}`).toBe(
      `https://api.push.test/services/push/v1/customer/apps/${mock.appId}/upload`,
    );
  });

  it('keeps a base path and ignores its query', async () => {
    const { client, addressRequests } = recordedClient({ baseUrl: 'https://gw.test/push?x=1' });
    // No emulator lives at gw.test: the request is seen by the fetch and then fails.
    await expect(client.uploads.getUploadUrls('a', ['a.csv'])).rejects.toThrow();
    const [url] = addressRequests();
    expect(url?.href).toBe('https://gw.test/push/services/push/v1/customer/apps/a/upload?filenames=a.csv');
  });

  it.each(['../../admin', 'a/b', 'a?b', 'a#b', '%2e%2e', 'ü id'])(
    'encodes app id %j so it cannot change the path',
    async (appId) => {
      const { client, addressRequests } = recordedClient();
      // The emulator knows no such app (404); the path it was asked is what matters here.
      await expect(client.uploads.getUploadUrls(appId, ['a.csv'])).rejects.toThrow();
      const [url] = addressRequests();
      expect(url?.pathname).toMatch(/^\/services\/push\/v1\/customer\/apps\/[^/]+\/upload$/);
      expect(url?.search).toBe('?filenames=a.csv');
      expect(decodeURIComponent(url?.pathname.split('/')[6] ?? '')).toBe(appId);
    },
  );

  it.each(['', '.', '..', 'lone\ud800'])('rejects app id %j before any request', async (appId) => {
    const { client, addressRequests } = recordedClient();
    await expect(client.uploads.getUploadUrls(appId, ['a.csv'])).rejects.toThrow(ConfigurationError);
    await expect(client.uploads.upload(appId, [{ name: 'a.csv', data: 'a' }])).rejects.toThrow(ConfigurationError);
    expect(addressRequests()).toHaveLength(0);
  });
});

describe('upload-address requests', () => {
  it('repeats filenames= once per name, never filenames[]', async () => {
    const { mock, client, addressRequests } = recordedClient();
    await client.uploads.getUploadUrls(mock.appId, ['a.csv', 'b c.csv', 'ü.csv'], { type: 'users' });
    const [url, ...rest] = addressRequests();
    expect(rest).toHaveLength(0);
    expect(url?.search).toBe('?filenames=a.csv&filenames=b+c.csv&filenames=%C3%BC.csv&type=users');
    expect(url?.searchParams.getAll('filenames')).toEqual(['a.csv', 'b c.csv', 'ü.csv']);
  });

  it('splits a long list so that every URL stays under 8 KB and every name is asked for once, in order', async () => {
    const { mock, client, addressRequests } = recordedClient();
    const names = Array.from({ length: 3000 }, (_, i) => `export-${i}-${'ä'.repeat(i % 40)}.csv`);
    const urls = await client.uploads.getUploadUrls(mock.appId, names, { type: 'contracts' });
    expect(Object.keys(urls)).toEqual(names);
    const requests = addressRequests();
    expect(requests.length).toBeGreaterThan(1);
    for (const url of requests) {
      expect(url.href.length).toBeLessThan(MAX_UPLOAD_URLS_URL_LENGTH);
      expect(url.searchParams.get('type')).toBe('contracts');
    }
    expect(requests.flatMap((url) => url.searchParams.getAll('filenames'))).toEqual(names);
  });

  it('fills each request close to the limit rather than sending many small ones', async () => {
    const { mock, client, addressRequests } = recordedClient();
    const names = Array.from({ length: 2000 }, (_, i) => `file-${String(i).padStart(6, '0')}.csv`);
    await client.uploads.getUploadUrls(mock.appId, names);
    const requests = addressRequests();
    expect(requests.length).toBeGreaterThan(1);
    for (const url of requests.slice(0, -1)) expect(url.href.length).toBeGreaterThan(MAX_UPLOAD_URLS_URL_LENGTH - 40);
  });

  // The split counts each name's encoded length without building the URL. Any name, however it is
  // encoded (spaces as "+", %XX per UTF-8 byte), must be counted exactly as URLSearchParams writes
  // it: one character more and a request would pass the limit, one fewer and it would be split early.
  describe('counts each name exactly as URLSearchParams writes it', () => {
    const { mock, client, addressRequests } = recordedClient();
    const endpoint = `${mock.baseUrl}/services/push/v1/customer/apps/${mock.appId}/upload`;
    const urlLength = (names: readonly string[]) => {
      const url = new URL(endpoint);
      for (const name of names) url.searchParams.append('filenames', name);
      return url.href.length;
    };
    /** Pads in front of `name`, so that the one URL asking for all of them is exactly `total` long. */
    const filledTo = (name: string, total: number) => {
      const pads: string[] = [];
      for (;;) {
        const prefix = `pad${pads.length}-`;
        const room = total - urlLength([...pads, name]) - '&filenames='.length - prefix.length;
        if (room <= 1000) {
          pads.push(prefix + 'p'.repeat(room));
          break;
        }
        pads.push(prefix + 'p'.repeat(900));
      }
      const names = [...pads, name];
      expect(urlLength(names)).toBe(total);
      return names;
    };
    /** The names of each request `getUploadUrls(names)` sent. */
    const split = async (names: readonly string[]) => {
      const before = addressRequests().length;
      await client.uploads.getUploadUrls(mock.appId, names);
      return addressRequests()
        .slice(before)
        .map((url) => url.searchParams.getAll('filenames'));
    };
    const check = async (name: string) => {
      // One character under the limit: one request; at the limit: the name goes in a second one.
      const fits = filledTo(name, MAX_UPLOAD_URLS_URL_LENGTH - 1);
      expect(await split(fits)).toEqual([fits]);
      const over = filledTo(name, MAX_UPLOAD_URLS_URL_LENGTH);
      expect(await split(over)).toEqual([over.slice(0, -1), [name]]);
    };

    it.each([' ', 'a b', "!'()~*-._", 'ü', '€', '😀', 'a+b&c=d%e#f?g'])('%j', check);

    it('for any name the client sends', async () => {
      const name = fc
        .string({ unit: 'binary', minLength: 1, maxLength: 200 })
        .filter((text) => fileNameProblem(text) === undefined && !text.startsWith('pad'));
      await fc.assert(fc.asyncProperty(name, check), { numRuns: 200 });
    });
  });

  it('refuses a single name too long for any request, before any request', async () => {
    // A name is at most 1024 bytes, 3072 characters encoded: only a long base path leaves no room for it.
    const { mock, client, addressRequests } = recordedClient({ baseUrl: `https://api.push.test/${'p'.repeat(5_000)}` });
    const name = 'é'.repeat(512);
    const error = await rejectionOf(client.uploads.getUploadUrls(mock.appId, ['a.csv', name]));
    expect(error).toBeInstanceOf(UploadError);
    expect(error.message).toMatch(/too long to fit in an upload-address request/);
    expect((error as UploadError).fileName).toBe(name);
    expect(addressRequests()).toHaveLength(0);
  });
});

describe('upload-address response', () => {
  const good = {
    'a.csv': 'https://uploads.push.test/app/a.csv?sig=1',
    'b.csv': 'https://uploads.push.test/app/b.csv?sig=2',
  };

  it('returns one address per requested name', async () => {
    const { mock, client, answerWith } = recordedClient();
    answerWith(good);
    await expect(client.uploads.getUploadUrls(mock.appId, ['a.csv', 'b.csv'])).resolves.toEqual(good);
  });

  it.each([
    ['a missing name', { 'a.csv': good['a.csv'] }, /no address for "b.csv"/],
    ['an extra name', { ...good, 'c.csv': 'https://up.test/c' }, /not requested: "c.csv"\./],
    ['a non-string address', { ...good, 'b.csv': 42 }, /"b.csv" is not a string/],
    ['a relative address', { ...good, 'b.csv': '/app/b.csv' }, /"b.csv" is not an absolute URL/],
    ['plain http to a remote host', { ...good, 'b.csv': 'http://up.test/b' }, /only https/],
    ['a non-http scheme', { ...good, 'b.csv': 'ftp://up.test/b' }, /http\(s\) URL/],
  ])('rejects %s', async (_, body, message) => {
    const { mock, client, answerWith } = recordedClient();
    answerWith(body);
    const error = await rejectionOf(client.uploads.getUploadUrls(mock.appId, ['a.csv', 'b.csv']));
    expect(error).toBeInstanceOf(UploadError);
    expect(error.message).toMatch(message);
  });

  it('quotes a few unrequested names, each cut short, however many and long they are', async () => {
    const { mock, client, answerWith } = recordedClient();
    // As many as an answer can hold: one over 8 MiB is refused before it is read.
    const body: Record<string, string> = { ...good };
    for (let i = 0; i < 1000; i++) body[`${i}-${'x'.repeat(7_000)}`] = 'https://up.test/x';
    answerWith(JSON.stringify(body));
    const error = await rejectionOf(client.uploads.getUploadUrls(mock.appId, ['a.csv', 'b.csv']));
    expect(error).toBeInstanceOf(UploadError);
    expect(error.message).toMatch(/not requested: "0-x+…", "1-x+…", "2-x+…" and 997 more\.$/);
    expect(error.message.length).toBeLessThan(400);
    expect((error as UploadError).fileName.length).toBeLessThanOrEqual(200);
  });

  it('names a long loopback host cut short', async () => {
    const { mock, client, answerWith } = recordedClient();
    const host = `${'a'.repeat(5_000)}.localhost`;
    answerWith({ a: `https://${host}/a` });
    await expect(client.uploads.getUploadUrls(mock.appId, ['a'])).rejects.toThrow(
      /points into this machine \(loopback\) \(a{99}…\) while/,
    );
  });

  it.each(['null', '[]', '"x"', '1'])('rejects the body %s, which is not an object', async (body) => {
    const { mock, client, answerWith } = recordedClient();
    answerWith(body);
    const error = await rejectionOf(client.uploads.getUploadUrls(mock.appId, ['a.csv']));
    expect(error).toBeInstanceOf(PushError);
    expect(error.message).toMatch(/not a JSON object mapping file names to addresses/);
  });

  it('allows http to loopback from a loopback service, and to any host with allowInsecureHttp', async () => {
    const loopback = recordedClient({}, { baseUrl: 'http://127.0.0.1:8080' });
    loopback.answerWith({ a: 'http://127.0.0.1:9/a' });
    await expect(loopback.client.uploads.getUploadUrls(loopback.mock.appId, ['a'])).resolves.toEqual({
      a: 'http://127.0.0.1:9/a',
    });
    const insecure = recordedClient({ allowInsecureHttp: true });
    insecure.answerWith({ a: 'http://up.test/a' });
    await expect(insecure.client.uploads.getUploadUrls(insecure.mock.appId, ['a'])).resolves.toEqual({
      a: 'http://up.test/a',
    });
  });

  // A remote service must not make the SDK send files into this machine or its network.
  it.each([
    'http://127.0.0.1:9/a',
    'https://127.0.0.1/a',
    'http://127.1/a',
    'http://0x7f.1/a',
    'http://2130706433/a',
    'http://localhost:9/a',
    'http://files.localhost/a',
    'http://[::1]/a',
    'https://0.0.0.0/a',
    'https://10.1.2.3/a',
    'https://172.16.0.1/a',
    'https://172.31.255.255/a',
    'https://192.168.1.1/a',
    'https://169.254.169.254/latest/meta-data',
    'https://[fc00::1]/a',
    'https://[fd12:3456::1]/a',
    'https://[fe80::1]/a',
    'https://[::ffff:127.0.0.1]/a',
    'https://[::ffff:10.0.0.1]/a',
  ])('refuses %s from a remote service', async (address) => {
    const { mock, client, answerWith } = recordedClient({ allowInsecureHttp: true });
    answerWith({ a: address });
    await expect(client.uploads.getUploadUrls(mock.appId, ['a'])).rejects.toThrow(
      /points into (this machine|a private network)/,
    );
  });

  it.each(['https://172.32.0.1/a', 'https://11.0.0.1/a', 'https://[2001:db8::1]/a', 'https://localhost.example/a'])(
    'accepts the public address %s',
    async (address) => {
      const { mock, client, answerWith } = recordedClient();
      answerWith({ a: address });
      await expect(client.uploads.getUploadUrls(mock.appId, ['a'])).resolves.toEqual({ a: address });
    },
  );

  it('a private-network service may use private addresses, but not loopback ones', async () => {
    const { mock, client, answerWith } = recordedClient({}, { baseUrl: 'https://10.0.0.5' });
    answerWith({ a: 'https://10.0.0.6/a' });
    await expect(client.uploads.getUploadUrls(mock.appId, ['a'])).resolves.toEqual({ a: 'https://10.0.0.6/a' });
    answerWith({ a: 'https://127.0.0.1/a' });
    await expect(client.uploads.getUploadUrls(mock.appId, ['a'])).rejects.toThrow(/this machine/);
  });

  it('refuses an address with credentials, without repeating them', async () => {
    const { mock, client, answerWith } = recordedClient();
    answerWith({ a: 'https://user:hunter22@up.test/a' });
    const error = await rejectionOf(client.uploads.getUploadUrls(mock.appId, ['a']));
    expect(error).toBeInstanceOf(UploadError);
    expect(error.message).toMatch(/credentials/);
    expect(error.message).not.toContain('hunter22');
  });

  it('keeps a file named __proto__ as a name of its own in a crafted answer', async () => {
    const { mock, client, answerWith } = recordedClient();
    answerWith('{"__proto__":"https://up.test/p","a":"https://up.test/a"}');
    const urls = await client.uploads.getUploadUrls(mock.appId, ['__proto__', 'a']);
    expect(Object.getPrototypeOf(urls)).toBe(Object.prototype);
    expect(Object.entries(urls)).toEqual([
      ['__proto__', 'https://up.test/p'],
      ['a', 'https://up.test/a'],
    ]);
  });
});
