import { PushClient } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type RawAnswer, send } from '../support/raw-http.js';

let emulator: RunningEmulator;
let port: string;

beforeAll(async () => {
  emulator = await startEmulator({ allowedHosts: ['push-emulator'] });
  port = new URL(emulator.url).port;
});

afterAll(async () => {
  await emulator.close();
});

function noCorsGrant(answer: RawAnswer): void {
  expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
}

function expectRefused(answer: RawAnswer): void {
  expect(answer.status).toBe(403);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(json(answer)).toMatchObject({ code: '403', success: false });
  noCorsGrant(answer);
}

const ROUTES: { method: string; path: string; type?: string; body?: string }[] = [
  { method: 'GET', path: '/_emulator/state' },
  { method: 'GET', path: '/_emulator/records' },
  { method: 'GET', path: '/_emulator/' },
  { method: 'POST', path: '/_emulator/faults', type: 'application/json', body: '{"status":500}' },
  { method: 'DELETE', path: '/_emulator/faults' },
  { method: 'POST', path: '/_emulator/reset', type: 'application/json', body: '{}' },
  { method: 'POST', path: '/_emulator/clock', type: 'application/json', body: '{"advanceMs":1}' },
  {
    method: 'POST',
    path: '/auth/oauth2/token',
    type: 'application/x-www-form-urlencoded',
    body: 'grant_type=client_credentials&client_id=demo-client&client_secret=demo-secret-do-not-use-in-production&scope=https%3A%2F%2Fapi.push.test%2Fconnector.write',
  },
  { method: 'GET', path: '/services/push/v1/customer/apps/demo-app/upload?filenames=a.csv' },
  { method: 'POST', path: '/services/push/v1/customer/apps/demo-app/finance', type: 'application/json', body: '{}' },
  { method: 'PUT', path: '/storage/demo-app/a.csv', type: 'text/csv', body: 'id\n1\n' },
  { method: 'OPTIONS', path: '/_emulator/faults' },
  { method: 'GET', path: '/no/such/path' },
];

describe('the HTTP emulator refuses Host names it was not started for', () => {
  it.each([
    'evil.example',
    'evil.example:{port}',
    '127.0.0.1.evil.example',
    'localhost.evil.example',
    'push-emulator.evil.example',
    '127.0.0.1@evil.example',
    '',
  ])('answers Host %j with 403 JSON on every route', async (name) => {
    const host = name.replace('{port}', port);
    for (const route of ROUTES) {
      const answer = await send(`${emulator.url}${route.path}`, {
        method: route.method,
        headers: { host, ...(route.type ? { 'content-type': route.type } : {}) },
        body: route.body,
      });
      expectRefused(answer);
    }
  });

  it('refuses a request without a Host header', async () => {
    // node:http always adds a Host header to an HTTP/1.1 request, so this one is written by hand.
    const bare = await new Promise<RawAnswer>((resolve, reject) => {
      import('node:net').then(({ connect }) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.end('GET /_emulator/state HTTP/1.0\r\nConnection: close\r\n\r\n'),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          text += chunk;
        });
        socket.on('end', () => {
          const [head = '', body = ''] = text.split('\r\n\r\n');
          resolve({ status: Number(head.split(' ')[1]), headers: {}, body });
        });
        socket.on('error', reject);
      }, reject);
    });
    expect(bare.status).toBe(403);
    expect(JSON.parse(bare.body)).toMatchObject({ code: '403' });
  });

  it('refuses an absolute-form target naming another host, whatever the Host header says', async () => {
    const answer = await send(emulator.url, {
      path: 'http://evil.example/_emulator/state',
      headers: { host: `127.0.0.1:${port}` },
    });
    expectRefused(answer);
  });

  it('changes nothing when it refuses: no fault added, no file stored, clock unmoved', async () => {
    const before = emulator.mock.now();
    const host = 'attacker.example';
    await send(`${emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { host, 'content-type': 'application/json' },
      body: '{"status":500,"times":"Infinity"}',
    });
    await send(`${emulator.url}/_emulator/clock`, {
      method: 'POST',
      headers: { host, 'content-type': 'application/json' },
      body: '{"advanceMs":86400000}',
    });
    const urls = await emulator.mock.fetch(
      `${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/upload?filenames=a.csv`,
      { headers: { authorization: `Bearer ${await bearer()}` } },
    );
    const signed = ((await urls.json()) as Record<string, string>)['a.csv']!;
    const put = await send(signed, { method: 'PUT', headers: { host, 'content-length': '5' }, body: 'id\n1\n' });
    expectRefused(put);
    expect(emulator.mock.faults.list()).toEqual([]);
    expect(emulator.mock.state.file('demo-app', 'a.csv')).toBeUndefined();
    expect(emulator.mock.now() - before).toBeLessThan(60_000);
  });
});

async function bearer(): Promise<string> {
  const token = await emulator.mock.fetch(`${emulator.authUrl}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: emulator.mock.clientId,
      client_secret: emulator.mock.clientSecret,
      scope: `${emulator.mock.scopeBase}/connector.write`,
    }),
  });
  return ((await token.json()) as { access_token: string }).access_token;
}

