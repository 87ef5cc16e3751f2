import type { buildConnector, Client, Dispatcher, Pool } from 'undici';
import { ConnectionError } from '../index.js';

/** How long a proxy has to open a tunnel: undici's own bound on opening a direct connection. */
const TUNNEL_TIMEOUT_MS = 10_000;

type AgentFactory = (origin: string | URL, options: Pool.Options & Client.Options) => Dispatcher;

/**
 * The `factory` of a `ProxyAgent` whose tunnels fail as a request that was not sent. undici's
 * tunnel, when the proxy closes the connection without answering the `CONNECT` (or answers
 * something that is not HTTP), fails with a socket error that its connection pool takes for a
 * passing one: it opens the next tunnel at once, and again, more than a thousand times a second,
 * even after the request was given up, until the process ends. A proxy that never answers holds
 * the request until its own timeout, which then looks like a request that may have been sent.
 * Here either ends the tunnel's attempt with a ConnectionError whose request was not sent (the
 * request is written only once the tunnel is open), so the SDK retries it with its backoff and
 * counts nothing as unknown. Errors undici words well (a refusal such as a 407, a certificate of
 * the target) pass unchanged.
 */
export function tunnelFactory(
  undici: { Pool: typeof Pool; Client: typeof Client },
  proxyUrl: string,
  timeoutMs = TUNNEL_TIMEOUT_MS,
): AgentFactory {
  const proxy = new URL(proxyUrl);
  const proxyOrigin = proxy.origin;
  const proxyHost = proxy.host;
  return (origin, options) => {
    // The proxy's own pool (absolute-form requests for http targets) connects as usual.
    const tunnelled = new URL(String(origin)).origin !== proxyOrigin && options.connect !== undefined;
    const connect =
      tunnelled && typeof options.connect === 'function'
        ? guardTunnel(options.connect, proxyHost, timeoutMs)
        : options.connect;
    const settings = { ...options, ...(connect !== undefined && { connect }) };
    return settings.connections === 1 ? new undici.Client(origin, settings) : new undici.Pool(origin, settings);
  };
}

/** Whether `error` is one undici words well enough to pass unchanged (see tunnelFactory). */
function passesUnchanged(error: Error): boolean {
  // Already worded for the CLI (guardProxyTls).
  if (error instanceof ConnectionError) return true;
  const code = (error as { code?: unknown }).code;
  // UND_ERR_PRX_CONN: what undici releases after 7.x call a tunnel the proxy dropped (their own end
  // to the loop), worded here like the rest.
  return (
    typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'UND_ERR_PRX_CONN' && !code.startsWith('HPE_')
  );
}

/**
 * An https:// proxy URL makes the connection to the proxy itself TLS. Most proxies speak plain
 * HTTP on their port (an https address still goes through a CONNECT tunnel, with TLS end to end),
 * and the handshake then fails with an OpenSSL code that names neither the proxy nor the cause,
 * which the CLI would report against the service's address. Here it names the proxy and the fix.
 */
/**
 * The `clientFactory` of a `ProxyAgent`: the client that speaks to the proxy itself (its CONNECTs,
 * and with an https:// proxy URL every request). For an https:// URL its TLS handshake failures
 * name the proxy (see guardProxyTls); an http:// URL keeps undici's own client.
 */
export function proxyClientFactory(
  undici: { Pool: typeof Pool },
  proxyUrl: string,
): ((origin: URL, options: { connect: buildConnector.connector }) => Dispatcher) | undefined {
  const proxy = new URL(proxyUrl);
  if (proxy.protocol !== 'https:') return undefined;
  return (origin, options) =>
    new undici.Pool(origin, { ...options, connect: guardProxyTls(options.connect, proxy.host) });
}

function guardProxyTls(connect: buildConnector.connector, proxyHost: string): buildConnector.connector {
  return (options, callback) => {
    connect(options, (...args) => {
      const [error] = args;
      const code = (error as { code?: unknown } | null)?.code;
      if (error === null || typeof code !== 'string' || !(code.startsWith('ERR_SSL_') || code === 'EPROTO')) {
        callback(...args);
        return;
      }
      const message = `no TLS with the proxy ${proxyHost} (${code}): the proxy URL says https://, but this proxy does not speak TLS on its port; most proxies take http:// (an https address is still tunnelled, with TLS end to end)`;
      callback(new ConnectionError(message, { requestMaybeSent: false }), null);
    });
  };
}

function guardTunnel(
  connect: buildConnector.connector,
  proxyHost: string,
  timeoutMs: number,
): buildConnector.connector {
  return (options, callback) => {
    const target = `${options.hostname}:${options.port || (options.protocol === 'https:' ? 443 : 80)}`;
    let settled = false;
    const settle: buildConnector.Callback = (...args) => {
      if (settled) {
        // A tunnel that opened after its attempt was given up is closed, never used.
        args[1]?.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      const [error] = args;
      if (error === null || passesUnchanged(error)) {
        callback(...args);
        return;
      }
      const message = `no tunnel to ${target}: the proxy ${proxyHost} did not answer CONNECT (it closed the connection, or answered what is not HTTP)`;
      callback(new ConnectionError(message, { requestMaybeSent: false }), null);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      const message = `no tunnel to ${target}: the proxy ${proxyHost} did not answer CONNECT within ${timeoutMs} ms`;
      callback(new ConnectionError(message, { requestMaybeSent: false }), null);
    }, timeoutMs);
    timer.unref?.();
    connect(options, settle);
  };
}
