/**
 * The msw handlers and the HTTP emulator are one service: the same hostile and edge requests get
 * the same status, the same error body and the same headers from both. Each side gets a fresh
 * emulator and the same sequence of requests; what differs by nature (the origin, tokens,
 * signatures, expiry times) is normalized before comparing.
 */
import { setupServer } from 'msw/node';
import { type PushApiEmulator, startEmulator } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it } from 'vitest';
import { send } from '../support/raw-http.js';
import { financeRecord } from '../support/records.js';

interface Wire {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What one side answered, or that the connection dropped. */
type Answer = { status: number; headers: Record<string, string | undefined>; body: string } | 'dropped';

interface Side {
  emulator: PushApiEmulator;
  send(wire: Wire): Promise<Answer>;
}

const COMPARED_HEADERS = ['content-type', 'www-authenticate', 'allow', 'retry-after', 'etag', 'cache-control'];
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };
const RECORD = financeRecord();

interface Context {
  side: Side;
  token: string;
  readToken: string;
  /** A fresh signed address for `name` (asked for on this side). */
  address(name: string, type?: string): Promise<string>;
}

/** One scenario: set the emulator up if needed, then one request. */
type Step = (context: Context) => Promise<Wire> | Wire;

function tokenForm(e: PushApiEmulator, extra: Record<string, string> = {}): string {
  return new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: e.clientId,
    client_secret: e.clientSecret,
    scope: `${e.scopeBase}/connector.write`,
    ...extra,
  }).toString();
}

