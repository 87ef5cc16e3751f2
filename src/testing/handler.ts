/**
 * The emulated push service as one fetch handler over in-memory state.
 *
 * Order of checks on a data operation (upload addresses, finance):
 * 1. injected faults (they model the infrastructure in front of the service, so they meet a request
 *    before the service routes it: a fault without `match.operation` meets unknown paths too);
 * 2. unknown path → 404; wrong method → 405;
 * 3. bearer token missing, unknown, revoked or expired → 401;
 * 4. token lacks `{scope_base}/connector.write` → 403;
 * 5. rate limit → 429 with `Retry-After` (only authenticated requests count);
 * 6. unknown app → 404 (after auth, so app ids cannot be probed without a token);
 * 7. query parameters → 400; body size → 413; payload → 422.
 */
import { randomUUID } from 'node:crypto';
import * as timers from 'node:timers';
import { onAbort } from '../internal/waits.js';
import { authenticate, requireConnectorWrite } from './bearer-auth.js';
import { Clock } from './clock.js';
import type { EmulatorContext, IncomingRequest, WireInfo } from './context.js';
import { registerState } from './emulator-internals.js';
import { type ActiveFault, FaultInjector } from './faults.js';
import { handleFinance } from './finance.js';
import { type CredentialInput, type EmulatorOptions, type RateLimit, resolveOptions } from './options.js';
import { RateLimiter } from './rate-limit.js';
import { logEntry } from './request-log.js';
import { apiError, jsonResponse, reasonPhrase, xmlError } from './responses.js';
import { type Route, Router } from './router.js';
import { UrlSigner } from './signed-url.js';
import { createStateView, EmulatorState, type EmulatorStateView, type Operation } from './state.js';
import { handleTokenRequest } from './token-endpoint.js';
import { handleUpload } from './upload-storage.js';
import { handleUploadUrls } from './upload-urls.js';

/** Options of {@link PushApiEmulator.handle}, for adapters that put the emulator behind a transport. */
export interface HandleOptions {
  /**
   * Set by the HTTP adapter: what the socket saw, for the Content-Length rules of the PUT.
   * @default undefined (the request did not come over a socket)
   */
  wire?: WireInfo | undefined;
  /**
   * The address to route by, when it differs from `request.url`: the HTTP adapter routes by path,
   * so that `localhost` works as well as the `127.0.0.1` it listens on.
   * @default new URL(request.url)
   */
  url?: URL | undefined;
  /**
   * Set by the HTTP adapter, which aborts it on `close()`: a request held in a fault's `delayMs`
   * then ends at once, unprocessed and unanswered (a dropped connection), instead of keeping the
   * process alive until its delay is over.
   * @default undefined (a delay always runs to its end)
   */
  signal?: AbortSignal | undefined;
}

/** What a `PushClient` needs to use an emulator with its first credential; a subset of `PushClientOptions`. */
export interface EmulatorClientOptions {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  baseUrl: string;
  scopeBase: string;
}

/** A `fetch`-compatible function served by the emulator; a dropped connection rejects like fetch does. */
export type EmulatorFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * An emulated push service: its addresses and credentials (to configure a `PushClient`), what it
 * received (`state`), and controls to inject faults, move its clock, revoke tokens and so on.
 */
