/**
 * An error answer whose body never finishes: the status came, then the body stalls past the
 * attempt's timeout or the connection drops mid-body. The status is the service's verdict and the
 * body only detail, so the status decides, as for a body cut at its cap: a 400 is `failed` (not
 * `unknown`), a 429 or a 503 is waited out and re-sent, a 500 stays `unknown`.
 */
import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import type { Middleware, PublishReport, UploadReport } from 'push-api-client';
import { AbortError, BadRequestError, type PushApiError, ServerError, TokenError, UploadError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, HOSTILE_SECRET, type HostileRoute, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

/** The attempt's timeout in these tests: a stalled body is given up after it. */
const TIMEOUT_MS = 300;

/** Answers `status` with the start of a JSON error body, then sends nothing more. */
function stall(res: ServerResponse, status: number, start: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.write(start);
}

/** Answers `status` with the start of a body, then resets the connection. */
function dropMidBody(res: ServerResponse, status: number, start: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': '10000' });
  res.write(start);
  setTimeout(() => res.socket?.destroy(), 20);
}

async function publishOne(
  route: HostileRoute,
  play: (res: ServerResponse, hit: number) => boolean,
  middleware: Middleware[] = [],
) {
  const service = await start(({ route: at, hit }, res) => at === route && play(res, hit));
  const client = service.client({
    middleware,
    maxRetries: 1,
    timeoutMs: TIMEOUT_MS,
    backoff: { initialDelayMs: 0, maxDelayMs: 0 },
    maxRetryAfterMs: 0,
  });
  const started = performance.now();
  const report = await client.finance
    .publish(HOSTILE_APP_ID, [SAMPLE_RECORD])
    .catch((error: { report?: PublishReport }) => error.report);
  return { service, batch: report?.batches[0], elapsedMs: performance.now() - started };
}

describe('a finance POST answered with an error status whose body stalls', () => {
  it('a 400 is failed (the service refused it), not unknown, and its error is the 400', async () => {
    const { service, batch, elapsedMs } = await publishOne('finance', (res) => {
      stall(res, 400, '{"code":"400","message":"bad query');
      return true;
    });
    expect(batch?.status).toBe('failed');
    expect(batch?.error).toBeInstanceOf(BadRequestError);
    expect((batch?.error as PushApiError | undefined)?.status).toBe(400);
    expect(service.on('finance')).toHaveLength(1);
    // Given up at the attempt's timeout, not later.
    expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 2_000);
  });

  it.each([
    [503, 'later'],
    [429, 'slow down'],
  ])('a %i is waited out and re-sent, and the batch is sent once accepted', async (status, message) => {
    const { service, batch } = await publishOne('finance', (res, hit) => {
      if (hit > 1) return false;
      stall(res, status, `{"code":"${status}","message":"${message}`, { 'retry-after': '0' });
      return true;
    });
    expect(batch?.status).toBe('sent');
    expect(service.on('finance')).toHaveLength(2);
  });

  it('a 500 stays unknown (the service may have stored it), and is not re-sent', async () => {
    const { service, batch } = await publishOne('finance', (res) => {
      stall(res, 500, '{"code":"500","message":"oops');
      return true;
    });
    expect(batch?.status).toBe('unknown');
    expect(batch?.error).toBeInstanceOf(ServerError);
    expect(service.on('finance')).toHaveLength(1);
  });

  it('a 422 whose connection drops mid-body is failed, naming the 422', async () => {
    const { service, batch } = await publishOne('finance', (res) => {
      dropMidBody(res, 422, '{"code":"422","message":"bad record');
      return true;
    });
    expect(batch?.status).toBe('failed');
    expect((batch?.error as PushApiError | undefined)?.status).toBe(422);
    expect(service.on('finance')).toHaveLength(1);
  });

  it('the same with a middleware that reads every answer: the 400 reaches it, and the batch is failed', async () => {
    const seen: number[] = [];
    const reading: Middleware = async (request, next) => {
      const response = await next(request);
      await response.clone().text();
      seen.push(response.status);
      return response;
    };
    const { batch } = await publishOne(
      'finance',
      (res) => {
        stall(res, 400, '{"code":"400","message":"bad query');
        return true;
      },
      [reading],
    );
    expect(batch?.status).toBe('failed');
    expect(batch?.error).toBeInstanceOf(BadRequestError);
    expect(seen).toContain(400);
  });

  it('a stalled body that ends inside an echoed secret keeps no part of the secret', async () => {
    const prefix = HOSTILE_SECRET.slice(0, 12);
    const { batch } = await publishOne('finance', (res) => {
      stall(res, 400, `{"code":"400","message":"you sent ${prefix}`);
      return true;
    });
    expect(batch?.status).toBe('failed');
    const seen = [inspect(batch?.error, { depth: 10 }), JSON.stringify(batch?.error)].join('\n');
    expect(seen).not.toContain(prefix);
    expect(seen).not.toContain(prefix.slice(0, 6));
  });

  it('the caller aborting during the stalled body still ends with an AbortError', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      stall(res, 400, '{"code":"400","message":"bad');
      return true;
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await service
      .client({ timeoutMs: 5_000 })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'], { signal: controller.signal })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AbortError);
  });
});

describe('idempotent requests answered with a refusal whose body stalls', () => {
  it('a token 401 is a TokenError, not retried as if nothing had answered', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      stall(res, 401, '{"error":"invalid_client","error_description":"no such');
      return true;
    });
    const error = await service
      .client({ maxRetries: 2, timeoutMs: TIMEOUT_MS, backoff: { initialDelayMs: 0, maxDelayMs: 0 } })
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).status).toBe(401);
    expect(service.on('token')).toHaveLength(1);
  });

  it('a storage 403 is an UploadError naming the 403, not retried', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'storage') return false;
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.write('<Error><Code>InvalidBucketState</Code><Message>The bucket is');
      return true;
    });
    const report = await service
      .client({ maxRetries: 2, timeoutMs: TIMEOUT_MS, backoff: { initialDelayMs: 0, maxDelayMs: 0 } })
      .uploads.upload(HOSTILE_APP_ID, [{ name: 'a.csv', data: 'x' }])
      .catch((error: { report?: UploadReport }) => error.report);
    const file = report?.files[0];
    expect(file?.status).toBe('failed');
    expect(file?.error).toBeInstanceOf(UploadError);
    expect((file?.error as UploadError | undefined)?.status).toBe(403);
    expect(service.on('storage')).toHaveLength(1);
  });
});
