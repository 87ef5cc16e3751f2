/**
 * A token endpoint that writes the token it issues into its answer's headers (`x-request-id`, a
 * debug header): the token is a secret there like the client secret, so the `response` hook, the
 * log and `.withResponse()` never carry it, while the client still sends it as issued.
 */
import { inspect } from 'node:util';
import type { Middleware, ResponseHookEvent } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { recordingLogger } from '../support/recorders.js';
import { financeRecords } from '../support/records.js';

const start = useHostileService();

/** A token endpoint echoing the token it issues in two headers, one of them the request id. */
function echoingIssuedToken() {
  return start((request, res) => {
    if (request.route !== 'token') return false;
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-request-id': HOSTILE_TOKEN,
      'x-debug': `issued=${encodeURIComponent(HOSTILE_TOKEN)}`,
    });
    res.end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
    return true;
  });
}

const passThrough: Middleware = (request, next) => next(request);

describe('the token a token answer issues, echoed in its headers', () => {
  it.each([
    ['without middleware', []],
    ['with a middleware', [passThrough]],
  ])('is in no hook event, log line or .withResponse() of the token request (%s)', async (_, middleware) => {
    const service = await echoingIssuedToken();
    const events: ResponseHookEvent[] = [];
    const logger = recordingLogger();
    const client = service.client({ middleware, logger, hooks: { response: (event) => events.push(event) } });
    const report = await client.finance.publish(HOSTILE_APP_ID, financeRecords(3));
    const { data, response } = await client.tokens.getToken({ forceRefresh: true }).withResponse();

    // The token is used as issued.
    expect(report.recordsSent).toBe(3);
    expect(data.accessToken).toBe(HOSTILE_TOKEN);
    expect(service.on('finance')[0]?.authorization).toBe(`Bearer ${HOSTILE_TOKEN}`);
    // The service did echo: the request id is there, marked.
    const tokenEvents = events.filter((event) => event.operation === 'token');
    expect(tokenEvents).toHaveLength(2);
    for (const event of tokenEvents) expect(event.requestId).toBe('[redacted]');
    expect(response?.requestId).toBe('[redacted]');
    expect(response?.headers.get('x-debug')).toBe('issued=[redacted]');
    const seen = [
      JSON.stringify(events),
      inspect(logger.lines, { depth: Infinity }),
      JSON.stringify([...(response?.headers ?? [])]),
    ].join('\n');
    expect(seen).not.toContain(HOSTILE_TOKEN);
    expect(seen).not.toContain(encodeURIComponent(HOSTILE_TOKEN));
  });
});

describe('a data answer without a body', () => {
  it('a 204 echoing the bearer token in x-request-id gives the response hook no token', async () => {
    const service = await start((request, res) => {
      if (request.route !== 'finance') return false;
      res.writeHead(204, { 'x-request-id': (request.authorization ?? '').replace(/^Bearer /, '') }).end();
      return true;
    });
    const events: ResponseHookEvent[] = [];
    const client = service.client({ hooks: { response: (event) => events.push(event) } });
    await client.finance.publish(HOSTILE_APP_ID, financeRecords(3));
    const finance = events.filter((event) => event.operation === 'finance');
    expect(finance.map((event) => [event.status, event.requestId])).toEqual([[204, '[redacted]']]);
  });
});
