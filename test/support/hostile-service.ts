/**
 * A service on 127.0.0.1 that plays the push API (token endpoint, upload addresses, finance,
 * storage PUTs) well by default, and badly wherever a test's `misbehave` answers instead. Closed
 * after each test (through useLoopbackServers).
 */
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConcurrencyHookEvent, PublishReport, PushClient, PushClientOptions } from 'push-api-client';
import type { EmulatorClientOptions } from 'push-api-client/testing';
import { clientFor } from './clients.js';
import { useLoopbackServers } from './loopback-server.js';
import { financeRecord } from './records.js';

/** Credentials with characters that every encoding changes: `/` (JSON `\/`), `+`, space, `&`, `%`, `é`. */
export const HOSTILE_CLIENT_ID = 'hostile-client';
export const HOSTILE_SECRET = 'cs/Se+cr%et &é-0123456789';
export const HOSTILE_TOKEN = 'at/Tok+en=-abcdefghijklmnop';
export const HOSTILE_APP_ID = 'app-1';

export type HostileRoute = 'token' | 'upload-urls' | 'finance' | 'storage' | 'other';

export interface HostileRequest {
  method: string;
  path: string;
  route: HostileRoute;
  authorization: string | undefined;
  body: string;
}

/**
 * Answers a request instead of the well-behaved service, or returns false to let it answer.
 * `hit` counts the requests on the same route so far, starting at 1.
 */
export type Misbehaviour = (
  request: HostileRequest & { hit: number },
  res: ServerResponse,
  req: IncomingMessage,
) => boolean | undefined;

export interface HostileService {
  /** `http://127.0.0.1:<port>`: the auth URL, the base URL and the storage host at once. */
  url: string;
  /** Every request received, in order. */
  requests: HostileRequest[];
  /** Requests on one route. */
  on(route: HostileRoute): HostileRequest[];
  /** A client for this service: no retries waiting on backoff unless the test asks. */
  client(options?: PushClientOptions): PushClient;
  /** Its addresses and credential, for `clientFor`. */
  clientOptions(): EmulatorClientOptions;
}

function routeOf(method: string, path: string): HostileRoute {
  if (path === '/oauth2/token') return 'token';
  if (method === 'PUT' && path.startsWith('/files/')) return 'storage';
  if (/\/services\/push\/v1\/customer\/apps\/[^/]+\/upload$/.test(path)) return 'upload-urls';
  if (/\/services\/push\/v1\/customer\/apps\/[^/]+\/finance$/.test(path)) return 'finance';
  return 'other';
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Registers the afterEach that closes the servers, and returns `start(misbehave?)`. */
export function useHostileService(): (misbehave?: Misbehaviour) => Promise<HostileService> {
  const serve = useLoopbackServers();
  return async (misbehave) => {
    const requests: HostileRequest[] = [];
    const hits = new Map<HostileRoute, number>();
    let url = '';
    url = await serve((req, res, body) => {
      const method = req.method ?? 'GET';
      const parsed = new URL(req.url ?? '/', url);
      const request: HostileRequest = {
        method,
        path: parsed.pathname,
        route: routeOf(method, parsed.pathname),
        authorization: req.headers.authorization,
        body,
      };
      requests.push(request);
      const hit = (hits.get(request.route) ?? 0) + 1;
      hits.set(request.route, hit);
      if (misbehave?.({ ...request, hit }, res, req)) return;
      switch (request.route) {
        case 'token':
          return json(res, 200, { access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600 });
        case 'upload-urls': {
          const names = parsed.searchParams.getAll('filenames');
          return json(res, 200, Object.fromEntries(names.map((name) => [name, `${url}/files/${name}?sig=1`])));
        }
        case 'finance':
          return json(res, 200, { success: true });
        case 'storage':
          return res.writeHead(200, { etag: '"1"' }).end();
        default:
          return json(res, 404, { code: 'not_found', message: 'no such route', success: false });
      }
    });
    const service: HostileService = {
      url,
      requests,
      on: (route) => requests.filter((request) => request.route === route),
      client(options = {}) {
        return clientFor(service, { scopes: ['push.write'], maxRetries: 0, timeoutMs: 5_000, ...options });
      },
      clientOptions: () => ({
        clientId: HOSTILE_CLIENT_ID,
        clientSecret: HOSTILE_SECRET,
        authUrl: url,
        baseUrl: url,
        scopeBase: url,
      }),
    };
    return service;
  };
}

/**
 * Waits until a response that refused a write can take more, or the client hung up. The waiter
 * that loses is removed: one left behind per full buffer piles listeners on the response.
 */
export async function drainedOrClosed(res: ServerResponse): Promise<void> {
  const settled = new AbortController();
  const waiters = [once(res, 'drain', { signal: settled.signal }), once(res, 'close', { signal: settled.signal })];
  await Promise.race(waiters).finally(() => settled.abort());
  await Promise.allSettled(waiters);
}

/**
 * Publishes `count` records one per batch to the service, with a client (of `options`) that keeps
 * the window's changes (the `concurrency` hook): what tests of the adaptive window read.
 */
export async function publishWatchingWindow(
  service: HostileService,
  count: number,
  options: PushClientOptions = {},
): Promise<{ report: PublishReport; events: ConcurrencyHookEvent[] }> {
  const events: ConcurrencyHookEvent[] = [];
  const client = service.client({ ...options, hooks: { concurrency: (event) => events.push(event) } });
  const report = await client.finance.publish(
    HOSTILE_APP_ID,
    Array.from({ length: count }, (_, i) => financeRecord(i, { transactionNumber: `t-${i}` })),
    { batchSize: 1 },
  );
  return { report, events };
}
