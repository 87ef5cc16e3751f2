/**
 * Spans through OpenTelemetry, when `tracing: true`: one per logical request (the operation) and
 * one per HTTP attempt beneath it, with the stable HTTP client semantic conventions. Trace context
 * goes to the data API through the global propagator, never to a signed upload address.
 */
import type { Context, Span } from '@opentelemetry/api';
import { PushError } from '../errors.js';
import { isReservedHeader, redactedUrl } from './fetch.js';
import type { OpenTelemetry } from './otel-loader.js';
import { statusOf } from './retry.js';
import type { RequestSpec } from './types.js';

const TRACER_NAME = 'push-api-client';

export class Tracing {
  readonly #otel: OpenTelemetry;

  constructor(otel: OpenTelemetry) {
    this.#otel = otel;
  }

  /** Runs one logical request inside its operation span. */
  async operation<T>(
    spec: RequestSpec,
    run: (parent: Context) => Promise<T>,
    failure: (result: T) => unknown = () => undefined,
  ): Promise<T> {
    const { trace, context, SpanStatusCode, SpanKind } = this.#otel;
    const span = trace.getTracer(TRACER_NAME).startSpan(`push-api ${spec.operation}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'push_api.operation': spec.operation },
    });
    try {
      // Active while it runs: a token refresh it needs, and middleware, see it as their parent.
      const active = trace.setSpan(context.active(), span);
      const result = await context.with(active, () => run(active));
      const error = failure(result);
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', errorType(error));
      }
      return result;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute('error.type', errorType(error));
      throw error;
    } finally {
      span.end();
    }
  }

  /** Runs one HTTP attempt inside its client span; `headers` gets the trace context for the data API. */
  async attempt<T>(
    parent: Context | undefined,
    spec: RequestSpec,
    resend: number,
    send: (spec: RequestSpec) => Promise<T & { status?: number }>,
  ): Promise<T> {
    const { trace, context, propagation, SpanStatusCode, SpanKind } = this.#otel;
    const url = spec.url;
    const span: Span = trace.getTracer(TRACER_NAME).startSpan(
      spec.method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': spec.method,
          'url.full': redactedUrl(url),
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          ...(resend > 0 && { 'http.request.resend_count': resend }),
        },
      },
      parent ?? context.active(),
    );
    let sent = spec;
    const active = trace.setSpan(parent ?? context.active(), span);
    // The data API only: a signed upload address belongs to the storage host.
    if (spec.auth === 'bearer') {
      // The propagator writes into a carrier of its own: it adds trace fields, and never replaces
      // or joins a header the request already has, nor one the transport owns (an Authorization of
      // its own would be joined to the bearer token and the request refused).
      const carrier: Record<string, string> = {};
      propagation.inject(active, carrier);
      const taken = new Set(Object.keys(spec.headers ?? {}).map((name) => name.toLowerCase()));
      const headers: Record<string, string> = { ...spec.headers };
      const traceHeaders: string[] = [];
      for (const [name, value] of Object.entries(carrier)) {
        if (typeof value !== 'string' || isReservedHeader(name) || taken.has(name.toLowerCase())) continue;
        headers[name] = value;
        taken.add(name.toLowerCase());
        traceHeaders.push(name.toLowerCase());
      }
      sent = { ...spec, headers, traceHeaders };
    }
    try {
      const result = await context.with(active, () => send(sent));
      if (typeof result.status === 'number') span.setAttribute('http.response.status_code', result.status);
      return result;
    } catch (error) {
      // Status 0: a redirect that fetch refused before its status was read (a RedirectError).
      const read = error instanceof PushError ? statusOf(error) : undefined;
      const status = read === 0 ? undefined : read;
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      span.setAttribute('error.type', status !== undefined ? String(status) : errorType(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  }
}

function errorType(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}
