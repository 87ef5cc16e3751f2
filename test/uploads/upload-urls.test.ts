import fc from 'fast-check';
import { ConfigurationError, PushError, UploadError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { MAX_UPLOAD_URLS_URL_LENGTH } from '../../src/uploads/limits.js';
import {
  formEncodedLength,
  parseUploadUrlMap,
  uploadUrlsEndpoint,
  uploadUrlsRequests,
} from '../../src/uploads/uploader.js';

const BASE = new URL('https://api.push.test');

describe('upload-address endpoint', () => {
  it('puts the app id in the spec path', () => {
    expect(uploadUrlsEndpoint(BASE, 'app-1').href).toBe(
      'https://api.push.test/services/push/v1/customer/apps/app-1/upload',
    );
  });

  it('keeps a base path and ignores its query', () => {
    expect(uploadUrlsEndpoint(new URL('https://gw.test/push?x=1'), 'a').href).toBe(
      'https://gw.test/push/services/push/v1/customer/apps/a/upload',
    );
  });

  it.each(['../../admin', 'a/b', 'a?b', 'a#b', '%2e%2e', 'ü id'])(
    'encodes app id %j so it cannot change the path',
    (appId) => {
      const url = uploadUrlsEndpoint(BASE, appId);
      expect(url.pathname).toMatch(/^\/services\/push\/v1\/customer\/apps\/[^/]+\/upload$/);
      expect(url.search).toBe('');
      expect(decodeURIComponent(url.pathname.split('/')[6] ?? '')).toBe(appId);
    },
  );

  it.each(['', '.', '..', 'lone\ud800'])('rejects app id %j', (appId) => {
    expect(() => uploadUrlsEndpoint(BASE, appId)).toThrow(ConfigurationError);
  });
});

describe('upload-address requests', () => {
  const endpoint = uploadUrlsEndpoint(BASE, 'app');

  it('repeats filenames= once per name, never filenames[]', () => {
    const [url, ...rest] = uploadUrlsRequests(endpoint, ['a.csv', 'b c.csv', 'ü.csv'], 'users');
    expect(rest).toHaveLength(0);
    expect(url?.search).toBe('?filenames=a.csv&filenames=b+c.csv&filenames=%C3%BC.csv&type=users');
    expect(url?.searchParams.getAll('filenames')).toEqual(['a.csv', 'b c.csv', 'ü.csv']);
  });

  it('splits a long list so that every URL stays under 8 KB and every name is asked for once, in order', () => {
    const names = Array.from({ length: 3000 }, (_, i) => `export-${i}-${'ä'.repeat(i % 40)}.csv`);
    const urls = uploadUrlsRequests(endpoint, names, 'contracts');
    expect(urls.length).toBeGreaterThan(1);
    for (const url of urls) {
      expect(url.href.length).toBeLessThan(MAX_UPLOAD_URLS_URL_LENGTH);
      expect(url.searchParams.get('type')).toBe('contracts');
    }
    expect(urls.flatMap((url) => url.searchParams.getAll('filenames'))).toEqual(names);
  });

  it('fills each request close to the limit rather than sending many small ones', () => {
    const names = Array.from({ length: 2000 }, (_, i) => `file-${String(i).padStart(6, '0')}.csv`);
    const urls = uploadUrlsRequests(endpoint, names);
    for (const url of urls.slice(0, -1)) expect(url.href.length).toBeGreaterThan(MAX_UPLOAD_URLS_URL_LENGTH - 40);
  });

  it('refuses a single name too long for any request', () => {
    expect(() => uploadUrlsRequests(endpoint, ['x'.repeat(9000)])).toThrow(UploadError);
  });
});

describe('upload-address response', () => {
  const remote = { allowInsecureHttp: false, service: new URL('https://api.push.test') };
  const loopback = { allowInsecureHttp: false, service: new URL('http://127.0.0.1:8080') };
  const good = { 'a.csv': 'https://up.test/app/a.csv?sig=1', 'b.csv': 'https://up.test/app/b.csv?sig=2' };

  it('returns one address per requested name', () => {
    expect(parseUploadUrlMap(good, ['a.csv', 'b.csv'], remote)).toEqual(good);
  });

  it.each([
    ['a missing name', { 'a.csv': good['a.csv'] }, /no address for "b.csv"/],
    ['an extra name', { ...good, 'c.csv': 'https://up.test/c' }, /not requested: "c.csv"\./],
    ['a non-string address', { ...good, 'b.csv': 42 }, /"b.csv" is not a string/],
    ['a relative address', { ...good, 'b.csv': '/app/b.csv' }, /"b.csv" is not an absolute URL/],
    ['plain http to a remote host', { ...good, 'b.csv': 'http://up.test/b' }, /only https/],
    ['a non-http scheme', { ...good, 'b.csv': 'ftp://up.test/b' }, /http\(s\) URL/],
  ])('rejects %s', (_, body, message) => {
    expect(() => parseUploadUrlMap(body, ['a.csv', 'b.csv'], remote)).toThrow(message);
  });

  it('quotes a few unrequested names, each cut short, however many and long they are', () => {
    const body: Record<string, string> = { ...good };
    for (let i = 0; i < 10_000; i++) body[`${i}-${'x'.repeat(10_000)}`] = 'https://up.test/x';
    const error = (() => {
      try {
        parseUploadUrlMap(body, ['a.csv', 'b.csv'], remote);
      } catch (caught) {
        return caught as UploadError;
      }
    })();
    expect(error).toBeInstanceOf(UploadError);
    expect(error?.message).toMatch(/not requested: "0-x+…", "1-x+…", "2-x+…" and 9997 more\.$/);
    expect(error?.message.length).toBeLessThan(400);
    expect(error?.fileName.length).toBeLessThanOrEqual(200);
  });

  it('names a long loopback host cut short', () => {
    const host = `${'a'.repeat(5_000)}.localhost`;
    expect(() => parseUploadUrlMap({ a: `https://${host}/a` }, ['a'], remote)).toThrow(
      /points into this machine \(loopback\) \(a{99}…\) while/,
    );
  });

  it('rejects a body that is not an object', () => {
    for (const body of [null, [], 'x', 1]) expect(() => parseUploadUrlMap(body, ['a.csv'], remote)).toThrow(PushError);
  });

  it('allows http to loopback from a loopback service, and to any host with allowInsecureHttp', () => {
    expect(parseUploadUrlMap({ a: 'http://127.0.0.1:9/a' }, ['a'], loopback)).toEqual({ a: 'http://127.0.0.1:9/a' });
    expect(parseUploadUrlMap({ a: 'http://up.test/a' }, ['a'], { ...remote, allowInsecureHttp: true })).toEqual({
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
  ])('refuses %s from a remote service', (address) => {
    expect(() => parseUploadUrlMap({ a: address }, ['a'], { ...remote, allowInsecureHttp: true })).toThrow(
      /points into (this machine|a private network)/,
    );
  });

  it.each(['https://172.32.0.1/a', 'https://11.0.0.1/a', 'https://[2001:db8::1]/a', 'https://localhost.example/a'])(
    'accepts the public address %s',
    (address) => {
      expect(parseUploadUrlMap({ a: address }, ['a'], remote)).toEqual({ a: address });
    },
  );

  it('a private-network service may use private addresses, but not loopback ones', () => {
    const internal = { allowInsecureHttp: false, service: new URL('https://10.0.0.5') };
    expect(parseUploadUrlMap({ a: 'https://10.0.0.6/a' }, ['a'], internal)).toEqual({ a: 'https://10.0.0.6/a' });
    expect(() => parseUploadUrlMap({ a: 'https://127.0.0.1/a' }, ['a'], internal)).toThrow(/this machine/);
  });

  it('refuses an address with credentials, without repeating them', () => {
    const error = (() => {
      try {
        parseUploadUrlMap({ a: 'https://user:hunter22@up.test/a' }, ['a'], remote);
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(UploadError);
    expect(error?.message).toMatch(/credentials/);
    expect(error?.message).not.toContain('hunter22');
  });
});

describe('formEncodedLength', () => {
  it('counts exactly the characters URLSearchParams writes, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(formEncodedLength(text)).toBe(new URLSearchParams([['', text]]).toString().length - 1);
      }),
      { numRuns: 2000 },
    );
    for (const text of ['', ' ', 'a b', "!'()~*-._", 'ü', '€', '😀', '\ud800', '\udc00x', 'x\ud83d']) {
      expect(formEncodedLength(text)).toBe(new URLSearchParams([['', text]]).toString().length - 1);
    }
  });
});
