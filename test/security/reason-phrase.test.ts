/**
 * A service that writes what it likes in the HTTP reason phrase (`200 OK <secret>`), which a
 * middleware logging `response.statusText` would write down. Clients are to ignore the phrase, and
 * the SDK does: answers reach middleware and callers without it, whatever it held.
 */
import type { Middleware } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import {
  HOSTILE_APP_ID,
  HOSTILE_SECRET,
  HOSTILE_TOKEN,
  type HostileService,
  useHostileService,
} from '../support/hostile-service.js';
import { financeRecords } from '../support/records.js';

const start = useHostileService();

/** An access-log middleware: one line per answer, with its status line. */
function accessLog(lines: string[]): Middleware {
  return async (request, next, context) => {
    const response = await next(request);
    lines.push(`${context.operation} ${response.status} ${response.statusText}`.trim());
    return response;
  };
}

/**
 * A service whose token answer's reason phrase echoes the client secret it received and the token
 * it issues, and whose finance answers (with `status`) echo the bearer token there.
 */
function echoingReason(status: number): Promise<HostileService> {
  return start((request, res) => {
    if (request.route === 'token') {
      const secret = new URLSearchParams(request.body).get('client_secret') ?? '';
      // As UTF-8 bytes, which fetch decodes back to the secret (Node writes the phrase as Latin-1).
      res.statusMessage = Buffer.from(`OK ${secret} ${HOSTILE_TOKEN}`).toString('latin1');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
      return true;
    }
    if (request.route !== 'finance') return false;
    res.statusMessage = `Answer for ${(request.authorization ?? '').replace(/^Bearer /, '')}`;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 204 ? undefined : status < 300 ? '{"success":true}' : '{"code":"x","message":"y"}');
    return true;
  });
}

describe('a reason phrase echoing credentials never reaches middleware', () => {
  it('the token answer: neither the client secret it received nor the token it issues', async () => {
    const service = await echoingReason(200);
    const lines: string[] = [];
    const client = service.client({ middleware: [accessLog(lines)] });
    const report = await client.finance.publish(HOSTILE_APP_ID, financeRecords(3));
    expect(report.recordsSent).toBe(3);
    expect(lines).toEqual(['token 200', 'finance 200']);
    for (const line of lines) {
      expect(line).not.toContain(HOSTILE_SECRET);
      expect(line).not.toContain(HOSTILE_TOKEN);
    }
  });

  it.each([200, 204, 500])(
    'a finance answer with status %i: not the bearer token the request carried',
    async (status) => {
      const service = await echoingReason(status);
      const lines: string[] = [];
      const client = service.client({ middleware: [accessLog(lines)] });
      await client.finance.publish(HOSTILE_APP_ID, financeRecords(3)).catch(() => undefined);
      expect(lines.filter((line) => line.startsWith('finance'))).toEqual([`finance ${status}`]);
      for (const line of lines) expect(line).not.toContain(HOSTILE_TOKEN);
    },
  );
});

describe('a reason phrase fetch cannot hand on', () => {
  // Fetch decodes the phrase as UTF-8: a Latin-1 byte becomes U+FFFD, which a Response refuses.
  it.each([
    ['without middleware', []],
    ['with a middleware', [accessLog([])]],
  ])('a Latin-1 phrase on a finance success is a batch sent, %s', async (_, middleware) => {
    const service = await start((request, res) => {
      if (request.route !== 'finance') return false;
      res.statusMessage = 'Não é um erro';
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      return true;
    });
    const report = await service.client({ middleware }).finance.publish(HOSTILE_APP_ID, financeRecords(3));
    expect(report.recordsSent).toBe(3);
    expect(service.on('finance')).toHaveLength(1);
  });
});