describe('the HTTP emulator accepts the names it was started for', () => {
  it.each([
    '127.0.0.1:{port}',
    '127.0.0.1',
    'localhost:{port}',
    'LOCALHOST',
    '[::1]:{port}',
    'push-emulator',
    'push-emulator:{port}',
  ])('answers Host %j', async (name) => {
    const host = name.replace('{port}', port);
    const answer = await send(`${emulator.url}/_emulator/state`, { headers: { host } });
    expect(answer.status).toBe(200);
    noCorsGrant(answer);
  });

  it('accepts the bind address and the public URL host, and hands out the public addresses', async () => {
    const other = await startEmulator({ host: '127.0.0.2', publicUrl: 'http://emulator:4010' });
    try {
      expect(other.url).toBe('http://emulator:4010');
      expect(other.authUrl).toBe('http://emulator:4010/auth');
      expect(other.listenUrl).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
      for (const host of ['127.0.0.2', 'emulator:4010', 'emulator', 'localhost']) {
        const answer = await send(`${other.listenUrl}/_emulator/state`, { headers: { host } });
        expect(answer.status, host).toBe(200);
      }
      expectRefused(await send(`${other.listenUrl}/_emulator/state`, { headers: { host: 'emulator.evil' } }));
      const token = await send(`${other.listenUrl}/auth/oauth2/token`, {
        method: 'POST',
        headers: { host: 'emulator:4010', 'content-type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=demo-client&client_secret=${other.mock.clientSecret}&scope=${encodeURIComponent(`${other.mock.scopeBase}/connector.write`)}`,
      });
      expect(token.status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses an allowed host or public URL that is not a host name, naming it', async () => {
    await expect(startEmulator({ allowedHosts: ['evil.example/path'] })).rejects.toThrow(/evil\.example\/path/);
    await expect(startEmulator({ publicUrl: 'http://emulator:4010/base' })).rejects.toThrow(/publicUrl/);
    await expect(startEmulator({ publicUrl: 'http://user:pw@emulator:4010' })).rejects.toThrow(/publicUrl/);
  });
});

describe('the HTTP emulator grants no cross-origin access', () => {
  it('refuses requests whose Origin is another site, or null', async () => {
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1.evil.example:${port}`, 'file://']) {
      const answer = await send(`${emulator.url}/_emulator/state`, { headers: { origin } });
      expectRefused(answer);
    }
  });

  it('answers its own origin, and a CORS preflight without any grant', async () => {
    const own = await send(`${emulator.url}/_emulator/state`, { headers: { origin: emulator.url } });
    expect(own.status).toBe(200);
    noCorsGrant(own);
    const preflight = await send(`${emulator.url}/_emulator/faults`, {
      method: 'OPTIONS',
      headers: {
        host: `localhost:${port}`,
        origin: `http://localhost:${port}`,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.status).toBe(405);
    noCorsGrant(preflight);
  });

  it('accepts a page only on the origin its request was addressed to: scheme, name and port', async () => {
    const reset = (host: string, origin: string) =>
      send(`${emulator.url}/_emulator/reset`, {
        method: 'POST',
        headers: { host, origin, 'content-type': 'application/json' },
        body: '{}',
      });
    for (const [host, origin] of [
      [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
      [`LOCALHOST:${port}`, `http://localhost:${port}`],
      [`[::1]:${port}`, `http://[::1]:${port}`],
      // A container's port published on another port of the machine: the browser addresses that one.
      ['localhost:8080', 'http://localhost:8080'],
      ['push-emulator', 'http://push-emulator'],
    ] as const) {
      expect((await reset(host, origin)).status, `${host} ${origin}`).toBe(200);
    }
    // Another local server's page (a dev server), another scheme, another name of this machine.
    for (const origin of [
      'http://localhost:9999',
      'http://127.0.0.1:1',
      `https://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      'http://127.0.0.1',
    ]) {
      expectRefused(await reset(`127.0.0.1:${port}`, origin));
      expectRefused(await send(`${emulator.url}/_emulator/state`, { headers: { host: `127.0.0.1:${port}`, origin } }));
    }
  });

  it('accepts a page on the public URL origin, whatever Host a proxy sends, and no other port of it', async () => {
    const other = await startEmulator({ host: '127.0.0.2', publicUrl: 'https://emulator:4443' });
    const listenHost = new URL(other.listenUrl).host;
    const reset = (host: string, origin: string) =>
      send(`${other.listenUrl}/_emulator/reset`, {
        method: 'POST',
        headers: { host, origin, 'content-type': 'application/json' },
        body: '{}',
      });
    try {
      expect((await reset(listenHost, 'https://emulator:4443')).status).toBe(200);
      expect((await reset('emulator:4443', 'https://emulator:4443')).status).toBe(200);
      expectRefused(await reset(listenHost, 'https://emulator:9999'));
      expectRefused(await reset(listenHost, 'http://emulator:4443'));
    } finally {
      await other.close();
    }
  });

  it('lets the SDK through: PushClient over real HTTP sends no Origin', async () => {
    const client = new PushClient(emulator.clientOptions());
    const token = await client.tokens.getToken();
    expect(token.scopes).toEqual([`${emulator.mock.scopeBase}/connector.write`]);
  });
});

describe("the HTTP emulator refuses a page's requests that carry no Origin", () => {
  // What Chromium sends to 127.0.0.1 for `<img src>`, `<script src>` and `fetch(url, { mode: 'no-cors' })`
  // on a page elsewhere: no Origin (a GET), but always Sec-Fetch-Site.
  const NO_CORS = [
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'script' },
    { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty' },
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' },
  ];
  const GETS = [
    '/_emulator/state',
    '/_emulator/records',
    '/_emulator/overview',
    '/_emulator/events',
    '/_emulator/record-page?app=demo-app&q=nothing-matches',
    '/_emulator/files/demo-app/a.csv',
    '/services/push/v1/customer/apps/demo-app/upload?filenames=a.csv',
    '/no/such/path',
  ];

  it('answers 403 to a GET from a page on another site or another local port, and never serves it', async () => {
    const before = emulator.mock.state.requests.length;
    for (const headers of NO_CORS) {
      for (const path of GETS) expectRefused(await send(`${emulator.url}${path}`, { headers }));
    }
    expect(emulator.mock.state.requests.length).toBe(before);
  });

  it('answers 403 to a link from elsewhere to the event stream, which would hold one of its slots', async () => {
    const navigation = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    for (const site of ['cross-site', 'same-site']) {
      const answer = await send(`${emulator.url}/_emulator/events`, {
        headers: { ...navigation, 'sec-fetch-site': site },
      });
      expectRefused(answer);
    }
    // Typed in the address bar, or from the inspector's own page, it is still served.
    const typed = await fetch(`${emulator.url}/_emulator/events`, {
      headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    });
    expect(typed.status).toBe(200);
    await typed.body?.cancel();
  });

  it('answers 403 to a navigation from elsewhere to any route but the inspector page: it spends no fault, logs nothing', async () => {
    // A page elsewhere may navigate itself (`location = …`) to the emulator with no click: to a
    // service route, that used up a fault the developer had set for the SDK's next call.
    const navigation = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };
    const fault = emulator.mock.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    const before = emulator.mock.state.requests.length;
    try {
      for (const site of ['cross-site', 'same-site']) {
        for (const path of [...GETS, '/services/push/v1/customer/apps/demo-app/finance', '/_emulator/records']) {
          expectRefused(await send(`${emulator.url}${path}`, { headers: { ...navigation, 'sec-fetch-site': site } }));
        }
      }
      expect(emulator.mock.state.requests.length).toBe(before);
      expect(emulator.mock.faults.list()).toHaveLength(1);
    } finally {
      fault.remove();
    }
  });

  it("serves the emulator's own page, a person's own navigation and a link from elsewhere to the inspector", async () => {
    const accepted: { path: string; headers: Record<string, string> }[] = [
      { path: '/_emulator/state', headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } },
      { path: '/_emulator/', headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' } },
      {
        path: '/_emulator/',
        headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
      },
      // Node's fetch sends Sec-Fetch-Mode without Sec-Fetch-Site.
      { path: '/_emulator/state', headers: { 'sec-fetch-mode': 'cors' } },
    ];
    for (const { path, headers } of accepted) {
      expect((await send(`${emulator.url}${path}`, { headers })).status).toBe(200);
    }
    // `/_emulator` leads a link from elsewhere to the page.
    const short = await send(`${emulator.url}/_emulator`, {
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    });
    expect(short.status).toBe(308);
  });
});
