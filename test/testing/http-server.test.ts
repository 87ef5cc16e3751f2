import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emulatorSnapshot } from '../../src/testing/inspection.js';
import { financeRecord } from '../support/records.js';

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ maxBodyBytes: 64 * 1024 });
});

afterAll(async () => {
  await emulator.close();
});

beforeEach(() => emulator.mock.reset());

async function token(): Promise<string> {
  const response = await fetch(`${emulator.authUrl}/oauth2/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: emulator.mock.clientId,
      client_secret: emulator.mock.clientSecret,
      scope: `${emulator.mock.scopeBase}/connector.write`,
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function signedUrl(name: string): Promise<string> {
  const response = await fetch(
    `${emulator.baseUrl}/services/push/v1/customer/apps/${emulator.mock.appId}/upload?filenames=${encodeURIComponent(name)}`,
    { headers: { authorization: `Bearer ${await token()}` } },
  );
  return ((await response.json()) as Record<string, string>)[name]!;
}

/** Sends raw bytes and returns the status line and the whole answer. */
function rawHttp(text: string): Promise<string> {
  const url = new URL(emulator.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(text));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('startEmulator over real HTTP', () => {
  it('listens on loopback with the documented addresses', () => {
    expect(emulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(emulator.authUrl).toBe(`${emulator.url}/auth`);
    expect(emulator.baseUrl).toBe(emulator.url);
    expect(emulator.uploadUrl).toBe(`${emulator.url}/storage`);
  });

  it('runs token, upload addresses, PUT and finance end to end', async () => {
    const bearer = await token();
    const urlsResponse = await fetch(
      `${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/upload?filenames=users.csv&type=users`,
      { headers: { authorization: `Bearer ${bearer}` } },
    );
    const urls = (await urlsResponse.json()) as Record<string, string>;
    expect(urls['users.csv']!.startsWith(`${emulator.uploadUrl}/`)).toBe(true);
    const content = 'id\n1\n';
    const put = await fetch(urls['users.csv']!, { method: 'PUT', body: content });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe(`"${createHash('md5').update(content).digest('hex')}"`);
    const finance = await fetch(`${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/finance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ records: [financeRecord()] }),
    });
    expect(finance.status).toBe(200);
    expect(finance.headers.get('x-request-id')).toBeTruthy();
    expect(await finance.json()).toEqual({ success: true });
    expect(emulator.mock.state.records('demo-app')).toEqual([financeRecord()]);
    expect(emulator.mock.state.file('demo-app', 'users.csv')?.size).toBe(content.length);
  });

  it('answers 501 to a chunked PUT sent with node:http', async () => {
    const url = new URL(await signedUrl('a.csv'));
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, { method: 'PUT' }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.write('part one,');
      request.end('part two');
    });
    expect(status).toBe(501);
    expect(emulator.mock.state.files('demo-app')).toHaveLength(0);
  });

  it('answers 411 to a PUT on the wire with neither Content-Length nor chunked encoding', async () => {
    const url = new URL(await signedUrl('a.csv'));
    const answer = await rawHttp(
      `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 411 /);
    expect(answer).toContain('<Code>MissingContentLength</Code>');
  });

  it('answers 413 to a finance body over maxBodyBytes and closes that connection', async () => {
    const response = await fetch(`${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/finance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ records: Array.from({ length: 1000 }, () => financeRecord()) }),
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toMatchObject({ code: '413', success: false });
  });

  it('stores a multi-megabyte upload byte for byte', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, index) => index % 251);
    const response = await fetch(await signedUrl('big.bin'), { method: 'PUT', body: bytes });
    expect(response.status).toBe(200);
    expect(emulator.mock.state.file('demo-app', 'big.bin')?.sha256).toBe(
      createHash('sha256').update(bytes).digest('hex'),
    );
  });

  it('hashes a streamed upload far larger than maxStoredUploadBytes without keeping its bytes', async () => {
    const own = await startEmulator({ maxStoredUploadBytes: 1024 * 1024 });
    try {
      const bearer = await fetch(`${own.authUrl}/oauth2/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: own.mock.clientId,
          client_secret: own.mock.clientSecret,
          scope: `${own.mock.scopeBase}/connector.write`,
        }),
      }).then(async (response) => ((await response.json()) as { access_token: string }).access_token);
      const address = await fetch(`${own.baseUrl}/services/push/v1/customer/apps/demo-app/upload?filenames=big.bin`, {
        headers: { authorization: `Bearer ${bearer}` },
      }).then(async (response) => ((await response.json()) as Record<string, string>)['big.bin']!);
      const chunk = new Uint8Array(1024 * 1024).map((_, index) => index % 253);
      const chunks = 16;
      const expected = createHash('sha256');
      for (let index = 0; index < chunks; index++) expected.update(chunk);
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(address, { method: 'PUT', headers: { 'content-length': chunks * chunk.length } });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        let sent = 0;
        const write = () => {
          while (sent < chunks) {
            sent++;
            if (!request.write(chunk)) return void request.once('drain', write);
          }
          request.end();
        };
        write();
      });
      expect(status).toBe(200);
      expect(own.mock.state.file('demo-app', 'big.bin')).toMatchObject({
        size: chunks * chunk.length,
        sha256: expected.digest('hex'),
        bytes: undefined,
      });
      expect(own.mock.state.uploadStorage).toEqual({
        storedBytes: 0,
        maxStoredBytes: 1024 * 1024,
        filesWithoutBytes: 1,
      });
    } finally {
      await own.close();
    }
  });

  it('resets the socket for a dropped-connection fault, after storing when drop is "after"', async () => {
    const bearer = await token();
    emulator.mock.faults.add({ match: { operation: 'finance' }, drop: 'after' });
    const attempt = fetch(`${emulator.baseUrl}/services/push/v1/customer/apps/demo-app/finance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify({ records: [financeRecord(0, { identifier: 'after-drop' })] }),
    });
    await expect(attempt).rejects.toThrow(TypeError);
    expect(emulator.mock.state.records('demo-app').map((record) => record.identifier)).toEqual(['after-drop']);
  });

  it('writes /_emulator/state as JSON.stringify(snapshot, null, 2) would, a long log in pieces', async () => {
    // Paths that look like the snapshot's own text, escapes and non-ASCII, over many chunks of output.
    const paths = ['/x"log": []', '/caf\u00e9\\n', '/services/push/v1/customer/apps/a/finance'];
    for (let i = 0; i < 1200; i++) await fetch(`${emulator.baseUrl}${paths[i % paths.length]}?i=${i}`);
    for (const requests of ['0', '1', '5', '1200', 'lots']) {
      const body = await (await fetch(`${emulator.url}/_emulator/state?requests=${requests}`)).text();
      const limit = requests === 'lots' ? undefined : Number(requests);
      expect(body).toBe(`${JSON.stringify(emulatorSnapshot(emulator.mock, limit), null, 2)}\n`);
    }
    const whole = JSON.parse(await (await fetch(`${emulator.url}/_emulator/state?requests=1200`)).text());
    expect(whole.requests.log).toHaveLength(1200);
    expect(whole.requests.log[0].path).toBe('/x%22log%22:%20[]');
  });

  it('routes by path whatever Host header the client sends', async () => {
    const url = new URL(`${emulator.url}/services/push/v1/customer/apps/demo-app/upload?filenames=a`);
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, { headers: { host: 'localhost:4010' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end();
    });
    expect(status).toBe(401);
  });

  it('close() ends the server even with idle keep-alive connections', async () => {
    const own = await startEmulator();
    const response = await fetch(`${own.baseUrl}/nowhere`, { headers: { connection: 'keep-alive' } });
    expect(response.status).toBe(404);
    await response.text();
    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(fetch(`${own.baseUrl}/nowhere`)).rejects.toThrow();
  });

  it("close() ends a request held in a fault's delay at once, leaving no timer or socket of it", async () => {
    const own = await startEmulator();
    const count = (type: string) => process.getActiveResourcesInfo().filter((name) => name === type).length;
    const timersBefore = count('Timeout');
    const socketsBefore = count('TCPSocketWrap');
    own.mock.faults.add({ delayMs: 5_000 });
    const held = fetch(`${own.baseUrl}/nowhere`).then(
      () => 'answered',
      () => 'failed',
    );
    while (own.mock.faults.injected === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // The held request's timer is among these; another of the thread's timers may have ended
    // meanwhile, so the count is compared with itself after close() as well as with the start.
    const timersHeld = count('Timeout');
    const started = performance.now();
    await own.close();
    expect(await held).toBe('failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(count('Timeout')).toBeLessThan(timersHeld);
    expect(count('Timeout')).toBeLessThanOrEqual(timersBefore);
    expect(count('TCPSocketWrap')).toBeLessThanOrEqual(socketsBefore);
  });

  it("holds a dozen requests in a fault's delay without a listener each on the close signal; close() ends them all", async () => {
    const own = await startEmulator();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      own.mock.faults.add({ delayMs: 5_000, times: Infinity });
      const held = Array.from({ length: 12 }, () =>
        fetch(`${own.baseUrl}/nowhere`).then(
          () => 'answered',
          () => 'failed',
        ),
      );
      while (own.mock.faults.injected < 12) await new Promise((resolve) => setTimeout(resolve, 5));
      // Node emits the warning on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((name) => name === 'MaxListenersExceededWarning')).toEqual([]);
      const started = performance.now();
      await own.close();
      expect(await Promise.all(held)).toEqual(Array(12).fill('failed'));
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      process.off('warning', onWarning);
      await own.close();
    }
  });
});
