/**
 * Fetch failures as Bun and Deno report them quote the whole address they could not reach: Bun in
 * the error's `path`, Deno in its cause's message (`error sending request for url (<address>)`).
 * A signed address's query is its signature, a write credential for the file, and a redirect's
 * query is whatever the answer put there: neither may reach what the caller can inspect or log.
 * The shapes are copied from Bun 1.4 and Deno 2.9 (the runtime matrix meets the real ones).
 */

import { inspect } from 'node:util';
import type { FetchLike, PushClient, UploadReport } from 'push-api-client';
import { ConnectionError, PublishStoppedError, UploadError, UploadStoppedError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();
const SIGNATURE = 'X-Amz-Signature=f00dfacecafe0123456789';

/** A connection refused, reported the way each runtime's fetch reports it. */
const refusals: Record<string, (url: string) => Error> = {
  Bun: (url) =>
    Object.assign(new TypeError('ECONNREFUSED: Unable to connect. Is the computer able to access the url?'), {
      path: url,
      errno: 0,
      code: 'ECONNREFUSED',
    }),
  Deno: (url) =>
    new TypeError('fetch failed', {
      cause: new Error(
        `error sending request for url (${url}): client error (Connect): tcp connect error: Connection refused (os error 111)`,
      ),
    }),
  // A runtime that quotes the address in another spelling than its href: decoded.
  'a runtime quoting a decoded address': (url) =>
    new TypeError('fetch failed', { cause: new Error(`request to ${decodeURIComponent(url)} failed: ECONNREFUSED`) }),
};

/** Sends every request to the service, except those to `refused` addresses, which fail as `runtime`'s fetch does. */
function refusing(runtime: string, refused = '/files/'): FetchLike {
  return (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.includes(refused)) return Promise.reject(refusals[runtime]?.(url));
    return fetch(input, init);
  };
}

/** Everything a caller may see of an error: its views, and its causes' own fields. */
/**
 * Uploads one small file, `a.csv`: the call's outcome (its report, or the error it rejected with)
 * and the report either way (a refusal with a code stops the run; one without fails the file).
 */
async function uploadOneFile(client: PushClient): Promise<{ outcome: unknown; report: UploadReport }> {
  const outcome: unknown = await client.uploads
    .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }])
    .catch((e: unknown) => e);
  return { outcome, report: outcome instanceof UploadStoppedError ? outcome.report : (outcome as UploadReport) };
}

function views(error: unknown): string {
  return [inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error), String(error)].join('\n');
}

describe.each(['Bun', 'Deno', 'a runtime quoting a decoded address'])(
  'a storage host that cannot be reached, as %s reports it',
  (runtime) => {
    it('fails the file without showing the signed address query anywhere', async () => {
      const service = await start(({ route }, res) => {
        if (route !== 'upload-urls') return false;
        const address = `${service.url}/files/a.csv?X-Amz-Credential=AKIAEXAMPLE%2F20250131%2Fus-east-1&${SIGNATURE}&token=${encodeURIComponent(HOSTILE_TOKEN)}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address }));
        return true;
      });
      const client = service.client({ fetch: refusing(runtime) });
      // A refusal with a code (Bun's) stops the run; one without (Deno's) fails the file.
      const { outcome, report } = await uploadOneFile(client);
      expect(report.files[0]?.status).toBe('failed');
      const fileError = report.files[0]?.error;
      expect(fileError).toBeInstanceOf(UploadError);
      expect(fileError?.cause).toBeInstanceOf(ConnectionError);
      for (const seen of [views(outcome), views(report), views(fileError)]) {
        expect(seen).not.toContain('f00dfacecafe');
        expect(seen).not.toContain('abcdefghijklmnop');
        // What was unreachable is still named: the host and the path, without the query.
        if (seen.includes('/files/a.csv')) expect(seen).toContain('/files/a.csv?[redacted]');
      }
    });
  },
);

describe.each(['Bun', 'Deno'])('a data API that refuses the connection, as %s reports it', (runtime) => {
  it('counts the batch as not sent (failed, not unknown) and stops the run, as on Node', async () => {
    const service = await start();
    const client = service.client({ fetch: refusing(runtime, '/finance') });
    const stopped = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(PublishStoppedError);
    const { cause, report } = stopped as PublishStoppedError;
    expect(cause).toBeInstanceOf(ConnectionError);
    expect((cause as ConnectionError).requestMaybeSent).toBe(false);
    expect((cause as ConnectionError).message).toBe('finance request failed: ECONNREFUSED');
    expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0 });
  });
});

/** An answer whose body fails after its headers came (a reset), with the error `failure` makes of its address. */
function answeringThenFailing(failure: (url: string) => Error, failing = '/files/'): FetchLike {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.includes(failing)) return fetch(input, init);
    // The body is taken, as a storage host that answers once the PUT has ended would take it.
    if (init?.body instanceof Blob) await init.body.arrayBuffer();
    const body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(failure(url)) });
    return new Response(body, { status: 200, headers: { 'content-type': 'application/xml' } });
  };
}

describe('a storage host whose answer breaks off, as Bun reports it', () => {
  it('fails the file without showing the signed address query that Bun quotes in the body failure', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      const address = `${service.url}/files/a.csv?${SIGNATURE}&token=${encodeURIComponent(HOSTILE_TOKEN)}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address }));
      return true;
    });
    // Bun 1.x: a reset while the answer's body is read carries the whole address in `path`.
    const bunReset = (url: string) =>
      Object.assign(new TypeError('ECONNRESET: The socket connection was closed unexpectedly.'), {
        path: url,
        errno: 0,
        code: 'ECONNRESET',
      });
    const client = service.client({ fetch: answeringThenFailing(bunReset), maxRetries: 0 });
    const { outcome, report } = await uploadOneFile(client);
    expect(report.files[0]?.status).toBe('failed');
    const fileError = report.files[0]?.error;
    expect(fileError?.cause).toBeInstanceOf(ConnectionError);
    // The reset came after the body was sent: it may have been stored.
    expect(fileError?.cause).toMatchObject({ requestMaybeSent: true });
    for (const seen of [views(outcome), views(report), views(fileError)]) {
      expect(seen).not.toContain('f00dfacecafe');
      expect(seen).not.toContain('abcdefghijklmnop');
    }
    expect(views(fileError)).toContain('/files/a.csv?[redacted]');
  });
});

