/** tracing: true: an operation span and an attempt span per request, and traceparent to the data API only. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { writeFile } from 'node:fs/promises';
import { type Context, type ContextManager, context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createPushApiHandler } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';
import { tempDir } from '../support/files.js';

const exporter = new InMemorySpanExporter();

/**
 * What `NodeSDK` registers (@opentelemetry/context-async-hooks), in a few lines: the active context
 * follows async calls, so that an application's span is the parent of the client's.
 */
class AsyncLocalStorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(active, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

function childrenOf(parent: ReadableSpan | undefined): ReadableSpan[] {
  return exporter
    .getFinishedSpans()
    .filter((span) => parent !== undefined && span.parentSpanContext?.spanId === parent.spanContext().spanId);
}

function traceparentOf(span: ReadableSpan | undefined): string {
  return `00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`;
}

beforeEach(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

afterEach(() => {
  exporter.reset();
  trace.disable();
  propagation.disable();
  context.disable();
});

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

function setup() {
  const emulator = createPushApiHandler();
  const wire: Request[] = [];
  const client = clientFor(
    {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        wire.push(request.clone());
        return emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    { tracing: true, maxRetries: 2, backoff: { initialDelayMs: 0, maxDelayMs: 0 }, maxRetryAfterMs: 0 },
  );
  return { emulator, client, wire };
}

describe('tracing', () => {
  it('makes an operation span with one client span per attempt, and sends that attempt traceparent', async () => {
    const { emulator, client, wire } = setup();
    emulator.faults.add({ match: { operation: 'finance' }, status: 503, times: 1 });
    await client.finance.publishBatch('demo-app', [record]);
    const spans = exporter.getFinishedSpans();
    const operation = spans.find((span) => span.name === 'push-api finance');
    expect(operation).toBeDefined();
    const attempts = spans.filter(
      (span) => span.parentSpanContext?.spanId === operation?.spanContext().spanId && span.name === 'POST',
    );
    expect(attempts.map((span) => span.attributes['http.response.status_code'])).toEqual([503, 200]);
    expect(attempts[0]?.attributes['error.type']).toBe('503');
    expect(attempts[1]?.attributes['http.request.resend_count']).toBe(1);
    expect(attempts[1]?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': 'https://api.push.test/services/push/v1/customer/apps/demo-app/finance',
      'server.address': 'api.push.test',
      'server.port': 443,
    });
    const posts = wire.filter((request) => request.method === 'POST' && request.url.includes('/finance'));
    expect(posts.map((request) => request.headers.get('traceparent'))).toEqual(
      attempts.map((span) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`),
    );
    // The token request is a span of its own, and carries no trace context to the auth server.
    expect(spans.some((span) => span.name === 'push-api token')).toBe(true);
    expect(wire[0]?.headers.get('traceparent')).toBeNull();
  });

  it('url.full leaves out the query, as hooks do', async () => {
    const { client } = setup();
    await client.uploads.getUploadUrls('demo-app', ['secret-name.csv']);
    const get = exporter.getFinishedSpans().find((span) => span.name === 'GET');
    expect(get?.attributes['url.full']).toBe('https://api.push.test/services/push/v1/customer/apps/demo-app/upload');
  });

  it('never sends traceparent to a signed upload address', async () => {
    const { client, wire } = setup();
    const files = await tempDir();
    try {
      const file = await files.write('users.csv', 'email\n');
      await writeFile(file, 'email\nada@example.com\n');
      await client.uploads.upload('demo-app', [file]);
    } finally {
      await files.cleanup();
    }
    const put = wire.find((request) => request.method === 'PUT');
    expect(put).toBeDefined();
    expect(put?.headers.get('traceparent')).toBeNull();
    expect(wire.find((request) => request.method === 'GET')?.headers.get('traceparent')).toMatch(/^00-/);
    expect(exporter.getFinishedSpans().some((span) => span.name === 'PUT')).toBe(true);
  });

  it('sends no traceparent without tracing: true', async () => {
    const emulator = createPushApiHandler();
    const wire: Request[] = [];
    const client = clientFor({
      fetch: async (input, init) => {
        const request = new Request(input, init);
        wire.push(request);
        return emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    });
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    expect(wire.every((request) => request.headers.get('traceparent') === null)).toBe(true);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("nests under the caller's active span; a token refresh nests under the request that needed it", async () => {
    const { emulator, client, wire } = setup();
    await trace.getTracer('app').startActiveSpan('job', async (job) => {
      await client.request({
        method: 'GET',
        path: '/services/push/v1/customer/apps/demo-app/upload',
        query: { filenames: 'a.csv' },
      });
      job.end();
    });
    const spans = exporter.getFinishedSpans();
    const job = spans.find((span) => span.name === 'job');
    const [operation, ...others] = childrenOf(job);
    expect(others).toEqual([]);
    expect(operation?.name).toBe('push-api request');
    expect(operation?.spanContext().traceId).toBe(job?.spanContext().traceId);
    // Beneath it: the token request it needed, and its one GET.
    const beneath = childrenOf(operation);
    expect(beneath.map((span) => span.name).sort()).toEqual(['GET', 'push-api token']);
    const token = beneath.find((span) => span.name === 'push-api token');
    expect(childrenOf(token).map((span) => span.name)).toEqual(['POST']);
    const get = beneath.find((span) => span.name === 'GET');
    expect(wire.find((request) => request.method === 'GET')?.headers.get('traceparent')).toBe(traceparentOf(get));
    expect(emulator.state.requests.find((request) => request.operation === 'upload-urls')?.headers.traceparent).toBe(
      traceparentOf(get),
    );
  });

  it("a 401's re-send is a span of its own, counted in http.request.resend_count", async () => {
    const { emulator, client } = setup();
    await client.tokens.getToken();
    exporter.reset();
    emulator.faults.add({ match: { operation: 'upload-urls' }, status: 401, times: 1 });
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    const operation = exporter.getFinishedSpans().find((span) => span.name === 'push-api upload-urls');
    const gets = childrenOf(operation).filter((span) => span.name === 'GET');
    expect(gets.map((span) => span.attributes['http.response.status_code'])).toEqual([401, 200]);
    expect(gets.map((span) => span.attributes['http.request.resend_count'])).toEqual([undefined, 1]);
    expect(childrenOf(operation).some((span) => span.name === 'push-api token')).toBe(true);
  });

  it("the PUT span's url.full leaves out the signed address's query", async () => {
    const { client, wire } = setup();
    const files = await tempDir();
    try {
      const file = await files.write('users.csv', '');
      await writeFile(file, 'email\nada@example.com\n');
      await client.uploads.upload('demo-app', [file]);
    } finally {
      await files.cleanup();
    }
    const put = exporter.getFinishedSpans().find((span) => span.name === 'PUT');
    const wirePut = wire.find((request) => request.method === 'PUT');
    expect(new URL(wirePut?.url ?? '').search).not.toBe('');
    const address = new URL(wirePut?.url ?? '');
    expect(put?.attributes['url.full']).toBe(`${address.origin}${address.pathname}`);
    expect(put?.attributes['server.address']).toBe(address.hostname);
  });

  it('a withOptions client inherits tracing unless given tracing: false', async () => {
    const { client, wire } = setup();
    await client.tokens.getToken();
    exporter.reset();
    await client.withOptions({ timeoutMs: 5_000 }).uploads.getUploadUrls('demo-app', ['a.csv']);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['GET', 'push-api upload-urls']);
    exporter.reset();
    await client.withOptions({ tracing: false }).uploads.getUploadUrls('demo-app', ['b.csv']);
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(wire.at(-1)?.headers.get('traceparent')).toBeNull();
  });

  it('a middleware runs inside the attempt span, and sees traceparent on the request it is given', async () => {
    const emulator = createPushApiHandler();
    const seen: { active: string | undefined; traceparent: string | null }[] = [];
    const client = clientFor(
      {
        fetch: emulator.fetch,
        authUrl: 'https://auth.push.test',
        baseUrl: 'https://api.push.test',
        scopeBase: 'https://api.push.test',
        clientId: 'demo-client',
        clientSecret: 'demo-secret-do-not-use-in-production',
      },
      {
        tracing: true,
        middleware: [
          (request, next, context) => {
            if (context.operation === 'uploadUrls') {
              seen.push({
                active: trace.getActiveSpan()?.spanContext().spanId,
                traceparent: request.headers.get('traceparent'),
              });
            }
            return next(request);
          },
        ],
      },
    );
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    const get = exporter.getFinishedSpans().find((span) => span.name === 'GET');
    expect(seen).toEqual([{ active: get?.spanContext().spanId, traceparent: traceparentOf(get) }]);
  });
});
