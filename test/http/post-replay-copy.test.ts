import { HttpResponse, http as mswHttp } from 'msw';
import { setupServer } from 'msw/node';
import type { PublishReport } from 'push-api-client';
import { RedirectError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { FetchHttpClient } from '../../src/http/http-client.js';
import type { FetchLike } from '../../src/http/public-types.js';
import type { RequestSpec } from '../../src/http/types.js';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';

// A POST is never replayed, so once an address has answered one without a redirect, later POSTs
// to it are sent with `redirect: 'error'`, which spares fetch its copy of the body. These tests
// hold the two sides of that: which requests skip the copy, and that a redirect refused among
// them is still a RedirectError that leaves the batch `unknown` and is never re-sent.

const serve = useLoopbackServers();
const startHostile = useHostileService();
const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** A client whose fetch notes the redirect mode of every request it sends. */
function recordingClient(fetchImpl: FetchLike = fetch) {
  const modes: string[] = [];
  const recording: FetchLike = (input, init) => {
    modes.push(`${init?.method} ${new URL(String(input)).pathname} ${init?.redirect}`);
    return fetchImpl(input, init);
  };
  const http = new FetchHttpClient({
    fetch: recording,
    timeoutMs: 2_000,
    maxRetries: 0,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'test',
    logger: silent,
  });
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

describe('a POST without a replay copy of its body', () => {
  it('is sent once the same address has answered a POST without a redirect; GET and PUT never are', async () => {
    const origin = await serve((_req, res) => res.end('{}'));
    const { http, modes } = recordingClient();
    for (const spec of [
      request(`${origin}/a`, 'POST'),
      request(`${origin}/a`, 'POST'),
      request(`${origin}/b`, 'POST'),
      request(`${origin}/a?page=2`, 'POST'),
      request(`${origin}/a`, 'GET'),
      request(`${origin}/a`, 'PUT'),
      request(`${origin}/a`, 'PUT'),
    ]) {
      await (await http.send(spec)).text();
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

  it('an error answer counts as an answer without a redirect; a POST that follows none by its own rule keeps the copy', async () => {
    const origin = await serve((req, res) => res.writeHead(req.url === '/token' ? 200 : 500).end('{}'));
    const { http, modes } = recordingClient();
    for (let i = 0; i < 2; i++) await http.send(request(`${origin}/a`, 'POST')).catch(() => undefined);
    // The token request maps every non-2xx answer itself (`redirects: 'none'`): it needs the 3xx.
    const token = request(`${origin}/token`, 'POST', {
      redirects: 'none',
      mapError: () => new RedirectError(0, {}, 'x', undefined),
    });
    for (let i = 0; i < 2; i++) await (await http.send(token)).text();
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /token manual', 'POST /token manual']);
  });

  it('a redirect refused for it is a RedirectError with status 0, sent once; the next POST reports the redirect in full', async () => {
    const seen: string[] = [];
    const origin = await serve((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (seen.length === 1) res.end('{}');
      else res.writeHead(307, { location: '/moved?sig=secret' }).end();
    });
    const { http, modes } = recordingClient();
    await (await http.send(request(`${origin}/a`, 'POST'))).text();
    const refused = await http.send(request(`${origin}/a`, 'POST')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedirectError);
    expect((refused as RedirectError).status).toBe(0);
    expect((refused as RedirectError).code).toBe('redirect');
    expect((refused as RedirectError).targetOrigin).toBeUndefined();
    expect((refused as Error).message).toMatch(/answered with a redirect, which a POST never follows.*unknown/);
    const full = await http.send(request(`${origin}/a`, 'POST')).catch((error: unknown) => error);
    expect(full).toBeInstanceOf(RedirectError);
    expect((full as RedirectError).status).toBe(307);
    expect((full as RedirectError).code).toBe('307');
    expect((full as RedirectError).targetOrigin).toBe(origin);
    expect((full as Error).message).not.toContain('sig=secret');
    // Nothing was followed or re-sent.
    expect(seen).toEqual(['POST /a', 'POST /a', 'POST /a']);
    expect(modes).toEqual(['POST /a manual', 'POST /a error', 'POST /a manual']);
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
      // msw replaces the global fetch: read it at call time.
      const { http } = recordingClient((input, init) => fetch(input, init));
      await (await http.send(request(`${origin}/a`, 'POST'))).text();
      const refused = await http.send(request(`${origin}/a`, 'POST')).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RedirectError);
      expect((refused as RedirectError).status).toBe(0);
      expect(hits).toBe(2);
    } finally {
      server.close();
    }
  });

  // What Bun 1, Deno 2 and node-fetch 3 throw for a redirect under `redirect: 'error'` (taken from
  // each): an error with no cause that says so in its message.
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
      let hits = 0;
      const origin = await serve((req, res) => {
        req.resume();
        hits += 1;
        if (hits === 1) res.end('{}');
        else res.writeHead(307, { location: '/moved' }).end();
      });
      const runtimeFetch: FetchLike = async (input, init) => {
        const response = await fetch(input, { ...init, redirect: 'manual' });
        if (init?.redirect === 'error' && response.status >= 300 && response.status < 400) throw refusal(String(input));
        return response;
      };
      const { http, modes } = recordingClient(runtimeFetch);
      await (await http.send(request(`${origin}/a`, 'POST'))).text();
      const refused = await http.send(request(`${origin}/a`, 'POST')).catch((error: unknown) => error);
      expect(modes).toEqual(['POST /a manual', 'POST /a error']);
      expect(refused).toBeInstanceOf(RedirectError);
      expect((refused as RedirectError).status).toBe(0);
      expect((refused as Error).message).not.toContain(origin);
      expect(hits).toBe(2);
    },
  );

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
