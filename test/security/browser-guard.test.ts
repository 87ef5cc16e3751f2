/** A client secret must never ship to a browser: PushClient refuses a browser-like global scope. */

import { ConfigurationError, PushClient } from 'push-api-client';
import { afterEach, describe, expect, it } from 'vitest';

const options = {
  clientId: 'id',
  clientSecret: 'browser-guard-secret-value',
  authUrl: 'https://auth.push.test',
  baseUrl: 'https://api.push.test',
  scopeBase: 'https://api.push.test',
  env: {},
};
const scope = globalThis as { window?: unknown; document?: unknown };

afterEach(() => {
  delete scope.window;
  delete scope.document;
});

describe('browser guard', () => {
  it('throws a ConfigurationError when window and document exist, without quoting the secret', () => {
    scope.window = {};
    scope.document = {};
    expect(() => new PushClient(options)).toThrow(ConfigurationError);
    try {
      new PushClient(options);
    } catch (error) {
      expect(String(error)).toMatch(/browser/);
      expect(JSON.stringify(error)).not.toContain(options.clientSecret);
    }
  });

  it('allows it with dangerouslyAllowBrowser: true', () => {
    scope.window = {};
    scope.document = {};
    expect(() => new PushClient({ ...options, dangerouslyAllowBrowser: true })).not.toThrow();
  });

  it('only window (a worker or a test shim) or neither is not a browser', () => {
    scope.window = {};
    expect(() => new PushClient(options)).not.toThrow();
    delete scope.window;
    expect(() => new PushClient(options)).not.toThrow();
  });
});
