/**
 * The emulator over real HTTP, on loopback by default. srvx turns Node's request into a fetch
 * Request and writes the Response back; this file adds only what the socket alone knows
 * (Content-Length, chunked encoding), dropping connections, and a close() that really closes.
 *
 * Addresses: token service at `{url}/auth`, data API at `{url}`, storage host at `{url}/storage`;
 * what it received at `{url}/_emulator/state` (JSON) and `{url}/_emulator/records` (JSON Lines);
 * control routes under `{url}/_emulator/` (control.ts). Every request first passes the `Host` and
 * `Origin` checks (host-guard.ts); no answer carries a CORS grant.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import { handleControl } from './control.js';
import { createPushApiHandler, type EmulatorClientOptions, type PushApiEmulator } from './handler.js';
import { acceptsFetchSite, HostAllowList } from './host-guard.js';
import { DEFAULT_SNAPSHOT_REQUESTS, RECORDS_PATH, recordLines, STATE_PATH, snapshotText } from './inspection.js';
import { INSPECTOR_PATH, INSPECTOR_REDIRECT_PATH, serveInspector } from './inspector/routes.js';
import { exposedWarning, isLoopbackAddress } from './loopback.js';
import type { EmulatorOptions } from './options.js';

/**
 * Options of {@link startEmulator}: those of the emulator, except its addresses, which follow from
 * the port it listens on.
 */
export interface StartEmulatorOptions extends Omit<EmulatorOptions, 'authUrl' | 'baseUrl' | 'uploadUrl'> {
  /** Port to listen on; 0 picks a free one. @default 0 */
  port?: number | undefined;
  /**
   * Interface to listen on. Anything but loopback emits a process warning (on stderr), since the
   * demo credentials then reach the network. @default '127.0.0.1'
   */
  host?: string | undefined;
  /**
   * The address other machines or containers reach the emulator by, such as
   * `http://emulator:4010` in docker-compose: every address the emulator hands out (`authUrl`,
   * `baseUrl`, signed upload addresses) uses it, its host is accepted in `Host` headers, and a page
   * on it (the inspector behind a proxy) is accepted in `Origin` headers. An
   * http(s) origin, without path, query or credentials. @default `http://{host}:{port}`
   */
  publicUrl?: string | undefined;
  /**
   * More names accepted in the `Host` header, such as a docker-compose service name. Any `Host`
   * other than these, `127.0.0.1`, `localhost`, `[::1]`, the `host` listened on and the `publicUrl`
   * host is answered 403 (a web page could otherwise reach the emulator through DNS rebinding).
   * @default []
   */
  allowedHosts?: readonly string[] | undefined;
}

/**
 * Answers the inspection paths, which are the emulator's own and not the service's (they are not
 * in the request log): `GET /_emulator/state` and `GET /_emulator/records`. False for any other path.
 */
function inspect(emulator: PushApiEmulator, url: URL, req: IncomingMessage, res: ServerResponse): boolean {
  if (url.pathname !== STATE_PATH && url.pathname !== RECORDS_PATH) return false;
  if (req.method !== 'GET') {
    res.writeHead(405, { allow: 'GET', 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: '405', message: 'Method Not Allowed: use GET', success: false }));
    return true;
  }
  if (url.pathname === STATE_PATH) {
    const asked = Number(url.searchParams.get('requests') ?? DEFAULT_SNAPSHOT_REQUESTS);
    const limit = Number.isSafeInteger(asked) && asked >= 0 ? asked : DEFAULT_SNAPSHOT_REQUESTS;
    res.writeHead(200, { 'content-type': 'application/json' });
    Readable.from(snapshotText(emulator, limit)).pipe(res);
  } else {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    Readable.from(recordLines(emulator)).pipe(res);
  }
  return true;
}

/** The spec's error shape for answers the socket layer gives before the emulator sees the request. */
function refuse(res: ServerResponse, status: number, message: string): void {
  // The body (a storage PUT's file, say) was not read: closing avoids draining it.
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ code: String(status), message, success: false }));
}

