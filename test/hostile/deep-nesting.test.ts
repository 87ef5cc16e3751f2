/**
 * A service whose answers nest arrays tens of thousands deep: a few hundred KB that JSON.parse
 * accepts, but that overflows the stack of any recursive walk (scrubbing, JSON.stringify,
 * util.inspect). Each answer must be judged by its status like any other, and the error the caller
 * gets must serialize.
 */
import { inspect } from 'node:util';
import {
  NotFoundError,
  PublishStoppedError,
  type PushApiError,
  RateLimitError,
  TokenError,
  UnexpectedResponseError,
  UnprocessableEntityError,
  UploadError,
} from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { HOSTILE_APP_ID, useHostileService } from '../support/hostile-service.js';
import { SAMPLE_RECORD } from '../support/records.js';

const start = useHostileService();

// Under the 64 KiB cap on error and token answers, so that the whole body is parsed.
const DEPTH = 30_000;
const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
/** An object that JSON.parse reads, with a field nested `DEPTH` arrays deep. */
const deepObject = (fields: string) => `{${fields},"detail":${deep}}`;

/** Every view of an error a caller or a logger takes must work: none may throw a RangeError. */
function viewsOf(error: unknown): string[] {
  return [String(error), JSON.stringify(error), inspect(error, { depth: Infinity })];
}

describe('answers nested tens of thousands deep are judged by their status', () => {
  it('a 404 on the finance POST stops the run with a NotFoundError cause that serializes', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(deepObject('"code":"not_found","message":"no app"'));
      return true;
    });
    const stopped = await service
      .client()
      .finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD, SAMPLE_RECORD])
      .catch((caught: unknown) => caught);
    expect(stopped).toBeInstanceOf(PublishStoppedError);
    // The stopped run's error serializes its cause too: bounded as well.
    for (const view of viewsOf(stopped)) expect(view.length).toBeLessThan(10_000);
    const error = (stopped as PublishStoppedError).cause;
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).message).toBe('404 no app');
    expect((error as NotFoundError).code).toBe('not_found');
    expect(JSON.stringify((error as NotFoundError).body)).toContain('[nested too deep]');
    for (const view of viewsOf(error)) expect(view.length).toBeLessThan(10_000);
  });

  it('a 401 with a deep body refreshes the token and the batch is sent again', async () => {
    const service = await start(({ route, hit }, res) => {
      if (route !== 'finance' || hit > 1) return false;
      res.writeHead(401, { 'content-type': 'application/json' }).end(deepObject('"code":"expired"'));
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    expect(report.recordsSent).toBe(1);
    expect(service.on('token')).toHaveLength(2);
    expect(service.on('finance')).toHaveLength(2);
  });

  it('a 429 with a deep body is retried', async () => {
    const service = await start(({ route, hit }, res) => {
      if (route !== 'upload-urls' || hit > 1) return false;
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end(deepObject('"code":"slow"'));
      return true;
    });
    const addresses = await service.client({ maxRetries: 2 }).uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv']);
    expect(Object.keys(addresses)).toEqual(['a.csv']);
    expect(service.on('upload-urls')).toHaveLength(2);
  });

  it('a 429 with a deep body, retries used up, is a RateLimitError', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      res.writeHead(429, { 'content-type': 'application/json' }).end(deepObject('"code":"slow"'));
      return true;
    });
    const error = await service
      .client()
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    for (const view of viewsOf(error)) expect(view).toContain('429');
  });

  it('a token answer invalid_client with a deep body is a TokenError', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(401, { 'content-type': 'application/json' }).end(deepObject('"error":"invalid_client"'));
      return true;
    });
    const error = await service
      .client()
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).error).toBe('invalid_client');
    viewsOf(error);
  });

  it('a 2xx token answer nesting deep is an invalid token response, not a crash', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'token') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(deepObject('"token_type":"Bearer"'));
      return true;
    });
    const error = await service
      .client()
      .tokens.getToken()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TokenError);
    expect((error as TokenError).error).toBe('invalid_token_response');
  });

  it('a finance 2xx without success, nesting deep, leaves the batch unknown with an error that serializes', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(deepObject('"ok":1'));
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    expect(report.recordsUnknown).toBe(1);
    const error = report.batches[0]?.error;
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    for (const view of viewsOf(error)) expect(view.length).toBeLessThan(10_000);
  });

  it('a 422 whose deep body sits inside arrays of objects keeps its code and message', async () => {
    const nested = `{"code":"invalid","message":"bad","errors":[{"field":"amount","why":${deep}}]}`;
    const service = await start(({ route }, res) => {
      if (route !== 'finance') return false;
      res.writeHead(422, { 'content-type': 'application/json' }).end(nested);
      return true;
    });
    const report = await service.client().finance.publish(HOSTILE_APP_ID, [SAMPLE_RECORD]);
    const error = report.batches[0]?.error;
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as PushApiError).code).toBe('invalid');
    expect((error as PushApiError).message).toBe('422 bad');
    expect((error as PushApiError).body).toMatchObject({ errors: [{ field: 'amount' }] });
    expect(JSON.stringify((error as PushApiError).body)).toContain('[nested too deep]');
  });

  it('an upload-address 2xx whose address nests deep is an UploadError naming the file', async () => {
    const service = await start(({ route }, res) => {
      if (route !== 'upload-urls') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"a.csv":${deep}}`);
      return true;
    });
    const error = await service
      .client()
      .uploads.getUploadUrls(HOSTILE_APP_ID, ['a.csv'])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UploadError);
    expect((error as UploadError).message).toBe('The upload address for "a.csv" is not a string.');
  });
});
