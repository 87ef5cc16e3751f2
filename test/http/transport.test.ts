import {
  AbortError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PushError,
  type RetryHookEvent,
  ServerError,
  TimeoutError,
} from 'push-api-client';
import { Agent } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { noHooks } from '../../src/http/fetch.js';
import { FetchHttpClient, type FetchHttpClientOptions } from '../../src/http/http-client.js';
import type { RequestPacing, RequestSpec } from '../../src/http/types.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { recordingLogger } from '../support/recorders.js';

const serve = useLoopbackServers();

function client(overrides: Partial<FetchHttpClientOptions> = {}): FetchHttpClient {
  return new FetchHttpClient({
    timeoutMs: 2_000,
    maxRetries: 2,
    retryAmbiguous: false,
    allowInsecureHttp: false,
    userAgent: 'push-api-client/test node/test',
    logger: recordingLogger(),
    backoff: { initialDelayMs: 1, maxDelayMs: 5 },
    tokens: () => ({ getToken: async () => ({ accessToken: 'tok-1' }), invalidate: () => undefined }),
    ...overrides,
  });
}

/** Hooks that tell `onRetry` of each wait before a re-send: the transport's one retry event. */
function retryHooks(onRetry: (event: RetryHookEvent) => void): Pick<FetchHttpClientOptions, 'hooks'> {
  return { hooks: { ...noHooks, retry: onRetry } };
}

function spec(url: string, extra: Partial<RequestSpec> = {}): RequestSpec {
  return { operation: 'test', method: 'GET', url: new URL(url), auth: 'none', retryPolicy: 'idempotent', ...extra };
}