const tokenUrl = (e: PushApiEmulator) => `${e.authUrl}/oauth2/token`;
const dataUrl = (e: PushApiEmulator, op: 'upload' | 'finance', app = e.appId) =>
  `${e.baseUrl}/services/push/v1/customer/apps/${app}/${op}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const finance = (c: Context, body: string, headers: Record<string, string> = JSON_TYPE): Wire => ({
  method: 'POST',
  url: dataUrl(c.side.emulator, 'finance'),
  headers: { ...headers, ...bearer(c.token) },
  body,
});

const STEPS: Record<string, Step> = {
  'token: granted': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: tokenForm(e),
  }),
  'token: no content-type': ({ side: { emulator: e } }) => ({ method: 'POST', url: tokenUrl(e), body: tokenForm(e) }),
  'token: JSON body': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: JSON_TYPE,
    body: JSON.stringify({ grant_type: 'client_credentials' }),
  }),
  'token: GET': ({ side: { emulator: e } }) => ({ method: 'GET', url: tokenUrl(e) }),
  'token: HEAD': ({ side: { emulator: e } }) => ({ method: 'HEAD', url: tokenUrl(e) }),
  'token: no scope': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: `grant_type=client_credentials&client_id=${e.clientId}&client_secret=${e.clientSecret}`,
  }),
  'token: unknown scope': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: tokenForm(e, { scope: `${e.scopeBase}/admin` }),
  }),
  'token: wrong secret': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: tokenForm(e, { client_secret: 'wrong' }),
  }),
  'token: wrong secret over Basic': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: { ...FORM, authorization: `Basic ${Buffer.from(`${e.clientId}:wrong`).toString('base64')}` },
    body: 'grant_type=client_credentials&scope=x',
  }),
  'token: grant repeated': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: `${tokenForm(e)}&grant_type=client_credentials`,
  }),
  'token: password grant': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: tokenUrl(e),
    headers: FORM,
    body: tokenForm(e, { grant_type: 'password' }),
  }),
  'token: other path': ({ side: { emulator: e } }) => ({
    method: 'POST',
    url: `${e.authUrl}/oauth2/token/`,
    headers: FORM,
  }),
  'finance: stored': (c) => finance(c, JSON.stringify({ records: [RECORD] })),
  'finance: charset in content-type': (c) =>
    finance(c, JSON.stringify({ records: [RECORD] }), { 'content-type': 'application/json; charset=utf-8' }),
  'finance: text/plain': (c) => finance(c, JSON.stringify({ records: [RECORD] }), { 'content-type': 'text/plain' }),
  'finance: empty body': (c) => finance(c, ''),
  'finance: not JSON': (c) => finance(c, '{"records": ['),
  'finance: an array': (c) => finance(c, '[]'),
  'finance: 1001 records': (c) => finance(c, JSON.stringify({ records: Array.from({ length: 1001 }, () => RECORD) })),
  'finance: merchant instead of vendor': (c) =>
    finance(c, JSON.stringify({ records: [{ ...RECORD, vendor: undefined, merchant: 'Acme' }] })),
  'finance: created in seconds as a string': (c) =>
    finance(c, JSON.stringify({ records: [{ ...RECORD, created: '1717200000' }] })),
  'finance: type refund': (c) => finance(c, JSON.stringify({ records: [{ ...RECORD, type: 'refund' }] })),
  'finance: lower-case currency': (c) => finance(c, JSON.stringify({ records: [{ ...RECORD, currency: 'eur' }] })),
  'finance: null description': (c) => finance(c, JSON.stringify({ records: [{ ...RECORD, description: null }] })),
  'finance: __proto__ property': (c) =>
    finance(c, `{"records":[{"__proto__":{"x":1},${JSON.stringify(RECORD).slice(1)}]}`),
  'finance: extra body property': (c) => finance(c, JSON.stringify({ records: [], dryRun: true })),
  'finance: query parameter': (c) => ({
    ...finance(c, '{"records":[]}'),
    url: `${dataUrl(c.side.emulator, 'finance')}?dryRun=1`,
  }),
  'finance: GET': (c) => ({ method: 'GET', url: dataUrl(c.side.emulator, 'finance'), headers: bearer(c.token) }),
  'finance: HEAD': (c) => ({ method: 'HEAD', url: dataUrl(c.side.emulator, 'finance'), headers: bearer(c.token) }),
  'finance: no token': (c) => ({ ...finance(c, '{"records":[]}'), headers: JSON_TYPE }),
  'finance: Basic instead of Bearer': (c) => ({
    ...finance(c, '{"records":[]}'),
    headers: { ...JSON_TYPE, authorization: 'Basic ZGVtbzpkZW1v' },
  }),
  'finance: unknown token': (c) => ({ ...finance(c, '{"records":[]}'), headers: { ...JSON_TYPE, ...bearer('nope') } }),
  'finance: token without connector.write': (c) => ({
    ...finance(c, '{"records":[]}'),
    headers: { ...JSON_TYPE, ...bearer(c.readToken) },
  }),
  'finance: unknown app': (c) => ({
    ...finance(c, '{"records":[]}'),
    url: dataUrl(c.side.emulator, 'finance', 'no-app'),
  }),
  'finance: expired token': (c) => {
    c.side.emulator.advanceTime(3_600_000);
    return finance(c, '{"records":[]}');
  },
  'finance: revoked token': (c) => {
    c.side.emulator.revokeToken(c.token);
    return finance(c, '{"records":[]}');
  },
  'finance: over the rate limit': async (c) => {
    c.side.emulator.setRateLimit({ requests: 1, windowMs: 30_000 });
    await c.side.send(finance(c, '{"records":[]}'));
    return finance(c, '{"records":[]}');
  },
  'finance: injected 503': (c) => {
    c.side.emulator.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 2 });
    return finance(c, '{"records":[]}');
  },
  'finance: dropped after storing': (c) => {
    c.side.emulator.faults.add({ match: { operation: 'finance' }, drop: 'after' });
    return finance(c, JSON.stringify({ records: [RECORD] }));
  },
  'upload-urls: two files': (c) => ({
    method: 'GET',
    url: `${dataUrl(c.side.emulator, 'upload')}?filenames=users.csv&filenames=a%20b.csv&type=users`,
    headers: { ...JSON_TYPE, ...bearer(c.token) },
  }),
  'upload-urls: none': (c) => ({ method: 'GET', url: dataUrl(c.side.emulator, 'upload'), headers: bearer(c.token) }),
  'upload-urls: array spelling': (c) => ({
    method: 'GET',
    url: `${dataUrl(c.side.emulator, 'upload')}?filenames%5B%5D=a.csv`,
    headers: bearer(c.token),
  }),
  'upload-urls: a name twice': (c) => ({
    method: 'GET',
    url: `${dataUrl(c.side.emulator, 'upload')}?filenames=a.csv&filenames=a.csv`,
    headers: bearer(c.token),
  }),
  'upload-urls: unknown type': (c) => ({
    method: 'GET',
    url: `${dataUrl(c.side.emulator, 'upload')}?filenames=a.csv&type=invoices`,
    headers: bearer(c.token),
  }),
  'upload-urls: name ".."': (c) => ({
    method: 'GET',
    url: `${dataUrl(c.side.emulator, 'upload')}?filenames=..`,
    headers: bearer(c.token),
  }),
  'PUT: stored': async (c) => ({ method: 'PUT', url: await c.address('a.csv'), body: 'id\n1\n' }),
  'PUT: same address twice': async (c) => {
    const url = await c.address('a.csv');
    await c.side.send({ method: 'PUT', url, body: 'first' });
    return { method: 'PUT', url, body: 'second' };
  },
  'PUT: expired address': async (c) => {
    const url = await c.address('a.csv');
    c.side.emulator.advanceTime(901_000);
    return { method: 'PUT', url, body: 'x' };
  },
  'PUT: after expireSignedUrls': async (c) => {
    const url = await c.address('a.csv');
    c.side.emulator.expireSignedUrls();
    return { method: 'PUT', url, body: 'x' };
  },
  'PUT: forged signature': async (c) => {
    const url = new URL(await c.address('a.csv'));
    url.searchParams.set('signature', '0'.repeat(64));
    return { method: 'PUT', url: url.href, body: 'x' };
  },
  'PUT: type changed': async (c) => {
    const url = new URL(await c.address('a.csv', 'users'));
    url.searchParams.set('type', 'contracts');
    return { method: 'PUT', url: url.href, body: 'x' };
  },
  'PUT: expiry pushed back': async (c) => {
    const url = new URL(await c.address('a.csv'));
    url.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    return { method: 'PUT', url: url.href, body: 'x' };
  },
  'PUT: another name': async (c) => ({
    method: 'PUT',
    url: (await c.address('a.csv')).replace('/a.csv?', '/b.csv?'),
    body: 'x',
  }),
  'PUT: app removed': async (c) => {
    const url = await c.address('a.csv');
    c.side.emulator.removeApp(c.side.emulator.appId);
    return { method: 'PUT', url, body: 'x' };
  },
  'PUT: POST instead': async (c) => ({ method: 'POST', url: await c.address('a.csv'), body: 'x' }),
  'PUT: no signature': (c) => ({ method: 'PUT', url: `${c.side.emulator.uploadUrl}/demo-app/a.csv`, body: 'x' }),
  'PUT: injected 500': async (c) => {
    const url = await c.address('a.csv');
    c.side.emulator.faults.add({ match: { operation: 'upload' }, status: 500 });
    return { method: 'PUT', url, body: 'x' };
  },
  'unknown path': (c) => ({
    method: 'GET',
    url: `${c.side.emulator.baseUrl}/services/push/v2/customer/apps/demo-app/finance`,
  }),
};

async function tokenOn(side: Side, scope: string): Promise<string> {
  const e = side.emulator;
  const answer = await side.send({ method: 'POST', url: tokenUrl(e), headers: FORM, body: tokenForm(e, { scope }) });
  if (answer === 'dropped' || answer.status !== 200) throw new Error('no token');
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
}

/** Runs every step on `side`, the emulator reset before each; returns the normalized answers. */
async function runAll(side: Side): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const e = side.emulator;
  for (const [name, step] of Object.entries(STEPS)) {
    e.reset();
    const token = await tokenOn(side, `${e.scopeBase}/connector.write`);
    const readToken = await tokenOn(side, `${e.scopeBase}/report.read`);
    const context: Context = {
      side,
      token,
      readToken,
      async address(file, type) {
        const query = `filenames=${encodeURIComponent(file)}${type ? `&type=${type}` : ''}`;
        const answer = await side.send({
          method: 'GET',
          url: `${dataUrl(e, 'upload')}?${query}`,
          headers: bearer(token),
        });
        if (answer === 'dropped') throw new Error('address request dropped');
        return (JSON.parse(answer.body) as Record<string, string>)[file] ?? '';
      },
    };
    const answer = await side.send(await step(context));
    out[name] = normalize(answer, e, [token, readToken]);
  }
  return out;
}

function normalize(answer: Answer, e: PushApiEmulator, tokens: string[]): string {
  if (answer === 'dropped') return 'dropped';
  const headers = COMPARED_HEADERS.map((name) => `${name}: ${answer.headers[name] ?? '-'}`).join('\n');
  let text = `${answer.status}\n${headers}\n${answer.body}`;
  for (const token of tokens) text = text.split(token).join('<token>');
  // Scope names first: under msw the scope base and the data API share https://api.push.test.
  for (const scope of ['connector.write', 'report.read', 'admin']) {
    text = text.split(`${e.scopeBase}/${scope}`).join(`<scope base>/${scope}`);
  }
  for (const [address, marker] of [
    [e.uploadUrl, '<upload>'],
    [e.authUrl, '<auth>'],
    [e.baseUrl, '<api>'],
  ] as const) {
    text = text.split(address).join(marker);
  }
  return text
    .replace(/"access_token":"[^"]+"/g, '"access_token":"<new token>"')
    .replace(/expires=\d+/g, 'expires=<time>')
    .replace(/signature=[0-9a-f]{64}/g, 'signature=<signature>');
}

describe('msw handlers and the HTTP emulator', () => {
  it('answer every edge and hostile request alike: status, error body and headers', async () => {
    // Over HTTP first, with msw not yet listening (it would intercept node:http too).
    const running = await startEmulator();
    const overHttp = await runAll({
      emulator: running.mock,
      async send(wire) {
        try {
          const answer = await send(wire.url, { method: wire.method, headers: wire.headers, body: wire.body });
          const headers = Object.fromEntries(
            Object.entries(answer.headers).map(([name, value]) => [
              name,
              Array.isArray(value) ? value.join(', ') : value,
            ]),
          );
          return { status: answer.status, headers, body: answer.body };
        } catch {
          return 'dropped';
        }
      },
    }).finally(() => running.close());

    const mock = createPushApiMock();
    const server = setupServer(...mock.handlers);
    server.listen({ onUnhandledRequest: 'error' });
    const underMsw = await runAll({
      emulator: mock,
      async send(wire) {
        try {
          const response = await fetch(wire.url, { method: wire.method, headers: wire.headers, body: wire.body });
          return {
            status: response.status,
            headers: Object.fromEntries(response.headers),
            body: await response.text(),
          };
        } catch {
          return 'dropped';
        }
      },
    }).finally(() => server.close());

    expect(underMsw).toEqual(overHttp);
  });
});
