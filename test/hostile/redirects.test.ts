/** A service that answers the finance POST with redirects: the batch was received, so it is unknown. */
import { describe, expect, it } from 'vitest';
import { RedirectError } from '../../src/errors.js';
import { FINANCE_RECORD, HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';

const start = useHostileService();
const serve = useLoopbackServers();

describe('a finance POST answered with a redirect', () => {
  it.each([301, 302, 303, 307, 308])('%i within the origin: unknown, never followed, never re-sent', async (code) => {
    const service = await start(({ route, path }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(code, { location: `${path}?again=1` }).end();
      return true;
    });
    const client = service.client({ maxRetries: 3 });
    const report = await client.finance.publish(HOSTILE_APP_ID, [FINANCE_RECORD]);
    const batch = report.batches[0];
    expect(batch?.status).toBe('unknown');
    expect(report.recordsUnknown).toBe(1);
    expect(batch?.error).toBeInstanceOf(RedirectError);
    expect(batch?.error?.message).toContain(`HTTP ${code} to ${service.url}`);
    expect(service.on('finance').map((request) => request.method)).toEqual(['POST']);
  });

  it('two hops to another origin: the first is not followed, and the other origin receives nothing', async () => {
    const seenElsewhere: string[] = [];
    const final = await serve((req, res) => {
      seenElsewhere.push(`${req.method} ${req.url}`);
      res.end('{"success":true}');
    });
    const middle = await serve((req, res) => {
      seenElsewhere.push(`${req.method} ${req.url}`);
      res.writeHead(302, { location: `${final}/landed?token=abc` }).end();
    });
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(307, { location: `${middle}/hop?sig=secret-ish` }).end();
      return true;
    });
    const report = await service.client({ maxRetries: 3 }).finance.publish(HOSTILE_APP_ID, [FINANCE_RECORD]);
    const error = report.batches[0]?.error as RedirectError;
    expect(report.batches[0]?.status).toBe('unknown');
    expect(error.status).toBe(307);
    expect(error.targetOrigin).toBe(middle);
    // The redirect is named by its origin only: no path, query or credentials of the target.
    expect(error.message).not.toContain('sig=');
    expect(JSON.stringify(error)).not.toContain('secret-ish');
    expect(seenElsewhere).toEqual([]);
    expect(service.on('finance')).toHaveLength(1);
  });

  it('only retryAmbiguous re-sends it (to the same address, never to the target)', async () => {
    const service = await start(({ route, hit }, res) => {
      if (route !== 'finance' || hit > 1) return false;
      res.writeHead(302, { location: '/elsewhere' }).end();
      return true;
    });
    const report = await service
      .client({ maxRetries: 2, retryAmbiguous: true })
      .finance.publish(HOSTILE_APP_ID, [FINANCE_RECORD]);
    // Sent twice: the first may have been stored, so the batch stays unknown even after the success.
    expect(report.batches[0]?.status).toBe('unknown');
    expect(service.on('finance').map((request) => request.path)).toEqual([
      `/services/push/v1/customer/apps/${HOSTILE_APP_ID}/finance`,
      `/services/push/v1/customer/apps/${HOSTILE_APP_ID}/finance`,
    ]);
    expect(service.requests.some((request) => request.path === '/elsewhere')).toBe(false);
  });
});
