/** A service that answers with more than anyone asked for: reads stop at their caps, memory stays bounded. */
import type { ServerResponse } from 'node:http';
import { PushApiError, PushError, ResponseTooLargeError } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import {
  MAX_API_RESPONSE_BYTES,
  MAX_ERROR_BODY_BYTES,
  MAX_FINANCE_RESPONSE_BYTES,
  MAX_TOKEN_RESPONSE_BYTES,
} from '../../src/http/fetch.js';
import { drainedOrClosed, HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { financeRecords, SAMPLE_RECORD } from '../support/records.js';

/** The longest text from an answer that an error message quotes (SECURITY.md). */
const MAX_ERROR_TEXT_LENGTH = 500;

const start = useHostileService();

/**
 * Claims `claimedBytes` and sends JSON-looking filler until the client hangs up, or at most
 * `maxBytes` (so that a client that never stops cannot make the test send gigabytes). Resolves
 * with the bytes written.
 */
function streamHuge(res: ServerResponse, claimedBytes: number, maxBytes: number): Promise<number> {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(claimedBytes) });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let written = 0;
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  return (async () => {
    res.write('{"access_token":"');
    while (!closed && written < maxBytes) {
      written += chunk.length;
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
    res.destroy();
    return written;
  })();
}

describe('response bodies are read up to a cap', () => {
  it('a token response claiming 1.5 GB stops at 64 KiB with a PushError, and memory stays bounded', async () => {
    let sent: Promise<number> | undefined;
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      sent = streamHuge(res, 1_500_000_000, 256 * 1024 * 1024);
      return true;
    });
    const rssBefore = process.memoryUsage().rss;
    const error = await service
      .client()
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    const rssGrowthMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
    expect(error).toBeInstanceOf(PushError);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).limitBytes).toBe(MAX_TOKEN_RESPONSE_BYTES);
    expect((error as Error).message).toMatch(/token response body is larger than 65536 bytes/);
    // The connection was dropped: the server stopped long before its cap of 256 MiB (socket buffers hold a few MB).
    const written = (await sent) ?? 0;
    expect(written).toBeLessThan(64 * 1024 * 1024);
    // Loose: the test process also runs the server; a read without a cap grew by the whole answer.
    expect(rssGrowthMb).toBeLessThan(100);
    // Not retried: every attempt would get the same answer.
    expect(service.on('token')).toHaveLength(1);
  });

  it('an upload-address answer past 8 MiB is a ResponseTooLargeError', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      void streamHuge(res, 50 * 1024 * 1024, 50 * 1024 * 1024);
      return true;
    });
    const error = await service
      .client({ maxRetries: 2 })
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).limitBytes).toBe(MAX_API_RESPONSE_BYTES);
    expect(service.on('upload-urls')).toHaveLength(1);
  });

  it('a finance answer past its cap leaves the batch unknown: the service received it', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      void streamHuge(res, 20 * 1024 * 1024, 20 * 1024 * 1024);
      return true;
    });
    const report = await service.client({ maxRetries: 2 }).finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    expect(report.batches[0]?.status).toBe('unknown');
    expect(report.batches[0]?.error).toBeInstanceOf(ResponseTooLargeError);
    expect(service.on('finance')).toHaveLength(1);
  });
});

describe('finance answers are read up to 64 KiB', () => {
  /** A finance route that answers every POST with `{"success":true}` padded to 1 MiB. */
  const paddedSuccess = () =>
    start(({ route }, res) => {
      if (route !== 'finance') return false;
      const body = `{"success":true,"pad":"${'a'.repeat(1024 * 1024)}"}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body);
      return true;
    });

  it('publish: a padded success answer leaves each batch unknown, never failed, and is not re-sent', async () => {
    const service = await paddedSuccess();
    const report = await service
      .client({ maxRetries: 2 })
      .finance.publish(HOSTILE_APP_ID, financeRecords(6), { batchSize: 2, concurrency: 3 });
    expect(report.batches.map((batch) => batch.status)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(report).toMatchObject({ recordsSent: 0, recordsFailed: 0, recordsUnknown: 6 });
    for (const batch of report.batches) {
      expect(batch.error).toBeInstanceOf(ResponseTooLargeError);
      expect((batch.error as ResponseTooLargeError).limitBytes).toBe(MAX_FINANCE_RESPONSE_BYTES);
    }
    expect(service.on('finance')).toHaveLength(3);
  });

  it('publishBatch: a padded success answer is a ResponseTooLargeError, not re-sent', async () => {
    const service = await paddedSuccess();
    const error = await service
      .client({ maxRetries: 2 })
      .finance.publishBatch(HOSTILE_APP_ID, [SAMPLE_RECORD])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).limitBytes).toBe(MAX_FINANCE_RESPONSE_BYTES);
    expect(service.on('finance')).toHaveLength(1);
  });
});

describe('error texts are cut', () => {
  it('a 1 MiB error message: the body is read up to 64 KiB and the message stays short', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'invalid', message: 'm'.repeat(1024 * 1024), success: false }));
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const error = report.batches[0]?.error as PushApiError;
    expect(report.batches[0]?.status).toBe('failed');
    expect(error).toBeInstanceOf(PushApiError);
    expect(error.status).toBe(422);
    expect(error.message.length).toBeLessThanOrEqual(MAX_ERROR_TEXT_LENGTH + 10);
    expect(JSON.stringify(error.body).length).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES + 1024);
  });

  it(`a message under the body cap is cut to ${MAX_ERROR_TEXT_LENGTH} characters`, async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'c'.repeat(2000), message: 'é'.repeat(20_000), success: false }));
      return true;
    });
    const error = (await service
      .client()
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((caught: unknown) => caught)) as PushApiError;
    expect(error.message).toBe(`400 ${'é'.repeat(MAX_ERROR_TEXT_LENGTH - 1)}…`);
    expect(error.code.length).toBe(MAX_ERROR_TEXT_LENGTH);
  });
});
