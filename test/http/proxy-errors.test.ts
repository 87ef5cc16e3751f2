/**
 * A proxy that refuses to open a tunnel (407 for a wrong password, 403 for a host its policy
 * forbids, 502 when it cannot reach the host): nothing reached the service, so the request is
 * never an unknown outcome; a 4xx of the proxy is a configuration error, not retried; the error
 * says so in words, never with the proxy's password. Loopback only: the proxy refuses every
 * CONNECT, so nothing goes further.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ConfigurationError,
  ConnectionError,
  PublishStoppedError,
  PushClient,
  type PushClientOptions,
} from 'push-api-client';
import { DEMO_APP_ID, startEmulator } from 'push-api-client/testing';
import { EnvHttpProxyAgent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { financeRecords } from '../support/records.js';

const PASSWORD = 'wr@ng pass';
let proxy: http.Server;
let proxyPort: number;
/** The status the proxy answers every CONNECT with, and the CONNECTs it saw. */
let refusal = 407;
const tunnels: string[] = [];

beforeAll(async () => {
  proxy = http.createServer((_request, response) => {
    response.writeHead(407, { 'proxy-authenticate': 'Basic realm="proxy"' }).end();
  });
  proxy.on('connect', (request, socket) => {
    tunnels.push(request.url ?? '');
    socket.end(`HTTP/1.1 ${refusal} Refused\r\nProxy-Authenticate: Basic realm="proxy"\r\nContent-Length: 0\r\n\r\n`);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  proxyPort = (proxy.address() as AddressInfo).port;
});
afterAll(() => {
  proxy.close();
});

/** Through the refusing proxy, with a password that percent-encoding changes. */
function proxiedDispatcher(noProxy = ''): EnvHttpProxyAgent {
  const url = `http://user:${encodeURIComponent(PASSWORD)}@127.0.0.1:${proxyPort}`;
  // A tunnel for http targets too, so that a loopback emulator can stand behind the CONNECT.
  return new EnvHttpProxyAgent({ httpProxy: url, httpsProxy: url, noProxy, proxyTunnel: true });
}

function tokenClient(dispatcher: EnvHttpProxyAgent, options: PushClientOptions = {}): PushClient {
  return new PushClient({
    clientId: 'id',
    clientSecret: 'secret',
    authUrl: 'https://auth.push.test',
    baseUrl: 'https://api.push.test',
    scopeBase: 'https://api.push.test',
    env: {},
    dispatcher,
    backoff: { initialDelayMs: 1, maxDelayMs: 1 },
    ...options,
  });
}

function expectNoPassword(error: unknown): void {
  for (const text of [(error as Error).message, JSON.stringify(error), String((error as Error).cause ?? '')]) {
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(encodeURIComponent(PASSWORD));
  }
}

describe('a proxy that refuses the tunnel', () => {
  it.each([
    [
      407,
      /token request not sent: the proxy refused to open a tunnel \(407 Proxy Authentication Required: check the user and password in the proxy URL\)/,
    ],
    [
      403,
      /token request not sent: the proxy refused to open a tunnel \(403 Forbidden: the proxy does not allow this host\)/,
    ],
  ])('with a %i: a ConfigurationError naming it, sent once, never with the password', async (status, message) => {
    refusal = status;
    tunnels.length = 0;
    const dispatcher = proxiedDispatcher();
    const error = await tokenClient(dispatcher, { maxRetries: 3 })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    await dispatcher.close();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(message);
    expect(tunnels).toEqual(['auth.push.test:443']);
    expectNoPassword(error);
  });

  it('with a 407 to a plain http request it was to forward: a ConfigurationError naming it, sent once', async () => {
    let forwarded = 0;
    proxy.once('request', () => forwarded++);
    const url = `http://user:${encodeURIComponent(PASSWORD)}@127.0.0.1:${proxyPort}`;
    const dispatcher = new EnvHttpProxyAgent({ httpProxy: url, noProxy: '', proxyTunnel: false });
    const error = await tokenClient(dispatcher, { authUrl: 'http://127.0.0.1:4999', maxRetries: 3 })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    await dispatcher.close();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(
      'token request not sent: the proxy refused to forward it (407 Proxy Authentication Required: check the user and password in the proxy URL)',
    );
    expect(forwarded).toBe(1);
    expectNoPassword(error);
  });

  it('with a 502: a ConnectionError whose request was not sent, retried', async () => {
    refusal = 502;
    tunnels.length = 0;
    const dispatcher = proxiedDispatcher();
    const error = await tokenClient(dispatcher, { maxRetries: 2 })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    await dispatcher.close();
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ requestMaybeSent: false });
    expect((error as Error).message).toBe('token request not sent: the proxy refused to open a tunnel (502)');
    expect(tunnels).toHaveLength(3);
    expectNoPassword(error);
  });

  it('refusing the data API only: the batch is failed, not unknown, and the run stops', async () => {
    refusal = 403;
    tunnels.length = 0;
    const emulator = await startEmulator({ port: 0 });
    // The token goes direct (127.0.0.1 is in NO_PROXY); the data API, named localhost, through the proxy.
    const dispatcher = proxiedDispatcher('127.0.0.1');
    const options = emulator.clientOptions();
    const client = tokenClient(dispatcher, { ...options, baseUrl: options.baseUrl.replace('127.0.0.1', 'localhost') });
    const error = await client.finance
      .publish(DEMO_APP_ID, financeRecords(4), { batchSize: 1, concurrency: 1 })
      .catch((caught: unknown) => caught);
    await dispatcher.close();
    const stored = emulator.mock.state.records(DEMO_APP_ID).length;
    await emulator.close();
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { report, cause } = error as PublishStoppedError;
    expect(cause).toBeInstanceOf(ConfigurationError);
    expect(report.batches.map((batch) => batch.status)).toEqual(['failed']);
    expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0, recordsNotRead: 3 });
    expect(tunnels).toHaveLength(1);
    expect(stored).toBe(0);
  });
});
