/**
 * The first request leaves at once: publish asks for its token before it reads or checks the
 * input, so that the token's round trip overlaps that work. The order is read from the client's
 * own hook events and from a getter on a record, which notes when it is read: no clock is compared.
 */

import type { ServerResponse } from 'node:http';
import type { FinanceRecordInput } from 'push-api-client';
import { AbortError, PublishStoppedError, RecordValidationError, TokenError } from 'push-api-client';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { describe, expect, it, vi } from 'vitest';
import { clientFor } from '../support/clients.js';
import { HOSTILE_TOKEN, useHostileService } from '../support/hostile-service.js';
import { financeRecords, toAsync } from '../support/records.js';

const COUNT = 3_000;

const startService = useHostileService();

/** A token endpoint that holds every request until `answer()`; `closed` resolves when the client hung up on one. */
async function heldTokenEndpoint() {
  const held: ServerResponse[] = [];
  let hungUp: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    hungUp = resolve;
  });
  const service = await startService((request, res) => {
    if (request.route !== 'token') return false;
    held.push(res);
    res.on('close', () => {
      if (!res.writableEnded) hungUp();
    });
    return true;
  });
  const answer = () => {
    for (const res of held.splice(0)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: HOSTILE_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
    }
  };
  return { service, closed, answer };
}

/**
 * The token attempts' ends as the transport's `response` hook tells them (`ended`: the first
 * one's error name), and the token manager's `tokenRefresh` events (`refreshes`).
 */
function tokenAttempts() {
  let first: (error: string | undefined) => void = () => {};
  const ended = new Promise<string | undefined>((resolve) => {
    first = resolve;
  });
  const refreshes: string[] = [];
  const hooks = {
    response: (event: { operation: string; error: string | undefined }) => {
      if (event.operation === 'token') first(event.error);
    },
    tokenRefresh: (event: { reason: string; error?: string | undefined }) => {
      refreshes.push(`${event.reason}:${event.error ?? 'ok'}`);
    },
  };
  return { ended, hooks, refreshes };
}

/** What `promise` settled with, or 'pending' after `ms` of real time. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms))]);
}

/** 'hung up' once `closed` resolves, 'still open' after `ms` of real time. */
function hungUpWithin(closed: Promise<void>, ms: number): Promise<string> {
  return Promise.race([
    closed.then(() => 'hung up'),
    new Promise<string>((resolve) => setTimeout(() => resolve('still open'), ms)),
  ]);
}

function withInvalidLast(count: number): FinanceRecordInput[] {
  const records = financeRecords(count);
  records[count - 1] = { ...records[count - 1], currency: 'euro' } as unknown as FinanceRecordInput;
  return records;
}

/** `records` with the one at `index` noting in `log` each time its amount is read. */
function noting(log: string[], records: FinanceRecordInput[], index: number, note: string): FinanceRecordInput[] {
  const record: Record<string, unknown> = { ...records[index] };
  const amount = record.amount;
  Object.defineProperty(record, 'amount', {
    enumerable: true,
    get() {
      log.push(note);
      return amount;
    },
  });
  const copy = [...records];
  copy[index] = record as FinanceRecordInput;
  return copy;
}

function loggingClient(log: string[], tokenDelayMs = 50) {
  const mock = createPushApiMock();
  // The token endpoint answers late: the check has every chance to finish before the token comes.
  mock.faults.add({ match: { operation: 'token' }, delayMs: tokenDelayMs, times: 1 });
  const client = clientFor(mock, {
    hooks: {
      request: (event) => log.push(`${event.operation} request`),
      response: (event) => log.push(`${event.operation} answered`),
    },
  });
  return { mock, client };
}

const tokenRequests = (mock: ReturnType<typeof createPushApiMock>) =>
  mock.state.requests.filter((request) => request.operation === 'token').length;

