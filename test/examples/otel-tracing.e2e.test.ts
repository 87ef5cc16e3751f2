import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTracing } from '../../examples/otel-tracing.js';
import { clientFor } from '../support/clients.js';
import { SAMPLE_RECORD } from '../support/records.js';

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(() => emulator.close());

const record = SAMPLE_RECORD;

describe('examples/otel-tracing.ts', () => {
  it('gives one span per operation, a child span per attempt, and retries and token refreshes as events', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const { hooks, traced } = createTracing(provider.getTracer('test'));
    const client = clientFor(emulator, { hooks });
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });

    await traced('push.publish', () => client.finance.publish(emulator.mock.appId, [record]));
    await traced('push.upload', () =>
      client.uploads.upload(emulator.mock.appId, [{ name: 'users.csv', data: 'email\nada@example.com\n' }]),
    );

    const spans = exporter.getFinishedSpans();
    const roots = spans.filter((span) => span.parentSpanContext === undefined);
    expect(roots.map((span) => span.name)).toEqual(['push.publish', 'push.upload']);
    const childrenOf = (name: string) => {
      const root = roots.find((span) => span.name === name);
      return spans
        .filter((span) => span.parentSpanContext?.spanId === root?.spanContext().spanId)
        .map((span) => [span.name, span.attributes['push.attempt'], span.attributes['http.response.status_code']]);
    };
    expect(childrenOf('push.publish')).toEqual([
      ['token POST', 1, 200],
      ['finance POST', 1, 503],
      ['finance POST', 2, 200],
    ]);
    expect(childrenOf('push.upload')).toEqual([
      ['upload-urls GET', 1, 200],
      ['upload PUT', 1, 200],
    ]);

    const publish = roots[0];
    expect(publish?.events.map((event) => event.name)).toEqual(['token refresh', 'retry']);
    expect(publish?.events[1]?.attributes).toMatchObject({ 'push.attempt': 1, 'http.response.status_code': 503 });
    // Every attempt span carries the id the emulator answered with.
    const answered = new Set(emulator.mock.state.requests.map((request) => request.id));
    for (const span of spans.filter((span) => span.parentSpanContext !== undefined)) {
      expect(answered).toContain(span.attributes['push.request_id']);
    }
    // No span or event holds the token, the secret or a signed query.
    const token = emulator.mock.state.tokens[0]?.token ?? 'missing';
    const text = JSON.stringify(spans.map((span) => [span.attributes, span.events]));
    expect(text).not.toContain(token);
    expect(text).not.toContain(emulator.mock.clientSecret);
    expect(text).not.toContain('?');
    await provider.shutdown();
  });
});
