import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { HttpResponse, http as mswHttp } from 'msw';
import { setupServer } from 'msw/node';
import type { PublishReport } from 'push-api-client';
import { ConnectionError, RedirectError } from 'push-api-client';
import { afterEach, describe, expect, it } from 'vitest';
import { FetchHttpClient, type FetchHttpClientOptions } from '../../src/http/http-client.js';
import { loadOpenTelemetry } from '../../src/http/otel-loader.js';
import type { FetchLike } from '../../src/http/public-types.js';
import { Tracing } from '../../src/http/tracing.js';
import type { RequestSpec } from '../../src/http/types.js';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';

// A POST is never replayed, so once an address has answered one without a redirect, later POSTs
// to it are sent with `redirect: 'error'`, which spares fetch its copy of the body. These tests
// hold the two sides of that: which requests skip the copy, and that a redirect refused among
// them is still a RedirectError that leaves the batch `unknown` and is never re-sent, while no
// other failure passes for one. Only the runtime's own fetch gets the mode, so these tests watch
// the global fetch (this file runs isolated).

const serve = useLoopbackServers();
const startHostile = useHostileService();
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const runtimeFetch = globalThis.fetch;
/** No retries, so that each test sees the one send it makes. */
const CLIENT_OPTIONS: FetchHttpClientOptions = {
  timeoutMs: 2_000,
  maxRetries: 0,
  retryAmbiguous: false,
  allowInsecureHttp: false,
  userAgent: 'test',
  logger: silent,
};

afterEach(() => {
  globalThis.fetch = runtimeFetch;
});

/**
 * A client on the global fetch, which this replaces with one that notes the redirect mode of every
 * request and hands it to `inner` (by default the runtime's fetch, read at call time).
 */
function watchedClient(
  inner: FetchLike = (input, init) => runtimeFetch(input, init),
  options: Partial<FetchHttpClientOptions> = {},
) {
  const modes: string[] = [];
  globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
    modes.push(`${init?.method} ${new URL(String(input)).pathname} ${init?.redirect}`);
    return inner(input, init);
  }) as typeof fetch;
  const http = new FetchHttpClient({ ...CLIENT_OPTIONS, ...options });
  return { http, modes };
}

function request(url: string, method: 'GET' | 'POST' | 'PUT', extra: Partial<RequestSpec> = {}): RequestSpec {
  return {
    operation: 'test',
    method,
    url: new URL(url),
    auth: 'none',
    retryPolicy: method === 'POST' ? 'non-idempotent' : 'idempotent',
    ...(method !== 'GET' && { body: () => '{"records":[]}', headers: { 'content-type': 'application/json' } }),
    ...extra,
  };
}

/** A loopback service that answers `plan[i]` to its i-th request (then the last entry): a status, 3xx to /moved. */
async function planned(plan: number[]) {
  const seen: string[] = [];
  const origin = await serve((req, res) => {
    req.resume();
    seen.push(`${req.method} ${req.url}`);
    const status = plan[Math.min(seen.length, plan.length) - 1] ?? 200;
    if (status >= 300 && status < 400) res.writeHead(status, { location: '/moved?sig=secret' }).end();
    else res.writeHead(status).end('{}');
  });
  return { origin, seen };
}

const settle = (http: FetchHttpClient, spec: RequestSpec) =>
  http.send(spec).then(
    async (response) => {
      await response.text();
      return 'ok' as const;
    },
    (error: unknown) => error,
  );

