import type { Dispatcher } from 'undici';
import type { ConcurrencyHookEvent, PushClientHooks, ResponseHookEvent, RetryHookEvent } from '../index.js';
import { UsageError } from './exit-codes.js';
import { parseNoProxy } from './no-proxy.js';
import { proxyClientFactory, tunnelFactory } from './proxy-tunnel.js';

/** The proxy variables, lower-case first: curl's order, and undici's. */
const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY'] as const;

function firstSet(env: NodeJS.ProcessEnv, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) return value;
  }
  return undefined;
}

/**
 * The proxy URL that `lower` (else `upper`) holds, checked: an http or https URL. The message
 * names the variable, never its value, which may hold the proxy's password.
 */
function proxyUrl(env: NodeJS.ProcessEnv, lower: string, upper: string): string | undefined {
  const name = env[lower] !== undefined ? lower : upper;
  const value = env[name]?.trim();
  // Set but empty: no proxy (undefined would make undici read process.env for itself).
  if (!value) return env[name] === undefined ? undefined : '';
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new UsageError(
      `${name} is not a proxy URL: expected http://host:port (or https://), with user:password@ if needed`,
    );
  }
  return value;
}

/**
 * A dispatcher that honours `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (either case; lower-case
 * wins, as with curl) when a proxy variable is set, else undefined: Node's fetch ignores these
 * variables. undici is imported only then, so that runs without a proxy never pay for loading it.
 * `NO_PROXY` is read here (no-proxy.ts), not by undici's `EnvHttpProxyAgent`, which reads no
 * CIDR range nor bare IPv6 address, and `*` only as the whole value: forms curl, Go and Python take.
 */
export async function proxyDispatcher(env: NodeJS.ProcessEnv = process.env): Promise<Dispatcher | undefined> {
  if (!PROXY_VARIABLES.some((name) => env[name]?.trim())) return undefined;
  const httpProxy = proxyUrl(env, 'http_proxy', 'HTTP_PROXY');
  const httpsProxy = proxyUrl(env, 'https_proxy', 'HTTPS_PROXY');
  const noProxy = parseNoProxy(firstSet(env, 'no_proxy', 'NO_PROXY') ?? '');
  const undici = await import('undici');
  const { Agent, ProxyAgent, Dispatcher } = undici;
  const direct = new Agent();
  // Plain http targets are sent to the proxy in absolute form, as curl does; https ones always
  // go through a CONNECT tunnel, so TLS stays end to end.
  const through = (uri: string) => {
    const clientFactory = proxyClientFactory(undici, uri);
    return new ProxyAgent({
      uri,
      proxyTunnel: false,
      factory: tunnelFactory(undici, uri),
      ...(clientFactory !== undefined && { clientFactory }),
    });
  };
  const forHttp = httpProxy ? through(httpProxy) : direct;
  // An https address without HTTPS_PROXY goes through HTTP_PROXY, as undici's EnvHttpProxyAgent
  // (and npm) do; curl would go direct.
  const forHttps = httpsProxy ? through(httpsProxy) : forHttp;
  const all = [...new Set([direct, forHttp, forHttps])];

  class ProxyRouter extends Dispatcher {
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const url = new URL(String(options.origin));
      const via = noProxy.bypasses(url) ? direct : url.protocol === 'https:' ? forHttps : forHttp;
      return via.dispatch(options, handler);
    }
    override close(): Promise<void>;
    override close(callback: () => void): void;
    override close(callback?: () => void): Promise<void> | undefined {
      const closed = Promise.all(all.map((agent) => agent.close())).then(() => undefined);
      if (callback === undefined) return closed;
      void closed.then(callback);
      return undefined;
    }
    override destroy(): Promise<void>;
    override destroy(err: Error | null): Promise<void>;
    override destroy(callback: () => void): void;
    override destroy(err: Error | null, callback: () => void): void;
    override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | undefined {
      const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null);
      const done = typeof errOrCallback === 'function' ? errOrCallback : callback;
      const destroyed = Promise.all(all.map((agent) => agent.destroy(err))).then(() => undefined);
      if (done === undefined) return destroyed;
      void destroyed.then(done);
      return undefined;
    }
  }
  return new ProxyRouter();
}

function attemptLine(event: ResponseHookEvent | RetryHookEvent): string {
  const status = event.status === undefined ? `no answer (${event.error ?? 'error'})` : String(event.status);
  const id = event.requestId === undefined ? '' : ` request-id=${event.requestId}`;
  return `${event.operation} ${event.method} ${event.url} attempt=${event.attempt} status=${status}${id}`;
}

function windowLine(event: ConcurrencyHookEvent): string {
  const rtt = event.rttMs === undefined ? '' : ` rtt=${event.rttMs}ms`;
  const minRtt = event.minRttMs === undefined ? '' : ` min-rtt=${event.minRttMs}ms`;
  const change = event.reason === 'start' ? `${event.limit}` : `${event.previous} -> ${event.limit}`;
  return `${event.operation} ${change} (${event.reason}) in-flight=${event.inFlight}${rtt}${minRtt}`;
}

/**
 * `--verbose`: one stderr line per HTTP attempt, one per retry with its delay, and one per change
 * of the in-flight window with its reason. Built only on
 * the SDK's hook events, which carry no header value, body or query string, so no token, secret
 * or signed address signature can reach these lines.
 */
export function verboseHooks(write: (line: string) => void): PushClientHooks {
  return {
    response: (event) => write(`push-api: http ${attemptLine(event)} ${Math.round(event.durationMs)}ms`),
    retry: (event) => write(`push-api: retry ${attemptLine(event)} in ${Math.round(event.delayMs)}ms`),
    concurrency: (event) => write(`push-api: window ${windowLine(event)}`),
  };
}
