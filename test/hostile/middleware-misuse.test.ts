/**
 * A careless or hostile middleware: one that calls `next` twice (a home-made retry, or two calls
 * made together), or that fails after its request left. A finance POST must go out once per
 * attempt, and a batch the service may hold is never reported as failed.
 */
import { ConnectionError, type Middleware, type PublishReport, PushError } from 'push-api-client';
import { createPushApiHandler } from 'push-api-client/testing';
import { describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { financeRecord } from '../support/records.js';

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

function setup(middleware: Middleware[], refuseFinance = false) {
  const emulator = createPushApiHandler();
  const client = clientFor(
    {
      fetch: (input, init) => {
        const request = new Request(input, init);
        // Node's words for a connection refused: nothing was sent.
        if (refuseFinance && request.url.endsWith('/finance')) {
          const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' });
          return Promise.reject(new TypeError('fetch failed', { cause }));
        }
        return emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    { middleware, maxRetries: 2, backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 },
  );
  const sent = (operation: string) => emulator.state.requests.filter((request) => request.operation === operation);
  /** `publish`'s report, whether it resolved or rejected with one. */
  const publish = async () => {
    const outcome = await client.finance.publish('demo-app', [record]).catch((caught: unknown) => caught);
    return (outcome instanceof PushError ? (outcome as PushError & { report: PublishReport }).report : outcome) as
      | PublishReport
      | undefined;
  };
  return { client, sent, publish };
}

const onFinance =
  (run: Middleware): Middleware =>
  (request, next, context) =>
    context.operation === 'finance' ? run(request, next, context) : next(request);

describe('a middleware that calls next twice', () => {
  it('one after the other: the POST goes out once, the batch is unknown (stored once), never failed nor duplicated', async () => {
    const { client, sent, publish } = setup([
      onFinance(async (request, next) => {
        const copy = request.clone();
        await next(request);
        return next(copy);
      }),
    ]);
    const error = await client.finance.publishBatch('demo-app', [record]).catch((caught: unknown) => caught);
    expect(sent('finance')).toHaveLength(1);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMaybeSent).toBe(true);
    expect((error as Error).message).toMatch(/next twice/);
    const report = await publish();
    expect(sent('finance')).toHaveLength(2);
    expect(report?.recordsUnknown).toBe(1);
    expect(report?.recordsFailed).toBe(0);
  });

  it('both at once: only one is sent', async () => {
    const { client, sent } = setup([
      onFinance(async (request, next) => {
        const [first] = await Promise.allSettled([next(request.clone()), next(request)]);
        if (first.status === 'rejected') throw first.reason;
        return first.value;
      }),
    ]);
    await client.finance.publishBatch('demo-app', [record]);
    expect(sent('finance')).toHaveLength(1);
  });

  it('a GET retried by the middleware itself is refused too; the SDK re-sends on its own terms', async () => {
    let calls = 0;
    const { client } = setup([
      async (request, next, context) => {
        if (context.operation !== 'request') return next(request);
        calls++;
        const copy = request.clone();
        const answer = await next(request);
        return answer.status === 404 ? next(copy) : answer;
      },
    ]);
    await expect(client.request({ method: 'GET', path: '/no/such/path' })).rejects.toThrow(/next twice/);
    // Retried by the SDK as "maybe sent" for an idempotent GET: each attempt ran the middleware once.
    expect(calls).toBe(3);
  });
});

describe('a middleware that fails after its request left', () => {
  it('its own PushError after a 2xx makes the batch unknown, not failed', async () => {
    const { sent, publish } = setup([
      onFinance(async (request, next) => {
        await next(request);
        throw new PushError('audit log unavailable');
      }),
    ]);
    const report = await publish();
    expect(sent('finance')).toHaveLength(1);
    expect(report?.recordsUnknown).toBe(1);
    expect(report?.recordsFailed).toBe(0);
  });

  // What it throws may quote the answer, which the service chose: Deno's words for a refused
  // connection, or a copied error's code, must not make a batch the service took look unsent.
  it.each([
    [
      'quoting an answer in the words Deno uses for a refused connection',
      () =>
        new Error(
          'upstream: error sending request for url (x): client error (Connect): tcp connect error: Connection refused (os error 111)',
        ),
    ],
    ['carrying a connect code', () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
  ])('an error of its own after the answer came, %s, makes the batch unknown, not failed', async (_, thrown) => {
    const { sent, publish } = setup([
      onFinance(async (request, next) => {
        await next(request);
        throw thrown();
      }),
    ]);
    const report = await publish();
    expect(sent('finance')).toHaveLength(1);
    expect(report?.recordsUnknown).toBe(1);
    expect(report?.recordsFailed).toBe(0);
  });

  it('a refused connection it lets through is still not sent: failed, never unknown', async () => {
    const { publish } = setup([onFinance((request, next) => next(request))], true);
    const report = await publish();
    expect(report?.recordsFailed).toBe(1);
    expect(report?.recordsUnknown).toBe(0);
  });

  it('its own PushError before next is still final: failed, nothing sent', async () => {
    const { sent, publish } = setup([
      onFinance(async () => {
        throw new PushError('refused by policy');
      }),
    ]);
    const report = await publish();
    expect(sent('finance')).toHaveLength(0);
    expect(report?.recordsFailed).toBe(1);
    expect(report?.recordsUnknown).toBe(0);
  });
});

describe('a middleware that sets a header the transport owns', () => {
  const start = useHostileService();

  it.each([
    ['transfer-encoding', 'chunked'],
    ['upgrade', 'websocket'],
    ['expect', '100-continue'],
    ['keep-alive', 'timeout=5'],
    ['content-length', '3'],
    ['connection', 'close'],
  ])(
    '%s: refused before sending, the batch failed (not unknown), nothing on the wire, no wait',
    async (name, value) => {
      const service = await start();
      const setting: Middleware = onFinance((request, next) => {
        const headers = new Headers(request.headers);
        headers.set(name, value);
        return next(new Request(request, { headers }));
      });
      const client = service.client({ middleware: [setting], maxRetries: 1, timeoutMs: 2_000 });
      const started = performance.now();
      const outcome = await client.finance
        .publish(HOSTILE_APP_ID, [financeRecord()])
        .catch((caught: unknown) => caught);
      const report = (
        outcome instanceof PushError ? (outcome as PushError & { report: PublishReport }).report : outcome
      ) as PublishReport | undefined;
      expect(performance.now() - started).toBeLessThan(1_500);
      expect(service.on('finance')).toHaveLength(0);
      expect(report?.recordsFailed).toBe(1);
      expect(report?.recordsUnknown).toBe(0);
      expect(report?.batches[0]?.error?.message).toContain(`the ${name} header`);
    },
  );

  it('the PUT keeps its own content-length when a middleware rebuilds the request with its headers', async () => {
    const service = await start();
    const rebuilding: Middleware = (request, next) =>
      next(new Request(request, { headers: new Headers(request.headers) }));
    const client = service.client({ middleware: [rebuilding] });
    const report = await client.uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'hello' }]);
    expect(report.filesUploaded).toBe(1);
  });
});
