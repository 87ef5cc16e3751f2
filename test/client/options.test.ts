import { readFileSync } from 'node:fs';
import { ConfigurationError, PushClient, type PushClientOptions, VERSION } from 'push-api-client';
import { afterEach, describe, expect, it } from 'vitest';

const env = {
  PUSH_CLIENT_ID: 'env-id',
  PUSH_CLIENT_SECRET: 'env-secret-value',
  PUSH_AUTH_URL: 'https://auth.example.com',
  PUSH_BASE_URL: 'https://api.example.com',
  PUSH_SCOPE_BASE: 'https://api.example.com',
};

const make = (options: PushClientOptions = {}) => new PushClient({ env, ...options });

/** `[<hole>, middleware]`: `Array.prototype.some` skips the hole. */
function sparseMiddleware(): never {
  const list: unknown[] = new Array(2);
  list[1] = (request: Request, next: (r: Request) => Promise<Response>) => next(request);
  return list as never;
}

describe('PushClient options', () => {
  it.each([
    ['baseURL', 'baseUrl'],
    ['authURL', 'authUrl'],
    ['clientID', 'clientId'],
    ['timeoutMS', 'timeoutMs'],
  ])('an option written %s, which JavaScript would let through, is refused naming %s', (key, meant) => {
    // With the variables set, the miscased option would otherwise lose to them without a word.
    const options = { [key]: 'https://other.example.com' } as PushClientOptions;
    expect(() => make(options)).toThrow(ConfigurationError);
    expect(() => make(options)).toThrow(`PushClient: unknown option ${key}; did you mean ${meant}?`);
  });

  it.each([
    ['api.example.com', 'is not an absolute URL; write it with its scheme, such as https://api.example.com'],
    ['localhost:4010', 'must start with https:// or http:// (what comes before its first ":" was read as a scheme)'],
  ])('a baseUrl written %s says how to write it', (baseUrl, message) => {
    expect(() => make({ baseUrl })).toThrow(`PushClient: baseUrl (PUSH_BASE_URL) ${message}`);
  });

  it('does not repeat an address that is no URL: it may be a secret pasted in the wrong place', () => {
    for (const baseUrl of ['s3cret-value:abc', 'no-scheme-s3cret-value']) {
      expect(() => make({ baseUrl })).toThrow(ConfigurationError);
      expect(() => make({ baseUrl })).not.toThrow(/s3cret/);
    }
  });

  it('lets other unknown keys through, so that a wider settings object can be spread in', () => {
    expect(() => make({ region: 'eu' } as PushClientOptions)).not.toThrow();
  });

  it('refuses a miscased option in withOptions too, naming withOptions', () => {
    expect(() => make().withOptions({ maxretries: 0 } as never)).toThrow(
      'withOptions: unknown option maxretries; did you mean maxRetries?',
    );
  });

  it('refuses a miscased option a settings class defines as a getter on its prototype, or a non-enumerable one', () => {
    class Settings {
      env = env;
      // Read through the prototype as any option is, yet no own key: it escaped the check.
      get baseURL(): string {
        return 'https://other.example.com';
      }
    }
    expect(() => new PushClient(new Settings() as PushClientOptions)).toThrow(
      'PushClient: unknown option baseURL; did you mean baseUrl?',
    );
    const hidden = Object.defineProperty({ env }, 'timeoutMS', { value: 5, enumerable: false });
    expect(() => new PushClient(hidden as PushClientOptions)).toThrow('did you mean timeoutMs?');
    // A Proxy's keys are its target's; a prototype chain that never ends is looked through a few levels only.
    expect(() => new PushClient(new Proxy({ env, clientID: 'x' }, {}) as PushClientOptions)).toThrow(
      'did you mean clientId?',
    );
    const endless: PushClientOptions = new Proxy({ env }, { getPrototypeOf: () => endless });
    expect(() => new PushClient(endless)).not.toThrow();
  });

  it.each([
    ['clientId', 'PUSH_CLIENT_ID'],
    ['clientSecret', 'PUSH_CLIENT_SECRET'],
    ['authUrl', 'PUSH_AUTH_URL'],
    ['baseUrl', 'PUSH_BASE_URL'],
    ['scopeBase', 'PUSH_SCOPE_BASE'],
  ])('a missing %s is a ConfigurationError naming the option and %s', (option, variable) => {
    const partial = { ...env, [variable]: undefined };
    const error = (() => {
      try {
        new PushClient({ env: partial });
      } catch (e) {
        return e;
      }
    })() as Error;
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain(option);
    expect(error.message).toContain(variable);
  });

  it('reads every default from the environment', () => {
    const json = make().toJSON();
    expect(json).toMatchObject({
      clientId: 'env-id',
      authUrl: 'https://auth.example.com/',
      baseUrl: 'https://api.example.com/',
      scopes: ['https://api.example.com/connector.write'],
      timeoutMs: 30_000,
      maxRetries: 3,
      retryAmbiguous: false,
    });
  });

  it('options win over the environment; scopes make scopeBase unnecessary', () => {
    const client = new PushClient({
      env: { ...env, PUSH_SCOPE_BASE: undefined },
      clientId: 'opt-id',
      scopes: ['https://x.test/report.read'],
      timeoutMs: 5,
      maxRetries: 0,
    });
    expect(client.toJSON()).toMatchObject({
      clientId: 'opt-id',
      scopes: ['https://x.test/report.read'],
      maxRetries: 0,
    });
    expect(client.tokens.scopes).toEqual(['https://x.test/report.read']);
  });

  it.each([
    ['https://api.example.com//', 'https://api.example.com/'],
    ['https://api.example.com:8443///', 'https://api.example.com:8443/'],
    ['https://gw.example.com/push//', 'https://gw.example.com/push/'],
  ])('a baseUrl ending in slashes (%s) ends in one, as authUrl does', (baseUrl, expected) => {
    expect(make({ baseUrl }).toJSON().baseUrl).toBe(expected);
  });

  it('the default scope is {scopeBase}/connector.write, without a doubled slash', () => {
    expect(make({ scopeBase: 'https://s.test/' }).toJSON().scopes).toEqual(['https://s.test/connector.write']);
  });

  it.each([
    ['authUrl', 'http://auth.example.com'],
    ['baseUrl', 'http://api.example.com'],
  ])('refuses plain http for %s to a non-loopback host', (option, url) => {
    expect(() => make({ [option]: url })).toThrow(ConfigurationError);
    expect(() => make({ [option]: url })).toThrow(option);
  });

  it('allows plain http to loopback hosts, and anywhere with allowInsecureHttp', () => {
    expect(() => make({ baseUrl: 'http://127.0.0.1:9999', authUrl: 'http://localhost:9999' })).not.toThrow();
    expect(() => make({ baseUrl: 'http://[::1]:9999' })).not.toThrow();
    expect(() => make({ baseUrl: 'http://api.example.com', allowInsecureHttp: true })).not.toThrow();
  });

  it.each([
    [{ timeoutMs: 0 }, 'timeoutMs'],
    [{ timeoutMs: Number.NaN }, 'timeoutMs'],
    [{ maxRetries: -1 }, 'maxRetries'],
    [{ maxRetries: 1.5 }, 'maxRetries'],
    [{ scopes: [] }, 'scopes'],
    [{ baseUrl: 'not a url' }, 'baseUrl'],
    [{ tokenAuthMethod: 'private_key_jwt' as never }, 'tokenAuthMethod'],
    // A hole would end the chain there, and the signer after it would never run.
    [{ middleware: sparseMiddleware() }, 'middleware'],
    [{ middleware: [undefined] as never }, 'middleware'],
  ])('an invalid option %o is a ConfigurationError naming %s', (options, name) => {
    expect(() => make(options)).toThrow(ConfigurationError);
    expect(() => make(options)).toThrow(name);
  });

  it('the User-Agent is push-api-client/<version> node/<version>, with the userAgent option in front', () => {
    expect(make().toJSON().userAgent).toBe(`push-api-client/${VERSION} node/${process.versions.node}`);
    expect(make({ userAgent: 'my-app/1.2' }).toJSON().userAgent).toBe(
      `my-app/1.2 push-api-client/${VERSION} node/${process.versions.node}`,
    );
  });

  it.each([
    ['a CR/LF', 'my-app/1.2\r\nX-Injected: 1'],
    ['a LF', 'my-app/1.2\n'],
    ['a NUL', 'my-app\u00001.2'],
    ['a character above U+00FF', 'my-app/1.2 €'],
  ])('a userAgent with %s is a ConfigurationError at construction', (_name, userAgent) => {
    expect(() => make({ userAgent })).toThrow(ConfigurationError);
    expect(() => make({ userAgent })).toThrow('userAgent');
  });

  it('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});

describe('browser guard', () => {
  const g = globalThis as Record<string, unknown>;
  afterEach(() => {
    delete g.window;
    delete g.document;
  });

  it('refuses a client secret where window and document exist', () => {
    g.window = {};
    g.document = {};
    expect(() => make()).toThrow(ConfigurationError);
    expect(() => make()).toThrow(/dangerouslyAllowBrowser/);
  });

  it('allows it with dangerouslyAllowBrowser: true', () => {
    g.window = {};
    g.document = {};
    expect(() => make({ dangerouslyAllowBrowser: true })).not.toThrow();
  });
});
