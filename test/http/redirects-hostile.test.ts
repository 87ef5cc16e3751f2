/** A service that answers the finance POST with redirects: the batch was received, so it is unknown. */

import { RedirectError, TokenError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { useLoopbackServers } from '../support/loopback-server.js';
import { SAMPLE_RECORD } from '../support/records.js';
import { remoteDns } from '../support/remote-dns.js';

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
    const report = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
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
    const report = await service.client({ maxRetries: 3 }).finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
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
      .finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    // Sent twice: the first may have been stored, so the batch stays unknown even after the success.
    expect(report.batches[0]?.status).toBe('unknown');
    expect(service.on('finance').map((request) => request.path)).toEqual([
      `/services/push/v1/customer/apps/${HOSTILE_APP_ID}/finance`,
      `/services/push/v1/customer/apps/${HOSTILE_APP_ID}/finance`,
    ]);
    expect(service.requests.some((request) => request.path === '/elsewhere')).toBe(false);
  });
});

/**
 * A remote service (a made-up name the test's fetch sends to 127.0.0.1) redirecting one of the
 * client's requests into this machine: no hop of the token, upload-address or storage requests
 * reaches the local sink.
 */
describe('a remote service redirecting into this machine', () => {
  async function localSink(): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"a.csv":"https://files.remote.test/a"}');
    });
    return { url, seen };
  }

  function remote(service: { url: string }) {
    const dns = remoteDns(['api.remote.test', 'files.remote.test']);
    const url = service.url.replace('127.0.0.1', 'api.remote.test');
    return { dns, options: { authUrl: url, baseUrl: url, allowInsecureHttp: true, fetch: dns.fetch } };
  }

  it('the upload-address GET redirected to 127.0.0.1:<port> is refused', async () => {
    const sink = await localSink();
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      res.writeHead(302, { location: `${sink.url.replace('127.0.0.1', '0x7f.1')}/admin?x=1` }).end();
      return true;
    });
    const { dns, options } = remote(service);
    const error = await service
      .client(options)
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as Error).message).toMatch(/upload-urls answered with a redirect .*points into this machine/);
    expect(sink.seen).toEqual([]);
    expect(dns.elsewhere).toEqual([]);
    expect(service.on('upload-urls')).toHaveLength(1);
  });

  it('the token request redirected to localhost is not followed', async () => {
    const sink = await localSink();
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(307, { location: `${sink.url.replace('127.0.0.1', 'LOCALHOST.')}/oauth2/token` }).end();
      return true;
    });
    const { options } = remote(service);
    const error = await service
      .client(options)
      .tokens.getToken()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenError);
    expect(sink.seen).toEqual([]);
  });

  it('the storage PUT redirected to [::ffff:127.0.0.1] is not followed', async () => {
    const sink = await localSink();
    const service = await start(({ route }, res) => {
      if (route === 'upload-urls') {
        const port = new URL(service.url).port;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ 'a.csv': `http://files.remote.test:${port}/files/a.csv?sig=1` }));
        return true;
      }
      if (route !== 'storage') return false;
      const port = new URL(sink.url).port;
      res.writeHead(303, { location: `http://[::ffff:127.0.0.1]:${port}/steal` }).end();
      return true;
    });
    const { dns, options } = remote(service);
    const report = await service
      .client(options)
      .uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'secret file' }])
      .catch((e: unknown) => e);
    const file = (report as { files: { status: string; error?: Error }[] }).files[0];
    // The uploader streams every body, and a streamed body follows no redirect; a PUT with a
    // buffered body meets the address rule instead (test/http/redirects.test.ts).
    expect(file?.status).toBe('failed');
    expect(file?.error?.message).toMatch(/redirect/);
    expect(service.on('storage')).toHaveLength(1);
    expect(sink.seen).toEqual([]);
    expect(dns.elsewhere).toEqual([]);
  });
});
