import type { PushClientOptions } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createProxiedClient } from '../../examples/behind-a-proxy.js';
import { type LoopbackProxy, startLoopbackProxy, VIA } from './loopback-proxy.js';

let emulator: RunningEmulator;
let proxy: LoopbackProxy;

/**
 * `push-api.invalid` never resolves: only the proxy, which maps it to the emulator, can reach it.
 * `dataHost` names the data API: the emulator hands out signed addresses on 127.0.0.1, which the
 * client accepts only from a data API on loopback too (a remote one may not send files here).
 */
function optionsVia(host: string, dataHost = host): PushClientOptions {
  const port = new URL(emulator.url).port;
  return {
    clientId: emulator.mock.clientId,
    clientSecret: emulator.mock.clientSecret,
    authUrl: `http://${host}:${port}/auth`,
    baseUrl: `http://${dataHost}:${port}`,
    scopeBase: emulator.mock.scopeBase,
    // http to a host that is not loopback; the test proxy and emulator speak plain http.
    allowInsecureHttp: true,
  };
}

const records = Array.from({ length: 10 }, (_, i) => ({
  created: Date.UTC(2025, 0, 1 + i),
  amount: 10 + i,
  currency: 'USD',
  identifier: `user${i}@example.com`,
  type: 'expense' as const,
  vendor: 'Acme',
}));

beforeAll(async () => {
  // The proxy forwards the names the client used: the emulator accepts this one as its own.
  emulator = await startEmulator({ allowedHosts: ['push-api.invalid'] });
  const { port } = new URL(emulator.url);
  proxy = await startLoopbackProxy({ host: '127.0.0.1', port: Number(port) });
});

afterEach(() => {
  vi.unstubAllEnvs();
  emulator.mock.reset();
  proxy.requests.length = 0;
  proxy.tunnels.length = 0;
});

afterAll(async () => {
  await proxy?.close();
  await emulator?.close();
});

describe('behind-a-proxy recipe', () => {
  it('sends token, upload and finance requests through HTTP_PROXY as absolute-form requests', async () => {
    for (const name of ['HTTP_PROXY', 'http_proxy']) vi.stubEnv(name, proxy.url);
    // Some environments set NO_PROXY=localhost,127.0.0.1; the storage host here is 127.0.0.1.
    for (const name of ['NO_PROXY', 'no_proxy']) vi.stubEnv(name, '');
    const { client, dispatcher } = createProxiedClient(optionsVia('push-api.invalid', 'localhost'), {
      proxyTunnel: false,
    });
    try {
      await client.tokens.getToken();
      const upload = await client.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data: 'id\n1\n' }]);
      const report = await client.finance.publish(emulator.mock.appId, records);
      expect(upload.filesUploaded).toBe(1);
      expect(report.recordsSent).toBe(10);
    } finally {
      await dispatcher.close();
    }

    const port = new URL(emulator.url).port;
    expect(proxy.requests).toEqual([
      `POST http://push-api.invalid:${port}/auth/oauth2/token`,
      `GET http://localhost:${port}/services/push/v1/customer/apps/${emulator.mock.appId}/upload`,
      `PUT http://127.0.0.1:${port}/storage/${emulator.mock.appId}/users.csv`,
      `POST http://localhost:${port}/services/push/v1/customer/apps/${emulator.mock.appId}/finance`,
    ]);
    const seen = emulator.mock.state.requests;
    expect(seen).toHaveLength(4);
    expect(seen.every((request) => request.headers.via === VIA)).toBe(true);
  });

  it('tunnels through CONNECT by default, as it does for the https API', async () => {
    const { client, dispatcher } = createProxiedClient(optionsVia('push-api.invalid'), {
      httpProxy: proxy.url,
      noProxy: '',
    });
    try {
      const report = await client.finance.publish(emulator.mock.appId, records);
      expect(report.recordsSent).toBe(10);
    } finally {
      await dispatcher.close();
    }

    const port = new URL(emulator.url).port;
    expect(proxy.requests).toEqual([]);
    expect(new Set(proxy.tunnels)).toEqual(new Set([`push-api.invalid:${port}`]));
    expect(emulator.mock.state.recordCount(emulator.mock.appId)).toBe(10);
  });

  it('goes direct for hosts listed in NO_PROXY', async () => {
    const { client, dispatcher } = createProxiedClient(optionsVia('127.0.0.1'), {
      httpProxy: proxy.url,
      noProxy: 'localhost,127.0.0.1',
      proxyTunnel: false,
    });
    try {
      const report = await client.finance.publish(emulator.mock.appId, records);
      expect(report.recordsSent).toBe(10);
    } finally {
      await dispatcher.close();
    }

    expect(proxy.requests).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
    expect(emulator.mock.state.requests.every((request) => request.headers.via === undefined)).toBe(true);
  });
});
