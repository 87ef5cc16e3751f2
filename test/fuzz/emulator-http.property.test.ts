/**
 * Random requests to the emulator over real HTTP (raw sockets, so that paths, methods and bodies
 * are exactly as generated): it never crashes or drops a connection, and every answer is a
 * success or an error in the shape of the host that gave it: the spec's `{code, message,
 * success: false}` on the data API, RFC 6749 on the token endpoint, object-store XML on storage.
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUZZ_SEED } from './arbitraries.js';

let emulator: RunningEmulator;
let token = '';
beforeAll(async () => {
  emulator = await startEmulator({ maxBodyBytes: 4096 });
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: emulator.mock.clientId,
    client_secret: emulator.mock.clientSecret,
    scope: `${emulator.mock.scopeBase}/connector.write`,
  });
  const response = await fetch(`${emulator.authUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  token = ((await response.json()) as { access_token: string }).access_token;
});
afterAll(() => emulator.close());

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined): Promise<Raw> {
  const url = new URL(emulator.url);
  // Node's client sends a DELETE or OPTIONS body unframed unless told its length.
  if (body !== undefined) headers['content-length'] = String(body.length);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

const segment = fc.oneof(
  fc.constantFrom(
    'services',
    'push',
    'v1',
    'customer',
    'apps',
    'demo-app',
    'upload',
    'finance',
    'auth',
    'oauth2',
    'token',
    'storage',
  ),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
  fc.constantFrom('%', '%ZZ', '..', '.', '', '%2F', '%00', '%2e%2e', ';x', '%E0%A4%A'),
);
const path = fc
  .tuple(
    fc.oneof(
      fc.constantFrom(
        '/services/push/v1/customer/apps/demo-app/finance',
        '/services/push/v1/customer/apps/demo-app/upload',
        '/auth/oauth2/token',
        '/storage/demo-app/x.csv',
      ),
      fc.array(segment, { maxLength: 8 }).map((parts) => `/${parts.join('/')}`),
    ),
    fc.oneof(
      fc.constant(''),
      fc.constantFrom(
        '?filenames=a',
        '?filenames=a&type=users',
        '?filenames[]=a',
        '?signature=x&expires=1&id=1',
        '?x=%FF',
      ),
    ),
  )
  .map(([p, q]) => p + q);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS');
const headers = fc.record(
  {
    authorization: fc.constantFrom('Bearer <token>', 'Bearer nope', 'Basic !!!', 'Basic ZGVtbzo=', 'Bearer'),
    'content-type': fc.constantFrom(
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/json; charset=utf-8',
    ),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.string({ maxLength: 200 }).map((text) => Buffer.from(text)),
  fc.constant(
    Buffer.from(
      '{"records":[{"created":1700000000000,"amount":1,"currency":"EUR","identifier":"a","type":"expense","vendor":"v"}]}',
    ),
  ),
  fc.constant(Buffer.alloc(5000, 0x7b)),
  fc.constant(Buffer.from('grant_type=client_credentials&client_id=demo-client&client_secret=x')),
);

function expectShape(raw: Raw, requestPath: string): void {
  expect(raw.status).toBeGreaterThanOrEqual(200);
  expect(raw.status).toBeLessThan(600);
  const pathname = requestPath.split('?')[0] ?? '';
  const contentType = String(raw.headers['content-type'] ?? '');
  if (raw.status < 300) return;
  if (pathname === '/storage' || pathname.startsWith('/storage/')) {
    expect(contentType).toMatch(/xml/);
    expect(raw.body).toMatch(/<Error><Code>[^<]+<\/Code><Message>[^<]*<\/Message><\/Error>/);
  } else if (pathname === '/auth/oauth2/token') {
    const parsed = JSON.parse(raw.body) as Record<string, unknown>;
    expect(typeof parsed.error).toBe('string');
  } else {
    const parsed = JSON.parse(raw.body) as Record<string, unknown>;
    expect(parsed).toEqual({ code: String(raw.status), message: expect.any(String), success: false });
  }
}

describe('emulator over HTTP, random requests', () => {
  it('always answers, in the error shape of the host, and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(method, path, headers, body, async (m, p, h, b) => {
        const sent: Record<string, string> = { ...h };
        if (sent.authorization) sent.authorization = sent.authorization.replace('<token>', token);
        const withBody = m === 'GET' || m === 'OPTIONS' ? undefined : b;
        const raw = await send(m, p, sent, withBody);
        expectShape(raw, p);
      }),
      { seed: FUZZ_SEED, numRuns: 250 },
    );
    const alive = await fetch(`${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/finance`, {
      method: 'POST',
    });
    expect(alive.status).toBe(401);
  });
});

describe('request targets that look like another host (regression)', () => {
  // The HTTP adapter resolved the target as a relative URL: `//%` threw and the connection was
  // dropped, and `//other-host/...` was routed as if addressed to another origin.
  it.each(['//%', '//%?filenames=a', '//evil.test/services/push/v1/customer/apps/demo-app/finance'])(
    '%s is a path on this server, answered in the spec error shape',
    async (target) => {
      const raw = await send(
        'POST',
        target,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        Buffer.from('{}'),
      );
      expect(raw.status).toBe(404);
      expect(JSON.parse(raw.body)).toEqual({ code: '404', message: expect.any(String), success: false });
      const logged = emulator.mock.state.requests.at(-1);
      expect(logged?.path).toBe(target.split('?')[0]);
    },
  );
});