/**
 * Why a request must not reach the emulator, if it must not: a `Host` it was not started for (DNS
 * rebinding), including in an absolute-form target, or an `Origin` or `Sec-Fetch-Site` of another site.
 */
function refusal(hosts: HostAllowList, req: IncomingMessage, target: URL, absoluteForm: boolean): string | undefined {
  const host = req.headers.host;
  if (!hosts.acceptsHost(host) || (absoluteForm && !hosts.acceptsHost(target.host))) {
    const shown = JSON.stringify((host ?? '').slice(0, 100));
    return `Forbidden: Host ${shown} is not a name of this emulator; start it with --allowed-host for another name`;
  }
  const origin = req.headers.origin;
  if (!hosts.acceptsOrigin(origin, host)) return 'Forbidden: requests from other origins are not accepted';
  const site = header(req, 'sec-fetch-site');
  const toPage = target.pathname === INSPECTOR_PATH || target.pathname === INSPECTOR_REDIRECT_PATH;
  if (!acceptsFetchSite(site, header(req, 'sec-fetch-mode'), header(req, 'sec-fetch-dest'), toPage)) {
    return 'Forbidden: requests from pages on other sites are not accepted';
  }
  return undefined;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** An emulator listening on a real port: its addresses, its controls (`mock`), and `close()`. */
export interface RunningEmulator {
  /** `http://{host}:{port}`, or the `publicUrl` origin when one is given. */
  readonly url: string;
  /** `{url}/auth`: the token endpoint is `{authUrl}/oauth2/token`. */
  readonly authUrl: string;
  /** `{url}`: data paths are `{baseUrl}/services/push/v1/...`. */
  readonly baseUrl: string;
  /** `{url}/storage`: where signed upload addresses point. */
  readonly uploadUrl: string;
  /**
   * `{url}/_emulator/state`: what the emulator received, as JSON (records and files per app, the
   * request log with statuses, secrets redacted), for scripts that cannot read `mock.state`.
   * `?requests=N` sets how many log entries it includes (default 1000). `{url}/_emulator/records`
   * gives the received records as JSON Lines.
   */
  readonly stateUrl: string;
  /** `{url}/_emulator/`: the web inspector, a live view of requests, records, files and tokens. */
  readonly inspectorUrl: string;
  /** State, faults and controls of the served emulator. */
  readonly mock: PushApiEmulator;
  /** `http://{host}:{port}`: where it listens, which differs from `url` when `publicUrl` is given. */
  readonly listenUrl: string;
  /**
   * The options a `PushClient` needs to use this emulator with its first credential:
   * `new PushClient(emulator.clientOptions())`.
   */
  clientOptions(): EmulatorClientOptions;
  /**
   * Stops listening and closes every connection, idle keep-alive ones included; a request held in
   * a fault's `delayMs` ends at once, unprocessed, with its connection.
   */
  close(): Promise<void>;
}

/**
 * The request target is a path (RFC 9112 origin-form) on this server. Resolving it as a relative
 * URL would read `//other/x` as another host (or throw for `//%`), so it is appended instead.
 */
function targetUrl(target: string | undefined, origin: string): URL {
  const path = target ?? '/';
  return path.startsWith('/') ? new URL(`${origin}${path}`) : new URL(path, origin);
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** `publicUrl` as an origin, or a TypeError naming the option. */
function publicOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`publicUrl ${JSON.stringify(value)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('publicUrl must be an http(s) URL');
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new TypeError(
      'publicUrl must be an origin only, such as http://emulator:4010 (no path, query or credentials)',
    );
  }
  return url.origin;
}

/**
 * Starts the emulated push service over real HTTP, on a free loopback port by default. Use it when
 * the code under test does not go through msw: another process, a CLI, an undici dispatcher or
 * proxy. `PushClient` accepts its plain http addresses because they are loopback; with another
 * `host`, set `allowInsecureHttp`.
 *
 * @example
 * ```ts
 * import { PushClient } from 'push-api-client';
 * import { startEmulator } from 'push-api-client/testing';
 *
 * const emulator = await startEmulator();
 * try {
 *   const client = new PushClient({
 *     clientId: emulator.mock.clientId,
 *     clientSecret: emulator.mock.clientSecret,
 *     authUrl: emulator.authUrl,
 *     baseUrl: emulator.baseUrl,
 *     scopeBase: emulator.mock.scopeBase,
 *   });
 *   const token = await client.tokens.getToken();
 *   console.log(token.scopes); // ['https://api.push.test/connector.write']
 * } finally {
 *   await emulator.close();
 * }
 * ```
 */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<RunningEmulator> {
  const { port = 0, host = '127.0.0.1', publicUrl, allowedHosts = [], ...emulatorOptions } = options;
  const givenOrigin = publicUrl === undefined ? undefined : publicOrigin(publicUrl);
  const hosts = new HostAllowList(
    [host, ...(givenOrigin ? [new URL(givenOrigin).host] : []), ...allowedHosts],
    givenOrigin,
  );
  let emulator: PushApiEmulator | undefined;
  // Aborted by close(): a request held in a fault's delay has a timer that closing the sockets
  // alone would leave running, keeping the process (a user's test run) alive until it fires.
  const closed = new AbortController();
  let url = 'http://127.0.0.1';

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void serve(req, res);
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (!emulator) return void res.destroy();
      const target = targetUrl(req.url, url);
      const refused = refusal(hosts, req, target, !(req.url ?? '/').startsWith('/'));
      if (refused !== undefined) return refuse(res, 403, refused);
      if (inspect(emulator, target, req, res)) return;
      if (serveInspector(emulator, target, req, res)) return;
      const request = new NodeRequest({ req, res });
      const response = await (handleControl(emulator, request, target.pathname) ??
        emulator.handle(request, {
          wire: { contentLength: req.headers['content-length'], transferEncoding: req.headers['transfer-encoding'] },
          url: target,
          signal: closed.signal,
        }));
      if (response.type === 'error') {
        // An injected dropped connection: the client sees a reset, as with a crashed server.
        req.socket.destroy();
        return;
      }
      // A refused body (411, 413, 403 on a PUT...) was not read; closing avoids draining it.
      if (!req.complete) response.headers.set('connection', 'close');
      await sendNodeResponse(res, response);
    } catch {
      // Something the fetch API cannot represent (a malformed request target): answer as the
      // service would, in the spec's error shape, rather than drop the connection.
      if (res.headersSent) return void res.destroy();
      res.writeHead(400, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ code: '400', message: 'Bad Request: malformed request', success: false }));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const listenUrl = `http://${hostForUrl(host)}:${address.port}`;
  url = givenOrigin ?? listenUrl;
  if (!isLoopbackAddress(address.address)) {
    process.emitWarning(exposedWarning(listenUrl), { type: 'SecurityWarning', code: 'PUSH_API_EMULATOR_NOT_LOOPBACK' });
  }
  const served = createPushApiHandler({
    ...emulatorOptions,
    authUrl: `${url}/auth`,
    baseUrl: url,
    uploadUrl: `${url}/storage`,
    scopeBase: emulatorOptions.scopeBase,
  });
  emulator = served;

  let closing: Promise<void> | undefined;
  return {
    url,
    authUrl: `${url}/auth`,
    baseUrl: url,
    uploadUrl: `${url}/storage`,
    stateUrl: `${url}${STATE_PATH}`,
    inspectorUrl: `${url}${INSPECTOR_PATH}`,
    mock: served,
    listenUrl,
    clientOptions: () => served.clientOptions(),
    close() {
      closing ??= new Promise<void>((resolve) => {
        closed.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
