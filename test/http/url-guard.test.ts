import { ConfigurationError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { assertSecureUrl, isSecureUrl } from '../../src/http/fetch.js';

describe('https guard', () => {
  it('accepts https anywhere', () => {
    expect(isSecureUrl(new URL('https://api.example.com/x'))).toBe(true);
  });

  it.each(['http://127.0.0.1:8080/', 'http://localhost/', 'http://LOCALHOST:3000/', 'http://[::1]:9000/'])(
    'accepts plain http to the loopback host %s',
    (url) => {
      expect(isSecureUrl(new URL(url))).toBe(true);
    },
  );

  it.each(['http://api.example.com/', 'http://10.0.0.1/', 'http://localhost.evil.com/', 'http://127.0.0.1.nip.io/'])(
    'refuses plain http to %s',
    (url) => {
      expect(() => assertSecureUrl(new URL(url), 'baseUrl')).toThrow(ConfigurationError);
    },
  );

  it('allows plain http anywhere with allowInsecureHttp', () => {
    expect(assertSecureUrl(new URL('http://api.example.com/'), 'baseUrl', true).href).toBe('http://api.example.com/');
  });

  it('refuses protocols other than http and https even with allowInsecureHttp', () => {
    expect(() => assertSecureUrl(new URL('ftp://example.com/'), 'baseUrl', true)).toThrow(/protocol/);
    expect(() => assertSecureUrl(new URL('file:///etc/passwd'), 'baseUrl', true)).toThrow(ConfigurationError);
  });

  it('names the URL in the message and never echoes its query', () => {
    const url = new URL('http://storage.example.com/f?X-Signature=abc123');
    expect(() => assertSecureUrl(url, 'signed upload address')).toThrow(/signed upload address/);
    try {
      assertSecureUrl(url, 'signed upload address');
    } catch (error) {
      expect((error as Error).message).not.toContain('abc123');
    }
  });
});
