/**
 * A service that writes the credentials it received into an address it answers with (a redirect's
 * target host or path), or into an error body cut at its cap: no view of the outcome, no log line
 * and no error message carries the secret or the token, in its own case or lower-cased as the URL
 * parser leaves a host.
 */
import { inspect } from 'node:util';
import type { FetchLike } from 'push-api-client';
import { ConnectionError, PushApiError, RedirectError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';
import { remoteDns } from '../support/remote-dns.js';

const start = useHostileService();
const serve = useLoopbackServers();

/** Credentials that fit in a host label, in mixed case so that the parser's lower-casing shows. */
const LABEL_SECRET = 'MixedCaseSecret0123456789';
const LABEL_TOKEN = 'TokenInAHostLabel9876543210';

/** Every form of the credentials that would give them away: as sent, and lower-cased. */
const LEAKS = [LABEL_SECRET, LABEL_TOKEN, LABEL_SECRET.toLowerCase(), LABEL_TOKEN.toLowerCase()];

function expectNoLeak(text: string): void {
  for (const leak of LEAKS) expect(text).not.toContain(leak);
}

/** The token endpoint hands out {@link LABEL_TOKEN}; `route` answers with `answer` instead of the service. */
async function serviceAnswering(route: string, answer: (res: import('node:http').ServerResponse) => void) {
  return start(({ route: at }, res) => {
    if (at === 'token') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: LABEL_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      return true;
    }
    if (at !== route) return false;
    answer(res);
    return true;
  });
}

describe('an address whose scheme is a credential, or long', () => {
  it.each([
    ['the client secret', LABEL_SECRET],
    ['the bearer token', LABEL_TOKEN],
  ])('a GET redirected to an address whose scheme is %s: the refusal does not name it', async (_, credential) => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(302, { location: `${credential}:x` }).end(),
    );
    const error = await service
      .client({ clientSecret: LABEL_SECRET })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(error.message).toMatch(/redirect target must be an http\(s\) URL/);
    expectNoLeak(error.message);
    expectNoLeak(inspect(error, { depth: 10 }));
  });

  it('a signed upload address with a scheme of 100,000 characters: the refusal stays short', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ 'a.csv': `${'a'.repeat(100_000)}:x` })),
    );
    const error = await service
      .client()
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(error.message).toMatch(/signed upload address for "a.csv" must be an http\(s\) URL/);
    expect(error.message.length).toBeLessThan(500);
  });

  it('a well-known scheme is still named', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': 'file:///etc/passwd' })),
    );
    const error = await service
      .client()
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(error.message).toContain('got protocol "file:"');
  });
});

describe('a redirect whose target host holds a credential', () => {
  it.each([
    ['the client secret', LABEL_SECRET],
    ['the bearer token', LABEL_TOKEN],
  ])(
    'the finance POST sent to a host named after %s: scrubbed from the message, the origin and the report',
    async (_, credential) => {
      const service = await serviceAnswering('finance', (res) =>
        res.writeHead(307, { location: `https://${credential}.evil.test/x` }).end(),
      );
      const client = service.client({ clientSecret: LABEL_SECRET });
      const report = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
      const error = report.batches[0]?.error as RedirectError;
      expect(error).toBeInstanceOf(RedirectError);
      expect(error.message).toContain('[redacted].evil.test');
      expect(error.targetOrigin).toBe('https://[redacted].evil.test');
      expectNoLeak(error.message);
      expectNoLeak(JSON.stringify(report));
      expectNoLeak(inspect(report, { depth: 10 }));
    },
  );

  it('a GET redirected to plain http on a host named after the secret: the refusal does not name it', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(302, { location: `http://${LABEL_SECRET}.evil.test/x` }).end(),
    );
    const error = await service
      .client({ clientSecret: LABEL_SECRET })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(error.message).toContain('redirect target uses plain http to [redacted].evil.test');
    expectNoLeak(error.message);
    expectNoLeak(inspect(error, { depth: 10 }));
  });

  it('a remote service sending a GET to <token>.localhost: the refusal does not name the token', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(302, { location: `http://${LABEL_TOKEN}.localhost:1/admin` }).end(),
    );
    const dns = remoteDns(['api.remote.test']);
    const url = service.url.replace('127.0.0.1', 'api.remote.test');
    const error = await service
      .client({ clientSecret: LABEL_SECRET, authUrl: url, baseUrl: url, allowInsecureHttp: true, fetch: dns.fetch })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(RedirectError);
    expect(error.message).toContain('points into this machine (loopback) ([redacted].localhost:1)');
    expectNoLeak(error.message);
    expectNoLeak(JSON.stringify(error));
    expect(dns.elsewhere).toEqual([]);
  });

  it('a GET followed to a host named after the token that does not resolve: the failure and its causes do not name it', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(302, { location: `https://${LABEL_TOKEN}.evil.test/x` }).end(),
    );
    const tried: string[] = [];
    // Plays the resolver for every name but 127.0.0.1, failing as undici does when a name does not resolve.
    const fetchLoopbackOnly: FetchLike = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === '127.0.0.1') return fetch(url, init);
      tried.push(url.hostname);
      const lookup = Object.assign(new Error(`getaddrinfo ENOTFOUND ${url.hostname}`), {
        code: 'ENOTFOUND',
        hostname: url.hostname,
      });
      return Promise.reject(new TypeError('fetch failed', { cause: lookup }));
    };
    const error = await service
      .client({ clientSecret: LABEL_SECRET, fetch: fetchLoopbackOnly })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e as Error);
    expect(tried).toEqual([LABEL_TOKEN.toLowerCase() + '.evil.test']);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(inspect(error, { depth: 10 })).toContain('ENOTFOUND [redacted].evil.test');
    expectNoLeak(inspect(error, { depth: 10 }));
    expectNoLeak(String((error.cause as Error | undefined)?.stack));
  });
});

