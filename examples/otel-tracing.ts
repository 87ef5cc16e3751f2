/**
 * Recipe: OpenTelemetry spans from the client's hooks.
 *
 * `traced('push.publish', () => client.finance.publish(...))` opens one span for the operation;
 * each HTTP attempt the client makes for it becomes a child span (`finance POST`, `token POST`)
 * with its status and the server's request id, and each retry and token refresh becomes an event
 * on the operation's span. The hooks see no header and no body, so no span can hold a token, the
 * secret or a record. Attempts made outside `traced` become spans of their own.
 *
 * The operation's span is found through Node's AsyncLocalStorage: hooks run in the async context
 * of the call that caused them. With an OpenTelemetry context manager registered (the Node SDK
 * registers one), `context.active()` would do the same.
 *
 *   npx tsx examples/otel-tracing.ts     # prints the spans with the console exporter
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { pathToFileURL } from 'node:url';
import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { PushClient, type PushClientHooks } from 'push-api-client';
import { startEmulator } from 'push-api-client/testing';

export interface Tracing {
  /** Pass these to `new PushClient({ hooks })`. */
  hooks: PushClientHooks;
  /** Runs `operation` inside a span named `name`; the client's attempts become its children. */
  traced<T>(name: string, operation: () => Promise<T>): Promise<T>;
}

export function createTracing(tracer: Tracer): Tracing {
  const current = new AsyncLocalStorage<Span>();
  // One span per attempt in flight, by the client's call id (a call's attempts never overlap).
  const attempts = new Map<number, Span>();

  const hooks: PushClientHooks = {
    request(event) {
      const parent = current.getStore();
      const parentContext = parent ? trace.setSpan(context.active(), parent) : context.active();
      const span = tracer.startSpan(
        `${event.operation} ${event.method}`,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            'http.request.method': event.method,
            'url.full': event.url,
            'push.operation': event.operation,
            'push.attempt': event.attempt,
          },
        },
        parentContext,
      );
      attempts.set(event.callId, span);
    },
    response(event) {
      const span = attempts.get(event.callId);
      if (!span) return;
      attempts.delete(event.callId);
      if (event.status !== undefined) span.setAttribute('http.response.status_code', event.status);
      if (event.requestId !== undefined) span.setAttribute('push.request_id', event.requestId);
      if (event.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: event.error });
      span.end();
    },
    retry(event) {
      current.getStore()?.addEvent('retry', {
        'push.operation': event.operation,
        'push.attempt': event.attempt,
        'push.retry_delay_ms': event.delayMs,
        'push.error': event.error,
        ...(event.status !== undefined && { 'http.response.status_code': event.status }),
      });
    },
    tokenRefresh(event) {
      current.getStore()?.addEvent('token refresh', {
        'push.token_refresh_reason': event.reason,
        'push.duration_ms': event.durationMs,
        ...(event.error !== undefined && { 'push.error': event.error }),
      });
    },
  };

  async function traced<T>(name: string, operation: () => Promise<T>): Promise<T> {
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL });
    try {
      const result = await current.run(span, operation);
      span.setStatus({ code: SpanStatusCode.OK });
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : String(error) });
      throw error;
    } finally {
      span.end();
    }
  }

  return { hooks, traced };
}

export async function main(): Promise<void> {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] });
  const { hooks, traced } = createTracing(provider.getTracer('push-api-client-example'));
  const emulator = await startEmulator();
  try {
    const client = new PushClient({
      clientId: emulator.mock.clientId,
      clientSecret: emulator.mock.clientSecret,
      authUrl: emulator.authUrl,
      baseUrl: emulator.baseUrl,
      scopeBase: emulator.mock.scopeBase,
      hooks,
    });
    // One busy answer, to show a retry event and two attempt spans.
    emulator.mock.faults.add({ match: { operation: 'finance' }, status: 503, retryAfter: 0, times: 1 });
    const record = {
      created: '2025-01-31',
      amount: 42,
      currency: 'USD',
      identifier: 'ada@example.com',
      type: 'expense',
      vendor: 'Acme',
    } as const;
    await traced('push.publish', () => client.finance.publish(emulator.mock.appId, [record]));
  } finally {
    await emulator.close();
    await provider.shutdown();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
