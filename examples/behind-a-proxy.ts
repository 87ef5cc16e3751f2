/**
 * Recipe: reach the Push API through an HTTP(S) proxy, such as a corporate egress proxy.
 *
 * undici's `EnvHttpProxyAgent` reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY (lower-case names win)
 * the way curl does, and PushClient sends every request through the `dispatcher` it is given:
 * token, upload addresses, the PUTs to signed storage addresses, and finance batches.
 *
 *   HTTPS_PROXY=http://proxy.example.com:3128 NO_PROXY=localhost npx tsx examples/behind-a-proxy.ts
 *
 * Notes:
 * - https targets (the real API) go through a CONNECT tunnel, so TLS stays end to end. For http
 *   targets undici also tunnels by default; `proxyTunnel: false` sends plain absolute-form requests,
 *   which some proxies require.
 * - NO_PROXY has no built-in entries: loopback is proxied too unless NO_PROXY lists it
 *   (`NO_PROXY=localhost,127.0.0.1`). Entries match the host and its subdomains, optionally a port.
 * - A proxy that closes the connection without answering a CONNECT makes undici 7's ProxyAgent
 *   open tunnel after tunnel, without pause, until the process ends; such a proxy is named in no
 *   error. The `push-api` command guards its tunnels against it; a long-lived service behind a
 *   flaky proxy should watch for it.
 * - Without PUSH_* variables the demo uses the embedded emulator on 127.0.0.1.
 */
import { pathToFileURL } from 'node:url';
import { PushClient, type PushClientOptions } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';
import { EnvHttpProxyAgent } from 'undici';

/** A client whose requests honour the proxy settings; close the dispatcher when done. */
export function createProxiedClient(
  options: PushClientOptions = {},
  proxy: EnvHttpProxyAgent.Options = {},
): { client: PushClient; dispatcher: EnvHttpProxyAgent } {
  const dispatcher = new EnvHttpProxyAgent(proxy);
  return { client: new PushClient({ ...options, dispatcher }), dispatcher };
}

export async function main(log: (line: string) => void = console.log): Promise<void> {
  const usePushEnv = Object.keys(process.env).some((name) => name.startsWith('PUSH_'));
  const emulator = usePushEnv ? undefined : await startEmulator();
  const { client, dispatcher } = createProxiedClient(
    emulator
      ? {
          clientId: emulator.mock.clientId,
          clientSecret: emulator.mock.clientSecret,
          authUrl: emulator.authUrl,
          baseUrl: emulator.baseUrl,
          scopeBase: emulator.mock.scopeBase,
        }
      : {},
  );
  try {
    const proxy =
      process.env.https_proxy ?? process.env.HTTPS_PROXY ?? process.env.http_proxy ?? process.env.HTTP_PROXY;
    log(
      `Proxy: ${proxy ? new URL(proxy).host : 'none (direct)'}; NO_PROXY: ${process.env.no_proxy ?? process.env.NO_PROXY ?? ''}`,
    );
    const token = await client.tokens.getToken();
    log(`Token received, expires ${token.expiresAt.toISOString()}`);
  } finally {
    await dispatcher.close();
    await emulator?.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