describe("a redirect hop's path holding the credentials", () => {
  it('the debug log line names the path the client built, never the hop the service chose', async () => {
    const service = await serviceAnswering('upload-urls', (res) =>
      res.writeHead(302, { location: `/leak/${LABEL_TOKEN}/${LABEL_SECRET}?q=${LABEL_TOKEN}` }).end(),
    );
    const lines: string[] = [];
    const write = (message: string, fields?: Record<string, unknown>) => lines.push(message + JSON.stringify(fields));
    const logger = { debug: write, info: write, warn: write, error: write };
    const events: string[] = [];
    await service
      .client({
        clientSecret: LABEL_SECRET,
        logger,
        hooks: {
          request: (event) => events.push(event.url),
          response: (event) => events.push(event.url),
        },
      })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch(() => undefined);
    // The hop was followed (same origin, no body) and answered 404 by the service.
    expect(service.requests.some((request) => request.path.startsWith('/leak/'))).toBe(true);
    const requestLines = lines.filter((line) => line.includes('"operation":"upload-urls"'));
    expect(requestLines.length).toBeGreaterThanOrEqual(2);
    for (const line of requestLines) expect(line).toContain(`/apps/${HOSTILE_APP_ID}/upload`);
    expectNoLeak(lines.join('\n'));
    expectNoLeak(events.join('\n'));
  });
});

describe('an error body cut at its cap through an echoed credential', () => {
  const CAP = 64 * 1024;

  it.each([5, 15, HOSTILE_TOKEN.length - 1])(
    'a finance 400 with the token starting %i characters before the cap: no prefix of it is kept',
    async (before) => {
      const service = await start(({ route }, res) => {
        if (route !== 'finance') return false;
        res.writeHead(400, { 'content-type': 'text/plain' }).end('x'.repeat(CAP - before) + HOSTILE_TOKEN);
        return true;
      });
      const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
      const error = report.batches[0]?.error as PushApiError;
      expect(error).toBeInstanceOf(PushApiError);
      const body = String(error.body);
      expect(body.endsWith('…')).toBe(true);
      expect(body.length).toBeGreaterThan(CAP / 2);
      const shown = inspect(error, { depth: 10 }) + JSON.stringify(report);
      expect(shown).not.toContain(HOSTILE_TOKEN.slice(0, Math.min(before, 4)));
    },
  );

  it('a finance 400 with the token \\u-escaped across the cap: no escaped prefix is kept', async () => {
    const escaped = [...HOSTILE_TOKEN].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(400, { 'content-type': 'text/plain' }).end('x'.repeat(CAP - 60) + escaped);
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const body = String((report.batches[0]?.error as PushApiError | undefined)?.body);
    expect(body).not.toContain(escaped.slice(0, 12));
    expect(body).not.toContain('\\u');
  });

  it('a token endpoint 401 cut through the echoed secret: no prefix of it is kept', async () => {
    const pre = '{"error":"invalid_client","error_description":"';
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(`${pre}${'x'.repeat(CAP - pre.length - 20)}${LABEL_SECRET}"}`);
      return true;
    });
    const error = await service
      .client({ clientSecret: LABEL_SECRET })
      .tokens.getToken()
      .catch((e: unknown) => e as Error);
    expect(inspect(error, { depth: 10 }) + JSON.stringify(error)).not.toContain(LABEL_SECRET.slice(0, 8));
  });
});

describe('names /etc/hosts gives this machine', () => {
  it.each(['localhost6', 'localhost6.localdomain6', 'LOCALHOST4.localdomain4.', 'ip6-loopback'])(
    'a remote service redirecting a GET to %s is refused before any connection',
    async (name) => {
      const sink = await serve((_req, res) => res.end('{}'));
      const port = new URL(sink).port;
      const service = await start(({ route }, res) => {
        if (route !== 'upload-urls') return false;
        res.writeHead(302, { location: `http://${name}:${port}/admin` }).end();
        return true;
      });
      const dns = remoteDns(['api.remote.test']);
      const url = service.url.replace('127.0.0.1', 'api.remote.test');
      const error = await service
        .client({ authUrl: url, baseUrl: url, allowInsecureHttp: true, fetch: dns.fetch })
        .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
        .catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(RedirectError);
      expect(error.message).toContain('points into this machine (loopback)');
      expect(dns.elsewhere).toEqual([]);
    },
  );
});
