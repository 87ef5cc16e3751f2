/**
 * tracing: true with a propagator that is not the W3C one: it may write any header into the
 * carrier. It gets to add trace context, never to replace what the transport and the caller own
 * (the bearer token, the body's type and length, the host).
 */
import { type Context, context, propagation, type TextMapPropagator, type TextMapSetter } from '@opentelemetry/api';
import { createPushApiHandler } from 'push-api-client/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientFor } from '../support/clients.js';

const record = {
  created: '2025-01-31',
  amount: 12,
  currency: 'USD',
  identifier: 'ada@example.com',
  type: 'expense' as const,
  vendor: 'Acme',
};

/** Writes fixed headers into every carrier, as a careless or hostile propagator could. */
class WritingPropagator implements TextMapPropagator {
  constructor(readonly headers: Record<string, string>) {}
  inject(_context: Context, carrier: unknown, setter: TextMapSetter): void {
    for (const [name, value] of Object.entries(this.headers)) setter.set(carrier, name, value);
  }
  extract(active: Context): Context {
    return active;
  }
  fields(): string[] {
    return Object.keys(this.headers);
  }
}

afterEach(() => {
  propagation.disable();
  context.disable();
});

beforeEach(() => {
  propagation.disable();
});

function setup(answer: (request: Request) => Response | undefined = () => undefined) {
  const emulator = createPushApiHandler();
  const wire: Request[] = [];
  const client = clientFor(
    {
      fetch: async (input, init) => {
        const request = new Request(input, init);
        wire.push(request.clone());
        return answer(request) ?? emulator.fetch(request);
      },
      authUrl: 'https://auth.push.test',
      baseUrl: 'https://api.push.test',
      scopeBase: 'https://api.push.test',
      clientId: 'demo-client',
      clientSecret: 'demo-secret-do-not-use-in-production',
    },
    { tracing: true, maxRetries: 0 },
  );
  return { emulator, client, wire };
}

describe('a propagator that writes headers the transport owns', () => {
  it('cannot replace or join the bearer token, the content type or the host; its own fields still go', async () => {
    propagation.setGlobalPropagator(
      new WritingPropagator({
        Authorization: 'Bearer chosen-by-propagator',
        'Content-Type': 'text/plain',
        Host: 'elsewhere.test',
        'Content-Length': '1',
        'x-trace-vendor': 'ok',
      }),
    );
    const { client, wire } = setup();
    await client.finance.publishBatch('demo-app', [record]);
    const post = wire.find((request) => request.method === 'POST' && request.url.includes('/finance'));
    const token = await client.tokens.getToken();
    expect(post?.headers.get('authorization')).toBe(`Bearer ${token.accessToken}`);
    expect(post?.headers.get('content-type')).toBe('application/json');
    expect(post?.headers.get('x-trace-vendor')).toBe('ok');
  });
});

describe('trace context and redirects', () => {
  it('goes on a hop within the service, never on a hop to another origin', async () => {
    propagation.setGlobalPropagator(
      new WritingPropagator({
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        baggage: 'user=ada',
      }),
    );
    const hops: string[] = [];
    const { client, wire } = setup((request) => {
      const url = new URL(request.url);
      if (request.method !== 'GET' || !url.pathname.includes('/upload')) return undefined;
      if (url.hostname === 'api.push.test' && !hops.includes('same')) {
        hops.push('same');
        return new Response(null, { status: 307, headers: { location: `${url.pathname}/again${url.search}` } });
      }
      if (url.hostname === 'api.push.test') {
        return new Response(null, { status: 307, headers: { location: `https://mirror.push.test${url.pathname}` } });
      }
      return Response.json({ 'a.csv': 'https://uploads.push.test/files/a.csv?sig=1' });
    });
    await client.uploads.getUploadUrls('demo-app', ['a.csv']);
    const gets = wire.filter((request) => request.method === 'GET');
    expect(gets.map((request) => new URL(request.url).hostname)).toEqual([
      'api.push.test',
      'api.push.test',
      'mirror.push.test',
    ]);
    expect(gets.map((request) => request.headers.get('baggage'))).toEqual(['user=ada', 'user=ada', null]);
    expect(gets.map((request) => request.headers.get('traceparent') !== null)).toEqual([true, true, false]);
  });
});
