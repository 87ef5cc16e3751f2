/**
 * The CLI's proxy dispatcher against a proxy that closes, garbles or ignores a CONNECT: each
 * attempt ends once, as a request that was not sent, and nothing is retried behind the SDK's
 * back (undici alone opens tunnel after tunnel, more than a thousand a second, for ever).
 */
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConnectionError, PublishStoppedError, PushClient, type PushClientOptions } from 'push-api-client';
import { DEMO_APP_ID, startEmulator } from 'push-api-client/testing';
import * as undici from 'undici';
import { type Dispatcher, ProxyAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { tunnelFactory } from '../../src/cli/proxy-tunnel.js';
import { proxyDispatcher } from '../../src/cli/transport.js';
import { startLoopbackProxy } from '../examples/loopback-proxy.js';
import { financeRecords } from '../support/records.js';
import { selfSignedCertificate, startTlsFront } from '../support/tls.js';

type Behaviour = 'close' | 'garbage' | 'stall';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A proxy on 127.0.0.1 that meets every CONNECT with `behaviour`, counting them. */
async function badProxy(behaviour: Behaviour): Promise<{ url: string; connects: () => number }> {
  let connects = 0;
  const server: Server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => {
      connects++;
      if (behaviour === 'close') socket.destroy();
      else if (behaviour === 'garbage') socket.end('SSH-2.0-not-a-proxy\r\n\r\n');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => {
    server.close();
    return Promise.resolve();
  });
  const url = `http://user:pass@127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, connects: () => connects };
}

function client(dispatcher: Dispatcher, options: PushClientOptions = {}): PushClient {
  closers.push(() => dispatcher.destroy());
  return new PushClient({
    clientId: 'id',
    clientSecret: 'secret',
    authUrl: 'https://auth.push.test',
    baseUrl: 'https://api.push.test',
    scopeBase: 'https://api.push.test',
    env: {},
    dispatcher,
    timeoutMs: 5_000,
    maxRetries: 2,
    backoff: { initialDelayMs: 1, maxDelayMs: 1 },
    ...options,
  });
}

describe('the CLI proxy dispatcher, against a proxy that does not answer CONNECT', () => {
  it.each(['close', 'garbage'] as const)(
    'a proxy that answers with %s: one CONNECT per attempt, not sent, and none after',
    async (behaviour) => {
      const proxy = await badProxy(behaviour);
      const dispatcher = await proxyDispatcher({ HTTPS_PROXY: proxy.url });
      if (dispatcher === undefined) throw new Error('no dispatcher for HTTPS_PROXY');
      const error = await client(dispatcher)
        .tokens.getToken()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ requestMaybeSent: false });
      expect((error as Error).message).toMatch(
        /^no tunnel to auth\.push\.test:443: the proxy 127\.0\.0\.1:\d+ did not answer CONNECT/,
      );
      expect((error as Error).message).not.toContain('pass');
      expect(proxy.connects()).toBe(3);
      await sleep(200);
      expect(proxy.connects()).toBe(3);
    },
  );

  it('a proxy that never answers: the tunnel gives up at its own bound, as not sent', async () => {
    const proxy = await badProxy('stall');
    const dispatcher = new ProxyAgent({ uri: proxy.url, factory: tunnelFactory(undici, proxy.url, 100) });
    const error = await client(dispatcher, { maxRetries: 0 })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ requestMaybeSent: false });
    expect((error as Error).message).toMatch(/did not answer CONNECT within 100 ms$/);
    expect(proxy.connects()).toBe(1);
  });

  it('a finance batch whose tunnel closed is failed, never unknown, and the run stops', async () => {
    const proxy = await badProxy('close');
    const emulator = await startEmulator({ port: 0 });
    closers.push(() => emulator.close());
    // The token comes direct from the emulator; the data API only through the proxy.
    const dispatcher = await proxyDispatcher({ HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' });
    if (dispatcher === undefined) throw new Error('no dispatcher for HTTPS_PROXY');
    const error = await client(dispatcher, { ...emulator.clientOptions(), baseUrl: 'https://api.push.test' })
      .finance.publish(DEMO_APP_ID, financeRecords(3), { batchSize: 1, concurrency: 1 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { report } = error as PublishStoppedError;
    expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0, recordsNotRead: 2 });
    expect(proxy.connects()).toBe(3);
  });
});

describe('a proxy tunnel to a certificate for another name', () => {
  it('a finance batch is failed, never unknown, and the run stops', async () => {
    const certificate = selfSignedCertificate();
    closers.push(() => Promise.resolve(certificate.remove()));
    const emulator = await startEmulator({ port: 0 });
    closers.push(() => emulator.close());
    const front = await startTlsFront(Number(new URL(emulator.url).port), {
      key: certificate.key,
      cert: certificate.cert,
    });
    closers.push(() => front.close());
    // The proxy sends api.invalid to the TLS front, whose certificate names localhost only.
    const proxy = await startLoopbackProxy({ host: '127.0.0.1', port: Number(new URL(front.url).port) });
    closers.push(() => proxy.close());
    // The certificate is trusted, so that its name is what fails (NODE_EXTRA_CA_CERTS, in the CLI).
    const dispatcher = new ProxyAgent({
      uri: proxy.url,
      requestTls: { ca: certificate.cert },
      factory: tunnelFactory(undici, proxy.url),
    });
    const error = await client(dispatcher, { ...emulator.clientOptions(), baseUrl: 'https://api.invalid' })
      .finance.publish(DEMO_APP_ID, financeRecords(2), { batchSize: 1, concurrency: 1 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { report, cause } = error as PublishStoppedError;
    expect(cause).toMatchObject({ requestMaybeSent: false });
    expect((cause as Error).message).toMatch(
      /^finance request failed: ERR_TLS_CERT_ALTNAME_INVALID \(Hostname\/IP does not match/,
    );
    expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0, recordsNotRead: 1 });
    expect(proxy.tunnels.filter((tunnel) => tunnel === 'api.invalid:443')).toHaveLength(3);
    expect(emulator.mock.state.records(DEMO_APP_ID)).toHaveLength(0);
  });
});

describe('an https:// proxy URL for a proxy that speaks plain HTTP', () => {
  // Most proxies take http:// even for https addresses; an https:// URL then fails its handshake
  // with an OpenSSL code that the CLI reported against the service's address.
  it.each([
    ['HTTPS_PROXY', 'https://auth.push.test'],
    ['HTTP_PROXY', 'http://auth.push.test'],
  ])('%s: one line naming the proxy and the fix, never the password, as not sent', async (variable, authUrl) => {
    const proxy = await startLoopbackProxy({ host: '127.0.0.1', port: 9 });
    closers.push(() => proxy.close());
    const url = proxy.url.replace('http://', 'https://user:p%40ss@');
    const dispatcher = await proxyDispatcher({ [variable]: url });
    if (dispatcher === undefined) throw new Error(`no dispatcher for ${variable}`);
    const error = await client(dispatcher, { authUrl, allowInsecureHttp: true, maxRetries: 0 })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ requestMaybeSent: false });
    const { port } = new URL(proxy.url);
    expect((error as Error).message).toMatch(
      new RegExp(`^no TLS with the proxy 127\\.0\\.0\\.1:${port} \\(ERR_SSL_[A-Z_]+\\): the proxy URL says https://`),
    );
    expect((error as Error).message).not.toMatch(/p%40ss|p@ss/);
    expect(proxy.requests).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });
});