export interface PushApiEmulator {
  /** Answers one request. Never throws; a dropped connection is `Response.error()`. */
  handle(request: Request, options?: HandleOptions): Promise<Response>;
  /** Calls `handle` directly, without msw or a socket. */
  fetch: EmulatorFetch;
  /** What the service received: tokens, files, finance records and the request log. */
  readonly state: EmulatorStateView;
  /** Injected failures: error statuses, delays and dropped connections. */
  readonly faults: FaultInjector;
  /** `{auth_url}`, for the client's `authUrl` option. */
  readonly authUrl: string;
  /** `{base_url}`, for the client's `baseUrl` option. */
  readonly baseUrl: string;
  /** The storage host that signed upload addresses point to. */
  readonly uploadUrl: string;
  /** `{scope_base}`, for the client's `scopeBase` option. */
  readonly scopeBase: string;
  /** Client id of the first credential (the demo one by default). */
  readonly clientId: string;
  /** Client secret of the first credential. */
  readonly clientSecret: string;
  /** The first app (the demo one by default). */
  readonly appId: string;
  /**
   * The options a `PushClient` needs for the first credential, so that
   * `new PushClient(emulator.clientOptions())` works (with msw; without it, add `fetch: emulator.fetch`).
   */
  clientOptions(): EmulatorClientOptions;
  /** Emulator clock, in ms. */
  now(): number;
  /** Moves the emulator clock forward, so expiry can be tested without waiting. */
  advanceTime(ms: number): void;
  /** Revokes one token; returns whether it existed. */
  revokeToken(token: string): boolean;
  /** Revokes every token issued so far; returns how many were active. */
  revokeAllTokens(): number;
  /** Lifetime of tokens issued from now on. */
  setTokenTtl(seconds: number): void;
  /** Lifetime of upload addresses issued from now on. */
  setSignedUrlTtl(seconds: number): void;
  /** Sets or removes (undefined) the data API rate limit; starts a fresh window. */
  setRateLimit(limit: RateLimit | undefined): void;
  /** Creates an application, so that data operations on it succeed instead of answering 404. */
  addApp(appId: string): void;
  /** Deletes an application: its data operations answer 404 from then on (what it received is kept). */
  removeApp(appId: string): void;
  /** Adds a credential that can obtain tokens, or replaces the one with its client id (issued tokens stay valid). */
  addCredential(credential: CredentialInput): void;
  /** Makes every upload address issued so far answer 403 "Request has expired". */
  expireSignedUrls(): void;
  /** Back to the options given at creation: state, faults, clock offset, TTLs and rate limit. */
  reset(): void;
  /**
   * Forgets what was received (records, files, tokens, the request log, the requests counted
   * against the rate limit) and removes every fault, keeping apps, credentials, the clock and the
   * settings (the rate limit itself included): what `POST /_emulator/reset` does, so a long-running
   * emulator can start a fresh scenario without losing how it was set up.
   */
  clearReceived(): void;
}

function operationOf(route: Route): Operation | undefined {
  return route.kind === 'not-found' ? undefined : route.kind;
}

function faultResponse(fault: ActiveFault, operation: Operation | undefined, status: number): Response {
  const { rule } = fault;
  const headers: Record<string, string> = {};
  if (rule.retryAfter !== undefined) headers['retry-after'] = String(rule.retryAfter);
  if (typeof rule.body === 'string')
    return new Response(rule.body, { status, statusText: reasonPhrase(status), headers });
  if (rule.body !== undefined) return jsonResponse(status, rule.body, headers);
  if (operation === 'upload') return xmlError(status, 'InternalError', 'injected fault', headers);
  if (operation === 'token') {
    const error = status === 429 || status === 503 ? 'temporarily_unavailable' : 'server_error';
    return jsonResponse(status, { error, error_description: `injected fault: ${reasonPhrase(status)}` }, headers);
  }
  return apiError(status, 'injected fault', headers);
}

/**
 * The runtime's own `setTimeout`, kept from when this module loaded. A fault's `delayMs` is real
 * time: the fake clock of a user's test suite (`vi.useFakeTimers()`, Jest's) replaces the global
 * one, and a delayed request would otherwise wait until the test advances it, which a test that
 * only adds latency never does. `node:timers` keeps the real function whatever the global holds.
 */
const realSetTimeout = timers.setTimeout;
/** The runtime's own monotonic clock, for `durationMs`, which a fake clock would show as 0. */
const realNow = performance.now.bind(performance);

/** Waits `ms` of real time; false when `signal` cut the wait short (its timer is cleared then). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = realSetTimeout(() => {
      stopListening();
      resolve(true);
    }, ms);
    // The HTTP server hands every request the same close signal: many requests held at once must
    // not each add a listener to it (Node warns past 10, MaxListenersExceededWarning).
    const stopListening = signal
      ? onAbort(signal, () => {
          timers.clearTimeout(timer);
          resolve(false);
        })
      : () => {};
  });
}

/**
 * The answer, or a rejection with the signal's reason as soon as it fires, as `fetch` does: a
 * client's abort and timeout work through `emulator.fetch` as over a socket. The emulator's own
 * work goes on (a real service would not hear of the abort either).
 */