describe('a POST without a replay copy of its body', () => {
  it('is sent once the same address has answered a POST without a redirect; GET and PUT never are', async () => {
    const { origin } = await planned([200]);
    const { http, modes } = watchedClient();
    for (const spec of [
      request(`${origin}/a`, 'POST'),
      request(`${origin}/a`, 'POST'),
      request(`${origin}/b`, 'POST'),
      request(`${origin}/a?page=2`, 'POST'),
      request(`${origin}/a`, 'GET'),
      request(`${origin}/a`, 'PUT'),
      request(`${origin}/a`, 'PUT'),
    ]) {
      expect(await settle(http, spec)).toBe('ok');
    }
    expect(modes).toEqual([
      'POST /a manual',
      'POST /a error',
      // Another path is another address: its first POST keeps the copy.
      'POST /b manual',
      // The query is not part of the address.
      'POST /a error',
      'GET /a manual',
      'PUT /a manual',
      'PUT /a manual',
    ]);
  });

  it('never for a fetch the caller passes, nor for a request that maps its own errors (the token request)', async () => {
    const { origin } = await planned([200]);
    const passed: string[] = [];
    const custom = new FetchHttpClient({
      fetch: (input, init) => {
        passed.push(String(init?.redirect));
        return runtimeFetch(input, init);
      },
      ...CLIENT_OPTIONS,
    });
    for (let i = 0; i < 3; i++) expect(await settle(custom, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(passed).toEqual(['manual', 'manual', 'manual']);
    const { http, modes } = watchedClient();
    const token = request(`${origin}/token`, 'POST', {
      redirects: 'none',
      mapError: () => new RedirectError(302, {}, 'mapped', undefined),
    });
    for (let i = 0; i < 2; i++) expect(await settle(http, token)).toBe('ok');
    expect(modes).toEqual(['POST /token manual', 'POST /token manual']);
  });

  it('an error answer counts as an answer without a redirect', async () => {
    const { origin } = await planned([500]);
    const { http, modes } = watchedClient();
    for (let i = 0; i < 2; i++) await settle(http, request(`${origin}/a`, 'POST'));
    expect(modes).toEqual(['POST /a manual', 'POST /a error']);
  });

  it('a redirect refused for it is a RedirectError with status 0, sent once; the address then keeps the copy for good', async () => {
    const { origin, seen } = await planned([200, 307, 200, 307]);
    const { http, modes } = watchedClient();
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    const refused = await settle(http, request(`${origin}/a`, 'POST'));
    expect(refused).toBeInstanceOf(RedirectError);
    expect((refused as RedirectError).status).toBe(0);
    expect((refused as RedirectError).code).toBe('redirect');
    expect((refused as RedirectError).targetOrigin).toBeUndefined();
    expect((refused as Error).message).toMatch(/answered with a redirect, which a POST never follows.*unknown/);
    // A direct answer in between does not bring the address back: the next redirect is read.
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    const full = await settle(http, request(`${origin}/a`, 'POST'));
    expect(full).toBeInstanceOf(RedirectError);
    expect((full as RedirectError).status).toBe(307);
    expect((full as RedirectError).code).toBe('307');
    expect((full as RedirectError).targetOrigin).toBe(origin);
    expect((full as Error).message).not.toContain('sig=secret');
    // Nothing was followed or re-sent.
    expect(seen).toEqual(['POST /a', 'POST /a', 'POST /a', 'POST /a']);
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /a manual', 'POST /a manual']);
  });

  it('an address that redirected a POST it could read never goes without the copy', async () => {
    const { origin } = await planned([308, 200]);
    const { http, modes } = watchedClient();
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBeInstanceOf(RedirectError);
    for (let i = 0; i < 2; i++) expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(modes).toEqual(['POST /a manual', 'POST /a manual', 'POST /a manual']);
  });

  it('through msw, whose fetch reports a refused redirect in its own shape, it is the same RedirectError', async () => {
    const origin = 'http://127.0.0.1:9/msw-only';
    let hits = 0;
    const server = setupServer(
      mswHttp.post(`${origin}/a`, () => {
        hits += 1;
        return hits === 1
          ? HttpResponse.json({})
          : new HttpResponse(null, { status: 308, headers: { location: `${origin}/b` } });
      }),
    );
    server.listen({ onUnhandledRequest: 'error' });
    try {
      const mswFetch = globalThis.fetch;
      const { http, modes } = watchedClient((input, init) => mswFetch(input, init));
      expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
      const refused = await settle(http, request(`${origin}/a`, 'POST'));
      expect(refused).toBeInstanceOf(RedirectError);
      expect((refused as RedirectError).status).toBe(0);
      expect(modes).toEqual(['POST /msw-only/a manual', 'POST /msw-only/a error']);
      expect(hits).toBe(2);
    } finally {
      globalThis.fetch = runtimeFetch;
      server.close();
    }
  });

  // What Bun 1, Deno 2 and node-fetch 3 throw for a redirect under `redirect: 'error'`, in their words.
  it.each([
    [
      'Bun',
      (url: string) =>
        new TypeError(
          `UnexpectedRedirect fetching "${url}". For more information, pass \`verbose: true\` in the second argument to fetch()`,
        ),
    ],
    ['Deno', () => new TypeError("Fetch failed: Encountered redirect while redirect mode is set to 'error'")],
    [
      'node-fetch',
      (url: string) =>
        Object.assign(new Error(`uri requested responds with a redirect, redirect mode is set to error: ${url}`), {
          name: 'FetchError',
          type: 'no-redirect',
        }),
    ],
  ])(
    '%s reports a refused redirect in its own shape: the same RedirectError, with no address in it',
    async (_runtime, refusal) => {
      const { origin, seen } = await planned([200, 307]);
      const { http, modes } = watchedClient(async (input, init) => {
        const response = await runtimeFetch(input, { ...init, redirect: 'manual' });
        if (init?.redirect === 'error' && response.status >= 300 && response.status < 400) throw refusal(String(input));
        return response;
      });
      expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
      const refused = await settle(http, request(`${origin}/a`, 'POST'));
      expect(modes).toEqual(['POST /a manual', 'POST /a error']);
      expect(refused).toBeInstanceOf(RedirectError);
      expect((refused as RedirectError).status).toBe(0);
      expect((refused as Error).message).not.toContain(origin);
      expect(seen).toHaveLength(2);
    },
  );

  it('no other failure passes for a refused redirect: a host named redirect-… that does not resolve, a fetch that refuses the mode', async () => {
    const { origin } = await planned([200]);
    const dnsFailure = () =>
      new TypeError('fetch failed', {
        cause: Object.assign(new Error('getaddrinfo ENOTFOUND redirect-gw.test'), { code: 'ENOTFOUND' }),
      });
    const { http } = watchedClient(async (input, init) => {
      if (init?.redirect === 'error') throw dnsFailure();
      return runtimeFetch(input, init);
    });
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    const failed = await settle(http, request(`${origin}/a`, 'POST'));
    expect(failed).toBeInstanceOf(ConnectionError);
    expect((failed as ConnectionError).requestMaybeSent).toBe(false);
    // A fetch that does not know the mode (workerd's words): not a redirect either.
    const { http: other } = watchedClient(async (input, init) => {
      if (init?.redirect === 'error') {
        throw new TypeError(
          'Invalid redirect value, must be one of "follow" or "manual" ("error" won\'t be implemented).',
        );
      }
      return runtimeFetch(input, init);
    });
    expect(await settle(other, request(`${origin}/b`, 'POST'))).toBe('ok');
    expect(await settle(other, request(`${origin}/b`, 'POST'))).not.toBeInstanceOf(RedirectError);
  });

  it('a fetch that follows the redirect whatever the mode: a RedirectError, and the address keeps the copy from then on', async () => {
    const { origin } = await planned([200]);
    const { http, modes } = watchedClient(async (input, init) => {
      const response = await runtimeFetch(input, init);
      if (init?.redirect === 'error') Object.defineProperty(response, 'redirected', { value: true });
      return response;
    });
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    const followed = await settle(http, request(`${origin}/a`, 'POST'));
    expect(followed).toBeInstanceOf(RedirectError);
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /a manual']);
  });

  it('a 421 answer, which fetch meets by sending again with no body left: ambiguous, never sent twice; then the copy', async () => {
    // Bodies received, by status answered. Fetch's own re-send without a copy carries no body
    // (undici sends it empty, or fails before sending), which the service refuses.
    const whole: number[] = [];
    const plan = [200, 421, 421, 200];
    const origin = await serve((_req, res, body) => {
      if (body === '') return void res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
      const status = plan[whole.length] ?? 200;
      whole.push(status);
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
    const { http, modes } = watchedClient();
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    // The failed re-send looks like a connection lost after the body may have been stored: it is
    // not sent again by the client (for a batch: `unknown`).
    const lost = await settle(http, request(`${origin}/a`, 'POST'));
    expect(lost).toBeInstanceOf(ConnectionError);
    expect((lost as ConnectionError).requestMaybeSent).toBe(true);
    // With the copy again, fetch sends a 421's request again itself, and the next answer decides.
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(whole).toEqual([200, 421, 421, 200]);
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /a manual']);
  });

  it('a connection lost on a send without the copy leaves the address as it was', async () => {
    let hits = 0;
    const origin = await serve((req, res) => {
      hits += 1;
      if (hits === 2) req.socket.destroy();
      else res.end('{}');
    });
    const { http, modes } = watchedClient();
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBeInstanceOf(ConnectionError);
    expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /a error']);
  });

  it('on a trace, an attempt whose redirect was refused unread has no status code, and RedirectError as its error type', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      const { origin } = await planned([200, 307]);
      const { http } = watchedClient(undefined, { tracing: new Tracing(loadOpenTelemetry()) });
      expect(await settle(http, request(`${origin}/a`, 'POST'))).toBe('ok');
      expect(await settle(http, request(`${origin}/a`, 'POST'))).toBeInstanceOf(RedirectError);
      const attempts = exporter.getFinishedSpans().filter((span) => span.name === 'POST');
      expect(attempts.map((span) => span.attributes['http.response.status_code'])).toEqual([200, undefined]);
      expect(attempts[1]?.attributes['error.type']).toBe('RedirectError');
    } finally {
      trace.disable();
    }
  });

  it('in a publish, a batch whose refused redirect had no status is `unknown`, never re-sent', async () => {
    const service = await startHostile(({ route, hit }, res) => {
      if (route !== 'finance' || hit === 1) return false;
      res.writeHead(308, { location: '/elsewhere' }).end();
      return true;
    });
    const client = service.client({ maxRetries: 2, backoff: { initialDelayMs: 0, maxDelayMs: 0 } });
    const records = [0, 1, 2].map((i) => ({ ...SAMPLE_RECORD, transactionNumber: `replay-${i}` }));
    const report = await client.finance
      .publish(HOSTILE_APP_ID, records, { batchSize: 1, concurrency: 1 })
      .catch((error: { report?: PublishReport }) => error.report);
    // The first batch had its answer; the second skipped the copy and met the redirect without its
    // status; the third, sent with the copy again, reports it in full. Each went out once.
    expect(report?.batches.map((batch) => [batch.status, (batch.error as RedirectError | undefined)?.status])).toEqual([
      ['sent', undefined],
      ['unknown', 0],
      ['unknown', 308],
    ]);
    expect(report?.batches[1]?.error).toBeInstanceOf(RedirectError);
    expect([report?.recordsSent, report?.recordsUnknown, report?.recordsFailed]).toEqual([1, 2, 0]);
    expect(service.on('finance')).toHaveLength(3);
  });
});
