/** tracing: true: an operation span and an attempt span per request, and traceparent to the data API only. */
import { writeFile } from 'node:fs/promises';
import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { createPushApiHandler } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emulatorClient } from '../support/clients.js';
import { tempDir } from '../uploads/helpers.js';

const exporter = new InMemorySpanExporter();

beforeEach(() => {
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
  const client = emulatorClient(
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
    const client = emulatorClient({
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
});