describe('the token request of a publish', () => {
  it('leaves before the array is checked, and the first batch as soon as both are done', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    let records = noting(log, financeRecords(COUNT), 0, 'first record read');
    records = noting(log, records, COUNT - 1, 'last record read');
    const report = await client.finance.publish(mock.appId, records);
    expect(report.recordsSent).toBe(COUNT);

    const tokenSent = log.indexOf('token request');
    expect(tokenSent).toBeGreaterThanOrEqual(0);
    expect(tokenSent).toBeLessThan(log.indexOf('first record read'));
    expect(log.indexOf('finance request')).toBeGreaterThan(
      Math.max(log.indexOf('last record read'), log.indexOf('token answered')),
    );
    expect(tokenRequests(mock)).toBe(1);
  });

  it('leaves before the first record of a stream is read', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = noting(log, financeRecords(10), 0, 'first record read');
    const report = await client.finance.publish(mock.appId, toAsync(records));
    expect(report.recordsSent).toBe(10);
    expect(log.indexOf('token request')).toBeGreaterThanOrEqual(0);
    expect(log.indexOf('token request')).toBeLessThan(log.indexOf('first record read'));
  });

  it('costs no turn of the event loop when the token is at hand: the check starts at once', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log, 0);
    await client.tokens.getToken();
    const records = noting(log, financeRecords(10), 0, 'first record read');
    setImmediate(() => log.push('a turn of the event loop'));
    await client.finance.publish(mock.appId, records);
    await new Promise((resolve) => setImmediate(resolve));
    const firstRead = log.indexOf('first record read');
    expect(firstRead).toBeGreaterThanOrEqual(0);
    expect(firstRead).toBeLessThan(log.indexOf('a turn of the event loop'));
    expect(tokenRequests(mock)).toBe(1);
  });

  it('when the check finds an invalid record, no batch is sent and the error is unchanged', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const failed = await client.finance.publish(mock.appId, withInvalidLast(COUNT)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    expect((failed as RecordValidationError).invalid.map((entry) => entry.index)).toEqual([COUNT - 1]);
    expect((failed as RecordValidationError).report).toBeUndefined();
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
    expect(log).toContain('token request');
    // The token came in time and is cached, or was dropped on its way: either way the next call
    // gets one, with at most one more request.
    await client.finance.publish(mock.appId, financeRecords(10));
    expect(tokenRequests(mock)).toBeLessThanOrEqual(2);
    expect(mock.state.records(mock.appId)).toHaveLength(10);
  });

  it('when refused, stops the publish with the TokenError as before, and is not asked for again', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock, { clientSecret: 'wrong' });
    const failed = await client.finance.publish(mock.appId, financeRecords(COUNT)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(TokenError);
    expect((failed as PublishStoppedError).report.recordsSent).toBe(0);
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
    expect(tokenRequests(mock)).toBe(1);
  });

  it('when refused to a secret provider, asks the provider no more often than a publish without it did', async () => {
    const mock = createPushApiMock();
    let asked = 0;
    const clientSecret = async () => `wrong-${++asked}`;
    const client = clientFor(mock, { clientSecret });
    // A stream that is slow to give its first record: the refusal is in before any batch asks.
    async function* slowly() {
      await new Promise((resolve) => setTimeout(resolve, 50));
      yield* financeRecords(10);
    }
    const failed = await client.finance.publish(mock.appId, slowly()).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(TokenError);
    // The refused secret, then the provider's next value (a rotation), then nothing more.
    expect(asked).toBe(2);
    expect(tokenRequests(mock)).toBe(2);
  });

  it('an abort while the token request leaves stops the publish before any record is read', async () => {
    const log: string[] = [];
    const { mock, client } = loggingClient(log);
    const records = noting(log, financeRecords(10), 0, 'first record read');
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const failed = await client.finance
      .publish(mock.appId, records, { signal: controller.signal })
      .catch((error: unknown) => error);
    // The call had begun: a stop like any other abort, with its report.
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect((failed as PublishStoppedError).report).toMatchObject({
      recordsRead: 0,
      recordsSent: 0,
      recordsNotRead: 10,
    });
    expect(log).not.toContain('first record read');
    expect(mock.state.requests.filter((request) => request.operation === 'finance')).toHaveLength(0);
  });

  it('an abort in the turn the token request leaves: a stopped run over 127.0.0.1, an array counted not read', async () => {
    const { service } = await heldTokenEndpoint();
    const client = service.client({ timeoutMs: 60_000 });
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const failed = await client.finance
      .publish('app-1', financeRecords(25), { signal: controller.signal, batchSize: 10 })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PublishStoppedError);
    const { report, cause } = failed as PublishStoppedError;
    expect(cause).toBeInstanceOf(AbortError);
    expect(report).toMatchObject({ recordsRead: 0, recordsSent: 0, recordsFailed: 0, recordsUnknown: 0 });
    expect(report.recordsNotRead).toBe(25);
    expect(report.batches).toEqual([]);
    expect(service.on('finance')).toHaveLength(0);
  });

  it('an abort in the turn the token request leaves: a generator input is closed, nothing counted', async () => {
    const { service } = await heldTokenEndpoint();
    const client = service.client({ timeoutMs: 60_000 });
    let closed = false;
    function* records() {
      try {
        yield* financeRecords(25);
      } finally {
        closed = true;
      }
    }
    const input = records();
    // Started, so that its return() runs the finally (a generator never started has none to run).
    const first = input.next().value as FinanceRecordInput;
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const failed = await client.finance
      .publish('app-1', input, { signal: controller.signal })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect((failed as PublishStoppedError).report).toMatchObject({ recordsRead: 0, recordsNotRead: 0 });
    expect(first.transactionNumber).toBe('tx-0');
    expect(closed).toBe(true);
  });

  it('is dropped when the publish sends nothing and nobody else waits for it: nothing keeps the process alive', async () => {
    const { service, closed } = await heldTokenEndpoint();
    const { ended, hooks, refreshes } = tokenAttempts();
    const client = service.client({ timeoutMs: 60_000, hooks });
    const failed = await client.finance.publish('app-1', withInvalidLast(COUNT)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    // Aborted at once, not at the end of its 60 s timeout; a request that had reached the
    // endpoint is hung up on. Given up on purpose, it is no refresh failure to report.
    expect(await settledWithin(ended, 3_000)).toBe('AbortError');
    if (service.on('token').length > 0) expect(await hungUpWithin(closed, 3_000)).toBe('hung up');
    expect(service.on('finance')).toHaveLength(0);
    expect(refreshes).toEqual([]);
  });

  it('is dropped when the caller aborts while it is on its way', async () => {
    const { service, closed } = await heldTokenEndpoint();
    const { ended, hooks } = tokenAttempts();
    const client = service.client({ timeoutMs: 60_000, hooks });
    const controller = new AbortController();
    async function* late() {
      await new Promise((resolve) => setTimeout(resolve, 100));
      yield* financeRecords(10);
    }
    setTimeout(() => controller.abort(), 30);
    const failed = await client.finance
      .publish('app-1', late(), { signal: controller.signal })
      .catch((error: unknown) => error);
    // A stopped run, as any abort once reading has begun: its cause is the AbortError.
    expect(failed).toBeInstanceOf(PublishStoppedError);
    expect((failed as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect(await settledWithin(ended, 3_000)).toBe('AbortError');
    if (service.on('token').length > 0) expect(await hungUpWithin(closed, 3_000)).toBe('hung up');
  });

  it('shared by two publishes that both send nothing, is dropped once both are over', async () => {
    const { service } = await heldTokenEndpoint();
    const { ended, hooks } = tokenAttempts();
    const client = service.client({ timeoutMs: 60_000, hooks });
    const [first, second] = await Promise.all([
      client.finance.publish('app-1', withInvalidLast(COUNT)).catch((error: unknown) => error),
      client.finance.publish('app-1', withInvalidLast(COUNT)).catch((error: unknown) => error),
    ]);
    expect(first).toBeInstanceOf(RecordValidationError);
    expect(second).toBeInstanceOf(RecordValidationError);
    expect(await settledWithin(ended, 3_000)).toBe('AbortError');
    expect(service.on('token').length).toBeLessThanOrEqual(1);
  });

  it('a failure that may pass is not kept: the batches ask again, with their own retries', async () => {
    const mock = createPushApiMock();
    // The early request meets a 503 (no retry: maxRetries 0); the batch's own ask gets a token.
    mock.faults.add({ match: { operation: 'token' }, status: 503, times: 1 });
    const client = clientFor(mock, { maxRetries: 0 });
    async function* late() {
      await new Promise((resolve) => setTimeout(resolve, 50));
      yield* financeRecords(10);
    }
    const report = await client.finance.publish(mock.appId, late());
    expect(report.recordsSent).toBe(10);
    expect(mock.state.requests.filter((request) => request.operation === 'token').map((r) => r.status)).toEqual([
      503, 200,
    ]);
  });

  it('goes on when another caller waits for the same token, which then gets it', async () => {
    const { service, closed, answer } = await heldTokenEndpoint();
    const client = service.client({ timeoutMs: 60_000 });
    const waiting = client.tokens.getToken();
    const failed = await client.finance.publish('app-1', withInvalidLast(10)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    expect(await hungUpWithin(closed, 200)).toBe('still open');
    answer();
    expect((await waiting).accessToken).toBe(HOSTILE_TOKEN);
    expect(service.on('token')).toHaveLength(1);
  });

  it('a refusal it met is stale once a token came by other means: the batches use that token', async () => {
    const mock = createPushApiMock();
    mock.faults.add({ match: { operation: 'token' }, status: 400, body: { error: 'invalid_request' }, times: 1 });
    const client = clientFor(mock, { maxRetries: 0 });
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    async function* gated() {
      await gate;
      yield* financeRecords(10);
    }
    const publishing = client.finance.publish(mock.appId, gated());
    await vi.waitFor(() => expect(tokenRequests(mock)).toBe(1));
    // Another caller of the same client gets a token while the publish is still reading.
    await client.tokens.getToken();
    open();
    expect((await publishing).recordsSent).toBe(10);
    expect(mock.state.requests.filter((request) => request.operation === 'token').map((r) => r.status)).toEqual([
      400, 200,
    ]);
  });

  it('given up, it leaves the mark of a rejected token for the next refresh', async () => {
    const mock = createPushApiMock();
    const reasons: string[] = [];
    const client = clientFor(mock, {
      hooks: { tokenRefresh: (event) => reasons.push(`${event.reason}:${event.error ?? 'ok'}`) },
    });
    await client.tokens.getToken();
    client.tokens.invalidate();
    // The early request replacing the rejected token is slow, and given up when the check fails.
    mock.faults.add({ match: { operation: 'token' }, delayMs: 200, times: 1 });
    const failed = await client.finance.publish(mock.appId, withInvalidLast(10)).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(RecordValidationError);
    await client.tokens.getToken();
    expect(reasons).toEqual(['initial:ok', 'rejected:ok']);
  });

  it('is not made for an empty array, which sends nothing', async () => {
    const mock = createPushApiMock();
    const report = await clientFor(mock).finance.publish(mock.appId, []);
    expect(report.recordsSent).toBe(0);
    expect(mock.state.requests).toHaveLength(0);
  });
});