describe('a fetch failure whose causes include an AggregateError quoting the address', () => {
  it('scrubs the query from each of its members', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      const address = `${service.url}/files/a.csv?${SIGNATURE}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address }));
      return true;
    });
    // A caller's fetch that tried two routes to the host, each quoting the address in its own spelling.
    const tried: FetchLike = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (!url.includes('/files/')) return fetch(input, init);
      const members = [
        new Error(`route 1: ${url} refused`),
        new Error(`route 2: ${url.toUpperCase()} refused`, { cause: new Error(`via ${url}`) }),
      ];
      return Promise.reject(new TypeError('fetch failed', { cause: new AggregateError(members, 'all routes failed') }));
    };
    const client = service.client({ fetch: tried, maxRetries: 0 });
    const { report } = await uploadOneFile(client);
    expect(report.files[0]?.status).toBe('failed');
    const seen = views(report.files[0]?.error);
    expect(seen).toContain('route 2');
    expect(seen.toLowerCase()).not.toContain('f00dfacecafe');
  });
});

describe('a failure quoting an address whose path an answer filled with addresses', () => {
  it('is scrubbed in time linear in its length, not quadratic (a 256 KiB path took seconds)', async () => {
    // Every `http://` in the run starts an address whose query is looked for up to the `)`.
    const path = `/files/${'http://'.repeat(Math.ceil((256 * 1024) / 7))})`;
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      const address = `${service.url}${path}?${SIGNATURE}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'a.csv': address }));
      return true;
    });
    const client = service.client({ fetch: refusing('Deno'), maxRetries: 0 });
    const started = performance.now();
    const { report } = await uploadOneFile(client);
    const elapsedMs = performance.now() - started;
    expect(report.files[0]?.status).toBe('failed');
    expect(views(report.files[0]?.error)).not.toContain('f00dfacecafe');
    // Linear, this takes milliseconds; the quadratic search took over 5 s on one pass of the text.
    expect(elapsedMs).toBeLessThan(2_000);
  });
});

/** Deno 2's fetch failures, as it words them (no `code`), for a data API at `url`. */
const denoFailures: Record<string, { fail: (url: string) => Error; code: string | undefined }> = {
  'a host name that does not resolve': {
    fail: (url) =>
      new TypeError('fetch failed', {
        cause: new Error(
          `error sending request for url (${url}): client error (Connect): dns error: failed to lookup address information: Name or service not known`,
        ),
      }),
    code: 'ENOTFOUND',
  },
  'a resolver that cannot answer for now': {
    fail: (url) =>
      new TypeError('fetch failed', {
        cause: new Error(
          `error sending request for url (${url}): client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution`,
        ),
      }),
    code: 'EAI_AGAIN',
  },
  // The ambiguous ones: the connection was made, and the request may have been written.
  'a reset after the request was written': {
    fail: () => new TypeError('fetch failed', { cause: new Error('Connection reset by peer (os error 104)') }),
    code: undefined,
  },
  'a close before the answer came': {
    fail: (url) =>
      new TypeError('fetch failed', {
        cause: new Error(
          `error sending request from 127.0.0.1:53240 for ${url} (127.0.0.1:443): client error (SendRequest): connection closed before message completed`,
        ),
      }),
    code: undefined,
  },
  // A TLS handshake that broke off is a connect failure Deno names no system error for: not mapped.
  'a TLS handshake cut short': {
    fail: (url) =>
      new TypeError('fetch failed', {
        cause: new Error(`error sending request for url (${url}): client error (Connect): tls handshake eof`),
      }),
    code: undefined,
  },
};

describe.each(Object.entries(denoFailures))('a data API failing on Deno with %s', (_, { fail, code }) => {
  it(
    code === undefined ? 'counts the batch as unknown: it may have been stored' : `counts it as not sent (${code})`,
    async () => {
      const service = await start();
      const client = service.client({
        maxRetries: 0,
        fetch: (input, init) => {
          const url = input instanceof Request ? input.url : String(input);
          return url.includes('/finance') ? Promise.reject(fail(url)) : fetch(input, init);
        },
      });
      const outcome = await client.finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]).catch((e: unknown) => e);
      const report = outcome instanceof PublishStoppedError ? outcome.report : outcome;
      if (code === undefined) {
        expect(report).toMatchObject({ recordsFailed: 0, recordsUnknown: 1 });
      } else {
        expect(outcome).toBeInstanceOf(PublishStoppedError);
        expect((outcome as PublishStoppedError).cause).toMatchObject({
          requestMaybeSent: false,
          message: `finance request failed: ${code}`,
        });
        expect(report).toMatchObject({ recordsFailed: 1, recordsUnknown: 0 });
      }
    },
  );
});
