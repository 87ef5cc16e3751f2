/**
 * A storage host answering a PUT with far more than anyone asked for, while a middleware logs
 * answers: the middleware is handed the answer read under the PUT's cap, never the whole stream.
 */
import type { ServerResponse } from 'node:http';
import type { Middleware } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { ResponseTooLargeError } from '../../src/errors.js';
import { drainedOrClosed, HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';

const start = useHostileService();

/** Writes filler under `status` until the client hangs up, or `maxBytes`; resolves with the bytes written. */
function flood(res: ServerResponse, status: number, maxBytes: number): Promise<number> {
  res.writeHead(status, { 'content-type': 'text/plain' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  return (async () => {
    while (!closed && written < maxBytes) {
      written += chunk.length;
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
    res.destroy();
    return written;
  })();
}

describe('a middleware logging the answers of a hostile storage host', () => {
  it.each([200, 500])(
    'an HTTP %i PUT answer of 64 MiB reaches it cut to its cap, and the file fails',
    async (status) => {
      let sent: Promise<number> | undefined;
      const service = await start(({ route }, res) => {
        if (route !== 'storage') return false;
        sent = flood(res, status, 64 * 1024 * 1024);
        return true;
      });
      const logged: number[] = [];
      const failures: unknown[] = [];
      const logging: Middleware = async (request, next, context) => {
        if (context.operation !== 'upload') return next(request);
        try {
          const response = await next(request);
          logged.push((await response.clone().text()).length);
          return response;
        } catch (error) {
          failures.push(error);
          throw error;
        }
      };
      const client = service.client({ middleware: [logging], maxRetries: 0 });
      const outcome = await client.uploads
        .upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }])
        .catch((error: unknown) => (error as { report?: unknown }).report ?? error);
      const files = (outcome as { files: { status: string }[] }).files;
      expect(files[0]?.status).toBe('failed');
      // Never the whole flood: at most the error cap (64 KiB) of text, or a ResponseTooLargeError for a 2xx.
      // (A cut error body ends with one more character, `…`, to show the cut.)
      for (const length of logged) expect(length).toBeLessThanOrEqual(64 * 1024 + 1);
      if (status === 200) expect(failures[0]).toBeInstanceOf(ResponseTooLargeError);
      else expect(logged).toHaveLength(1);
      expect((await sent) ?? 0).toBeLessThan(32 * 1024 * 1024);
    },
  );
});

describe('a signed address on the API origin itself', () => {
  it('the PUT there carries no bearer token, with or without middleware', async () => {
    const seen: (string | undefined)[] = [];
    const service = await start(({ route, path, authorization }, res) => {
      if (route === 'upload-urls') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ 'a.csv': `${service.url}/services/push/v1/customer/apps/${HOSTILE_APP_ID}/finance` }));
        return true;
      }
      if (path.endsWith('/finance')) {
        seen.push(authorization);
        res.writeHead(200).end();
        return true;
      }
      return false;
    });
    const passing: Middleware = (request, next) => next(request);
    for (const middleware of [[], [passing]]) {
      const report = await service
        .client({ middleware })
        .uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }]);
      expect(report.filesUploaded).toBe(1);
    }
    expect(seen).toEqual([undefined, undefined]);
  });
});
