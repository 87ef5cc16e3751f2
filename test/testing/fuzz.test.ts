/** Random requests never make the emulator throw, and every error comes in its host's error shape. */
import fc from 'fast-check';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { getToken } from '../support/emulator-requests.js';

const emulator = createPushApiHandler({ maxBodyBytes: 4096 });
const token = await getToken(emulator);

const segment = fc.oneof(
  fc.constantFrom('services', 'push', 'v1', 'customer', 'apps', 'demo-app', 'upload', 'finance', 'oauth2', 'token'),
  fc.string({ maxLength: 8 }).map(encodeURIComponent),
  fc.constantFrom('%', '%ZZ', '..', '', '%2F', '%00'),
);
const path = fc.oneof(
  fc.constantFrom(
    '/services/push/v1/customer/apps/demo-app/finance',
    '/services/push/v1/customer/apps/demo-app/upload',
    '/services/push/v1/customer/apps/%E0%A4%A/finance',
    '/oauth2/token',
  ),
  fc.array(segment, { maxLength: 8 }).map((parts) => `/${parts.join('/')}`),
);
const origin = fc.constantFrom(emulator.authUrl, emulator.baseUrl, emulator.uploadUrl, 'https://other.test');
const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?filenames=a', '?filenames=a&type=users', '?filenames[]=a', '?type=x', '?filenames=%FF'),
  fc
    .array(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })), { maxLength: 4 })
    .map((pairs) => `?${new URLSearchParams(pairs)}`),
);
const record = fc.dictionary(
  fc.constantFrom('created', 'amount', 'currency', 'identifier', 'type', 'vendor', 'name', 'merchant', 'x'),
  fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constant(null), fc.boolean(), fc.constantFrom('EUR', 'expense')),
);
const body = fc.oneof(
  fc.constant(undefined),
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ maxLength: 300 }),
  fc.array(record, { maxLength: 5 }).map((records) => JSON.stringify({ records })),
  fc.constant(new Uint8Array(5000)),
  fc.constant('grant_type=client_credentials&client_id=demo-client&client_secret=x&scope='),
);
const headers = fc.record(
  {
    authorization: fc.constantFrom(`Bearer ${token}`, 'Bearer nope', 'Basic !!!', 'Basic ZGVtbzo=', '', 'Bearer'),
    'content-type': fc.constantFrom(
      'application/json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/json; charset=latin1',
    ),
    'content-length': fc.constantFrom('0', '3', 'abc', '99999999999', '-1'),
    'transfer-encoding': fc.constantFrom('chunked', 'gzip'),
  },
  { requiredKeys: [] },
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

function hasErrorShape(status: number, contentType: string | null, text: string): boolean {
  if (contentType === 'application/xml') return /^<\?xml[^>]*>\n<Error><Code>[A-Za-z]+<\/Code><Message>/.test(text);
  const parsed = JSON.parse(text) as Record<string, unknown>;
  const spec = parsed.code === String(status) && parsed.success === false && typeof parsed.message === 'string';
  const oauth = typeof parsed.error === 'string' && typeof parsed.error_description === 'string';
  return spec || oauth;
}

describe('emulator under random requests', () => {
  it('always answers, with a success or an error in the spec, OAuth or storage shape', async () => {
    await fc.assert(
      fc.asyncProperty(method, origin, path, query, headers, body, async (m, o, p, q, h, b) => {
        const withBody = m !== 'GET' && m !== 'HEAD' && b !== undefined;
        let request: Request;
        try {
          request = new Request(`${o}${p}${q}`, { method: m, headers: h, body: withBody ? b : undefined });
        } catch {
          return; // the Request API itself refused the combination; nothing reaches the emulator
        }
        const response = await emulator.handle(request);
        expect(response.type).not.toBe('error');
        expect(response.headers.get('x-request-id')).toBeTruthy();
        const text = await response.text();
        // An answer to HEAD has no body, as on the wire; its status and headers are those of a GET.
        if (m === 'HEAD') expect(text).toBe('');
        else if (response.status >= 400)
          expect(hasErrorShape(response.status, response.headers.get('content-type'), text)).toBe(true);
        else expect(response.status).toBe(200);
      }),
      { numRuns: 600, seed: 20240601 },
    );
  });
});