describe('transport over real HTTP on 127.0.0.1', () => {
  it('a refused connection is a ConnectionError that surely did not send the request', async () => {
    const base = await serve(() => undefined);
    const server = serve.servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    const error = await client({ maxRetries: 0 })
      .send(spec(`${base}/x`))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMaybeSent).toBe(false);
  });

  it('a refused connection is retried even for the non-idempotent policy', async () => {
    const base = await serve(() => undefined);
    const server = serve.servers.pop()!;
    await new Promise((resolve) => server.close(resolve));
    const retries: number[] = [];
    const error = await client({ maxRetries: 2, ...retryHooks((i) => retries.push(i.attempt)) })
      .send(spec(`${base}/x`, { method: 'POST', retryPolicy: 'non-idempotent' }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(retries).toEqual([1, 2]);
  });

  it('a connection reset after the request was sent may have been processed and is not re-sent for a POST', async () => {
    let received = 0;
    const base = await serve((req) => {
      received++;
      req.socket.destroy();
    });
    const error = await client()
      .send(spec(`${base}/finance`, { method: 'POST', body: () => '{}', retryPolicy: 'non-idempotent' }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMaybeSent).toBe(true);
    expect(received).toBe(1);
  });

  it('a reset on an idempotent request is retried up to maxRetries', async () => {
    let received = 0;
    const base = await serve((req, res) => {
      received++;
      if (received < 3) req.socket.destroy();
      else res.end('ok');
    });
    const response = await client({ maxRetries: 2 }).send(spec(`${base}/x`));
    expect(await response.text()).toBe('ok');
    expect(received).toBe(3);
  });

  it('no answer within timeoutMs is a TimeoutError for that attempt', async () => {
    const base = await serve(() => undefined);
    const started = Date.now();
    const error = await client({ timeoutMs: 100, maxRetries: 1 })
      .send(spec(`${base}/slow`))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("the caller's AbortSignal ends the request with AbortError, not a retry", async () => {
    const base = await serve(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await client()
      .send(spec(`${base}/slow`, { call: { headers: {}, signal: controller.signal } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
  });

  it('an abort during the backoff wait stops at once', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(503).end();
    });
    const controller = new AbortController();
    const pending = client({
      backoff: { initialDelayMs: 10_000, maxDelayMs: 10_000 },
      ...retryHooks(() => controller.abort()),
    })
      .send(spec(`${base}/x`, { call: { headers: {}, signal: controller.signal } }))
      .catch((e: unknown) => e);
    expect(await pending).toBeInstanceOf(AbortError);
  });

  it('retries a 503 after the Retry-After delay', async () => {
    const times: number[] = [];
    const base = await serve((_req, res) => {
      times.push(Date.now());
      if (times.length === 1) res.writeHead(503, { 'retry-after': '1' }).end();
      else res.end('ok');
    });
    const delays: number[] = [];
    await client(retryHooks((i) => delays.push(i.delayMs))).send(spec(`${base}/x`));
    expect(delays).toEqual([1_000]);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
  });

  it('honours a Retry-After of 0 on the first wait only; later waits back off', async () => {
    let hits = 0;
    const base = await serve((_req, res) => {
      hits += 1;
      if (hits <= 3) res.writeHead(503, { 'retry-after': '0' }).end();
      else res.end('ok');
    });
    const delays: number[] = [];
    await client({
      maxRetries: 3,
      backoff: { initialDelayMs: 20, maxDelayMs: 100, jitter: 0 },
      ...retryHooks((i) => delays.push(i.delayMs)),
    }).send(spec(`${base}/x`));
    expect(delays).toEqual([0, 40, 80]);
  });

  it('a paced request waits out 429s with the injected backoff, gives its turn back for each wait, and uses no retry', async () => {
    let hits = 0;
    const base = await serve((_req, res) => {
      hits += 1;
      if (hits <= 2) res.writeHead(429).end();
      else res.end('ok');
    });
    const delays: number[] = [];
    const turns: string[] = [];
    const pacing: RequestPacing = {
      acquire: async () => {
        turns.push('acquire');
        return true;
      },
      release: () => turns.push('release'),
      rateLimited: (_retryAfterMs, willRetry) => turns.push(`rate-limited ${willRetry}`),
      withinDeadline: () => true,
    };
    const response = await client({
      maxRetries: 0,
      backoff: { initialDelayMs: 3, maxDelayMs: 3, jitter: 0 },
      ...retryHooks((i) => delays.push(i.delayMs)),
    }).send(spec(`${base}/x`, { method: 'POST', retryPolicy: 'non-idempotent', pacing }));
    expect(await response.text()).toBe('ok');
    expect(hits).toBe(3);
    expect(delays).toEqual([3, 3]);
    expect(turns).toEqual(['rate-limited false', 'release', 'acquire', 'rate-limited false', 'release', 'acquire']);
  });

  it('a paced request gives up with the 429 once the deadline would pass', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(429, { 'retry-after': '1' }).end();
    });
    const pacing: RequestPacing = {
      acquire: async () => true,
      release: () => undefined,
      rateLimited: () => undefined,
      withinDeadline: (delayMs) => delayMs < 500,
    };
    const started = Date.now();
    const result = await client({ maxRetries: 5 }).exchange(
      spec(`${base}/x`, { method: 'POST', retryPolicy: 'non-idempotent', body: () => '{}', pacing }),
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.name).toBe('RateLimitError');
    // The body went out; the 429 itself says it was not taken (the batch's rule makes that `failed`).
    expect(!result.ok && result.bodySent).toBe(true);
    expect(!result.ok && result.earlierAmbiguous).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('maps the final error status to its PushApiError subclass with the parsed body', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req-7' });
      res.end(JSON.stringify({ code: '404', message: 'Not Found', success: false }));
    });
    const error = (await client()
      .send(spec(`${base}/x`))
      .catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.requestId).toBe('req-7');
    expect(error.body).toEqual({ code: '404', message: 'Not Found', success: false });
  });

  it('gives up after maxRetries with the last error', async () => {
    let received = 0;
    const base = await serve((_req, res) => {
      received++;
      res.writeHead(500).end();
    });
    await expect(client({ maxRetries: 2 }).send(spec(`${base}/x`))).rejects.toBeInstanceOf(ServerError);
    expect(received).toBe(3);
  });

  it('sends the User-Agent and logs method, path without query, status, attempt and duration', async () => {
    let userAgent: string | undefined;
    const base = await serve((req, res) => {
      userAgent = req.headers['user-agent'];
      res.end('ok');
    });
    const logger = recordingLogger();
    await client({ logger }).send(spec(`${base}/files/a.csv?X-Signature=secret-sig`));
    expect(userAgent).toBe('push-api-client/test node/test');
    const line = logger.lines.find((l) => l.level === 'debug');
    expect(line?.fields).toMatchObject({ method: 'GET', path: '/files/a.csv', status: 200, attempt: 1 });
    expect(typeof line?.fields?.durationMs).toBe('number');
    expect(JSON.stringify(logger.lines)).not.toContain('secret-sig');
  });

  it('refuses a request to plain http on a non-loopback host before sending', async () => {
    await expect(client().send(spec('http://example.com/x'))).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('uses undici fetch with the given dispatcher', async () => {
    const base = await serve((_req, res) => res.end('via dispatcher'));
    const agent = new Agent({ keepAliveTimeout: 10 });
    try {
      const response = await client({ dispatcher: agent }).send(spec(`${base}/x`));
      expect(await response.text()).toBe('via dispatcher');
    } finally {
      await agent.close();
    }
  });

  it('looks up globalThis.fetch at call time, so interceptors installed later see requests', async () => {
    const http = client();
    const original = globalThis.fetch;
    const seen: string[] = [];
    globalThis.fetch = async (input, init) => {
      seen.push(String(input));
      return original(input, init);
    };
    try {
      const base = await serve((_req, res) => res.end('ok'));
      await http.send(spec(`${base}/late`));
    } finally {
      globalThis.fetch = original;
    }
    expect(seen).toHaveLength(1);
  });
});

describe('failures before anything is sent', () => {
  it('a header value fetch refuses (CR/LF) is a ConfigurationError: nothing sent, not retried, value not quoted', async () => {
    let received = 0;
    const base = await serve((_req, res) => {
      received += 1;
      res.end('ok');
    });
    const retries: number[] = [];
    const error = await client({ maxRetries: 2, ...retryHooks((info) => retries.push(info.attempt)) })
      .send(
        spec(`${base}/finance`, {
          method: 'POST',
          body: () => '{}',
          retryPolicy: 'non-idempotent',
          headers: { 'x-trace': 'secret-value\r\nx-injected: 1' },
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/header/);
    expect(JSON.stringify(error) + String(error)).not.toContain('secret-value');
    expect(retries).toEqual([]);
    expect(received).toBe(0);
  });

  it('a body factory that throws fails the request once with a PushError and clears the attempt timer', async () => {
    const base = await serve((_req, res) => res.end('ok'));
    const created: unknown[] = [];
    const cleared = new Set<unknown>();
    const realSetTimeout = globalThis.setTimeout;
    const realClearTimeout = globalThis.clearTimeout;
    const spySet = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const handle = realSetTimeout(...args);
      created.push(handle);
      return handle;
    }) as typeof setTimeout);
    const spyClear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((handle?: NodeJS.Timeout) => {
      cleared.add(handle);
      realClearTimeout(handle);
    }) as typeof clearTimeout);
    let calls = 0;
    let error: unknown;
    try {
      error = await client({ timeoutMs: 60_000 })
        .send(
          spec(`${base}/put`, {
            method: 'PUT',
            body: () => {
              calls += 1;
              throw new Error('ENOENT: no such file');
            },
          }),
        )
        .catch((e: unknown) => e);
    } finally {
      spySet.mockRestore();
      spyClear.mockRestore();
    }
    expect(error).toBeInstanceOf(PushError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toBe('test request body could not be created: ENOENT: no such file');
    expect(calls).toBe(1);
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter((handle) => !cleared.has(handle))).toEqual([]);
  });
});

describe('the attempt timeout measures a stall, not a whole streamed body', () => {
  /** A body that yields `chunks` chunks of 1 KiB, `gapMs` apart, touching the timeout on each. */
  function slowBody(chunks: number, gapMs: number): RequestSpec['body'] {
    return ({ touch }) => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (sent === chunks) return controller.close();
          await new Promise((resolve) => setTimeout(resolve, gapMs));
          sent += 1;
          touch();
          controller.enqueue(new Uint8Array(1024));
        },
      });
    };
  }

  it('a body that keeps moving outlasts timeoutMs', async () => {
    const base = await serve((_req, res, body) => res.end(String(body.length)));
    const response = await client({ timeoutMs: 150, maxRetries: 0 }).send(
      spec(`${base}/put`, {
        method: 'PUT',
        headers: { 'content-length': String(8 * 1024) },
        body: slowBody(8, 60),
      }),
    );
    // 8 chunks × 60 ms is about 480 ms, over three times the timeout, yet each gap is well within it.
    expect(await response.text()).toBe(String(8 * 1024));
  });

  it('a body that stalls times out', async () => {
    const base = await serve((_req, res) => res.end('unreachable'));
    const error = await client({ timeoutMs: 150, maxRetries: 0 })
      .send(
        spec(`${base}/put`, {
          method: 'PUT',
          headers: { 'content-length': String(8 * 1024) },
          body: slowBody(8, 400),
        }),
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
  });
});