function untilAborted(answer: Promise<Response>, signal: AbortSignal): Promise<Response> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(
      (response) => {
        signal.removeEventListener('abort', onAbort);
        resolve(response);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Creates an emulated push service as a plain fetch handler over in-memory state, with no
 * dependency beyond Node: pass `emulator.fetch` as the client's `fetch` option, or put
 * `emulator.handle` behind any server or interceptor. `createPushApiMock` (msw) and
 * `startEmulator` (real HTTP) are built on it.
 *
 * @example
 * ```ts
 * import { PushClient } from 'push-api-client';
 * import { createPushApiHandler } from 'push-api-client/testing';
 *
 * const emulator = createPushApiHandler();
 * const client = new PushClient({
 *   clientId: emulator.clientId,
 *   clientSecret: emulator.clientSecret,
 *   authUrl: emulator.authUrl,
 *   baseUrl: emulator.baseUrl,
 *   scopeBase: emulator.scopeBase,
 *   fetch: emulator.fetch,
 * });
 * await client.finance.publish(emulator.appId, [
 *   { created: '2025-03-01', amount: 12.5, currency: 'USD', type: 'expense', identifier: 'ada', vendor: 'Acme' },
 * ]);
 * console.log(emulator.state.recordCount(emulator.appId)); // 1
 * ```
 */
export function createPushApiHandler(options: EmulatorOptions = {}): PushApiEmulator {
  const config = resolveOptions(options);
  const initial = { ...config, credentials: config.credentials, apps: [...config.apps] };
  const state = new EmulatorState(config);
  const clock = new Clock(config.now);
  const signer = new UrlSigner();
  const faults = new FaultInjector();
  const rateLimiter = new RateLimiter(config.rateLimit);
  const router = new Router(config);
  const context: EmulatorContext = { config, state, clock, signer };
  state.clear(config.credentials, config.apps);

  async function dataOperation(
    incoming: IncomingRequest,
    route: { kind: 'upload-urls' | 'finance'; appId: string },
  ): Promise<Response> {
    const method = route.kind === 'upload-urls' ? 'GET' : 'POST';
    if (incoming.request.method !== method) return apiError(405, `use ${method}`, { allow: method });
    const token = authenticate(context, incoming.request);
    if (token instanceof Response) return token;
    const forbidden = requireConnectorWrite(context, token);
    if (forbidden) return forbidden;
    const retryAfter = rateLimiter.take(clock.now());
    if (retryAfter !== undefined) {
      return apiError(429, 'rate limit exceeded', { 'retry-after': String(retryAfter) });
    }
    if (!state.apps.has(route.appId)) return apiError(404, `unknown app ${JSON.stringify(route.appId)}`);
    return route.kind === 'upload-urls'
      ? handleUploadUrls(context, incoming, route.appId)
      : handleFinance(context, incoming, route.appId);
  }

  function dispatch(incoming: IncomingRequest, route: Route): Promise<Response> | Response {
    switch (route.kind) {
      case 'token':
        return handleTokenRequest(context, incoming);
      case 'upload':
        return handleUpload(context, incoming, route.pathBelowPrefix);
      case 'upload-urls':
      case 'finance':
        return dataOperation(incoming, route);
      case 'not-found':
        return apiError(404, 'no such path');
    }
  }

  async function handle(request: Request, handleOptions: HandleOptions = {}): Promise<Response> {
    const requestId = randomUUID();
    const generation = state.generation;
    const at = clock.now();
    const started = realNow();
    let url: URL;
    try {
      url = handleOptions.url ?? new URL(request.url);
    } catch {
      return apiError(400, 'request URL is not valid', { 'x-request-id': requestId });
    }
    const route = router.route(url);
    const operation = operationOf(route);
    const incoming: IncomingRequest = { request, url, requestId, wire: handleOptions.wire, generation };
    const fault = faults.pick(operation, request.method, url.pathname);
    let faultKind: 'status' | 'drop-before' | 'drop-after' | undefined;
    let response: Response;
    const waited = fault?.rule.delayMs ? await sleep(fault.rule.delayMs, handleOptions.signal) : true;
    if (!waited) {
      // The server closed during the delay: nobody is left to answer.
      response = Response.error();
    } else if (fault?.rule.drop === 'before') {
      faultKind = 'drop-before';
      response = Response.error();
    } else if (fault?.rule.status !== undefined) {
      faultKind = 'status';
      response = faultResponse(fault, operation, fault.rule.status);
    } else {
      try {
        response = await dispatch(incoming, route);
      } catch {
        // A bug in the emulator must still answer in the spec's shape rather than crash the test.
        response = apiError(500, 'emulator error');
      }
      if (fault?.rule.drop === 'after') {
        faultKind = 'drop-after';
        response = Response.error();
      }
    }
    if (response.type !== 'error') response.headers.set('x-request-id', requestId);
    // An answer to HEAD has no body (RFC 9110 §9.3.2). Node's server drops it on the wire; msw and
    // `emulator.fetch` hand the Response over as it is, so it is dropped here for them too.
    if (request.method === 'HEAD' && response.body !== null) {
      await response.body.cancel();
      response = new Response(null, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    // A reset since it arrived forgot it with the rest of what was received.
    if (!state.isCurrent(generation)) return response;
    state.log(
      logEntry(
        request,
        url,
        requestId,
        at,
        operation,
        response.type === 'error' ? 0 : response.status,
        faultKind,
        Math.round((realNow() - started) * 100) / 100,
      ),
    );
    return response;
  }

  const emulator: PushApiEmulator = {
    handle,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const response = await untilAborted(handle(request), request.signal);
      if (response.type === 'error') {
        throw new TypeError('fetch failed', { cause: new Error('connection dropped by an emulator fault') });
      }
      return response;
    },
    state: createStateView(state),
    faults,
    authUrl: config.authUrl,
    baseUrl: config.baseUrl,
    uploadUrl: config.uploadUrl,
    scopeBase: config.scopeBase,
    clientId: config.credentials[0]?.clientId ?? '',
    clientSecret: config.credentials[0]?.clientSecret ?? '',
    appId: config.apps[0] ?? '',
    clientOptions: () => ({
      clientId: emulator.clientId,
      clientSecret: emulator.clientSecret,
      authUrl: config.authUrl,
      baseUrl: config.baseUrl,
      scopeBase: config.scopeBase,
    }),
    now: () => clock.now(),
    advanceTime: (ms) => clock.advance(ms),
    revokeToken(token) {
      const record = state.tokens.get(token);
      if (record) record.revoked = true;
      return record !== undefined;
    },
    revokeAllTokens() {
      let active = 0;
      for (const record of state.tokens.values()) {
        if (!record.revoked && record.expiresAt > clock.now()) active += 1;
        record.revoked = true;
      }
      return active;
    },
    setTokenTtl(seconds) {
      assertSeconds(seconds, 'token TTL');
      config.tokenTtlSeconds = seconds;
    },
    setSignedUrlTtl(seconds) {
      assertSeconds(seconds, 'signed URL TTL');
      config.signedUrlTtlSeconds = seconds;
    },
    setRateLimit: (limit) => rateLimiter.set(limit),
    addApp: (appId) => void state.apps.add(appId),
    removeApp: (appId) => void state.apps.delete(appId),
    addCredential: (credential) =>
      void state.credentials.set(credential.clientId, { ...credential, scopes: [...credential.scopes] }),
    expireSignedUrls: () => signer.expireAll(),
    clearReceived() {
      state.clearReceived();
      faults.clear();
      signer.expireAll();
      // The requests counted in the current window were received too: the limit stays, its count starts over.
      rateLimiter.set(rateLimiter.limit);
    },
    reset() {
      state.clear(initial.credentials, initial.apps);
      faults.clear();
      clock.reset();
      signer.expireAll();
      config.tokenTtlSeconds = initial.tokenTtlSeconds;
      config.signedUrlTtlSeconds = initial.signedUrlTtlSeconds;
      rateLimiter.set(initial.rateLimit);
    },
  };
  registerState(emulator, state);
  return emulator;
}

function assertSeconds(seconds: number, what: string): void {
  if (!(Number.isFinite(seconds) && seconds >= 0)) throw new RangeError(`${what} must be a non-negative number`);
}
