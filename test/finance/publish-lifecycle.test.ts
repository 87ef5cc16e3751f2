import type { FinanceRecordInput, PublishReport, UploadReport } from 'push-api-client';
import { AbortError, NotFoundError, PublishStoppedError, PushError, RecordValidationError } from 'push-api-client';
import { type RunningEmulator, startEmulator } from 'push-api-client/testing';
import { createPushApiMock } from 'push-api-client/testing/msw';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectAccounted, financeStatuses } from '../support/accounting.js';
import { clientFor } from '../support/clients.js';
import { financeRecord, financeRecords } from '../support/records.js';

/** An async generator of `count` records that says whether its `finally` ran (the caller's cursor was closed). */
function closableInput(count: number) {
  const state = { closed: false, yielded: 0 };
  async function* records(): AsyncGenerator<FinanceRecordInput> {
    try {
      for (let i = 0; i < count; i++) {
        state.yielded++;
        yield financeRecord(i);
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, records: records() };
}

/** An async iterable whose `next()` never settles, like a cursor on a source that went quiet. */
function neverYields() {
  const state = { returnCalls: 0 };
  const iterable: AsyncIterable<FinanceRecordInput> = {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<FinanceRecordInput>>(() => {}),
      return: async () => {
        state.returnCalls++;
        return { done: true, value: undefined };
      },
    }),
  };
  return { state, iterable };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected publish to reject');
    },
    (error: unknown) => error,
  );
}

describe('publish closes the caller’s input', () => {
  it('closes the input iterator when a 404 stops the run early', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const input = closableInput(1000);
    const error = await rejection(
      client.finance.publish('no-such-app', input.records, { batchSize: 10, concurrency: 1 }),
    );
    expect(error).toBeInstanceOf(PublishStoppedError);
    const { cause } = error as PublishStoppedError;
    expect(cause).toBeInstanceOf(NotFoundError);
    expect((error as PublishStoppedError).report).toMatchObject({ stoppedBy: cause, recordsFailed: 10 });
    expect(financeStatuses(mock)).toEqual([404]);
    expect(input.state.yielded).toBeLessThan(1000);
    expect(input.state.closed).toBe(true);
  });

  it('closes a sync generator input when a 404 stops a skip-mode run early', async () => {
    const client = clientFor(createPushApiMock());
    let closed = false;
    function* records(): Generator<FinanceRecordInput> {
      try {
        for (let i = 0; i < 1000; i++) yield financeRecord(i);
      } finally {
        closed = true;
      }
    }
    const error = await rejection(
      client.finance.publish('no-such-app', records(), { batchSize: 10, concurrency: 1, onInvalid: 'skip' }),
    );
    expect((error as PublishStoppedError).cause).toBeInstanceOf(NotFoundError);
    expect(closed).toBe(true);
  });

  it('closes the input iterator when onBatchSettled throws', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const input = closableInput(1000);
    const error = await rejection(
      client.finance.publish(mock.appId, input.records, {
        batchSize: 10,
        concurrency: 1,
        onBatchSettled: () => {
          throw new Error('checkpoint store is down');
        },
      }),
    );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect(input.state.closed).toBe(true);
  });

  it('does not call return() on an input that was read to the end', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    let returnCalls = 0;
    const records = financeRecords(5);
    const iterable: Iterable<FinanceRecordInput> = {
      [Symbol.iterator]: () => {
        const inner = records[Symbol.iterator]();
        return {
          next: () => inner.next(),
          return: () => {
            returnCalls++;
            return { done: true, value: undefined };
          },
        };
      },
    };
    const report = await client.finance.publish(mock.appId, iterable, { onInvalid: 'skip' });
    expect(report.recordsSent).toBe(5);
    expect(returnCalls).toBe(0);
  });
});

describe('publish abort', () => {
  let server: RunningEmulator;
  beforeEach(async () => {
    server = await startEmulator();
  });
  afterEach(async () => {
    await server.close();
  });

  it('closes the input iterator when the signal aborts the run', async () => {
    const client = clientFor(server);
    await client.tokens.getToken();
    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, delayMs: 300 });
    const input = closableInput(1000);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await rejection(
      client.finance.publish(server.mock.appId, input.records, {
        batchSize: 10,
        concurrency: 2,
        signal: controller.signal,
      }),
    );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    expect(input.state.closed).toBe(true);
  });

  it('settles promptly with PublishStoppedError (cause: AbortError) while the input never yields, and closes it', async () => {
    const client = clientFor(server);
    const input = neverYields();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const error = await rejection(
      client.finance.publish(server.mock.appId, input.iterable, { signal: controller.signal }),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    const { report } = error as PublishStoppedError;
    expect(report.recordsRead).toBe(0);
    expectAccounted(report, 0);
    expect(input.state.returnCalls).toBe(1);
    expect(financeStatuses(server.mock)).toEqual([]);
  });

  it('settles promptly when an async generator input is stuck in an await', async () => {
    const client = clientFor(server);
    async function* stuck(): AsyncGenerator<FinanceRecordInput> {
      yield financeRecord(0);
      await new Promise(() => {});
    }
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const error = await rejection(
      client.finance.publish(server.mock.appId, stuck(), { batchSize: 10, signal: controller.signal }),
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    // The record read into the unfinished batch is reported, not lost: read, never sent.
    const { report } = error as PublishStoppedError;
    expect(report.batches).toEqual([]);
    expect(report.recordsNotRead).toBe(1);
    expectAccounted(report, 1);
  });

  it('counts the array records it never sent as not read when aborted', async () => {
    const client = clientFor(server);
    await client.tokens.getToken();
    // The first two batches are answered at once; later ones are held, so the abort that follows
    // the second answer finds them in flight however slow the machine is.
    server.mock.faults.add({ match: { operation: 'finance' }, times: 2, delayMs: 1 });
    server.mock.faults.add({ match: { operation: 'finance' }, times: Number.POSITIVE_INFINITY, delayMs: 2_000 });
    const controller = new AbortController();
    let sent = 0;
    const error = await rejection(
      client.finance.publish(server.mock.appId, financeRecords(100), {
        batchSize: 10,
        concurrency: 2,
        onInvalid: 'skip',
        signal: controller.signal,
        onBatchSettled: (batch) => {
          if (batch.status === 'sent' && ++sent === 2) setTimeout(() => controller.abort(), 300);
        },
      }),
    );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBeInstanceOf(AbortError);
    const { report } = error as PublishStoppedError;
    expect(report.recordsSent).toBe(20);
    expect(report.recordsNotRead).toBeGreaterThan(0);
    expect(report.recordsFailed).toBe(0);
    expect(report.batches.every((batch) => batch.status !== 'failed')).toBe(true);
    expectAccounted(report, 100);
  });
});

describe('publish interrupted by the input or a callback', () => {
  it('rejects with PublishStoppedError carrying the report and the cause when the input throws', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const failure = new Error('database connection lost');
    async function* records(): AsyncGenerator<FinanceRecordInput> {
      for (let i = 0; i < 25; i++) yield financeRecord(i);
      throw failure;
    }
    const error = await rejection(client.finance.publish(mock.appId, records(), { batchSize: 10, concurrency: 1 }));
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect(error).toBeInstanceOf(PushError);
    expect((error as PublishStoppedError).cause).toBe(failure);
    expect((error as Error).message).toContain('database connection lost');
    const { report } = error as PublishStoppedError;
    expect(report.recordsSent).toBe(20);
    expect(report.batches.map((b) => b.status)).toEqual(['sent', 'sent']);
    expect(report.recordsNotRead).toBe(5);
    expectAccounted(report, 25);
    expect(mock.state.recordCount(mock.appId)).toBe(20);
  });

  it('rejects with PublishStoppedError, after in-flight batches settle, when onBatchSettled throws', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    mock.faults.add({ match: { operation: 'finance' }, times: 1, delayMs: 100 });
    const failure = new Error('checkpoint store is down');
    let calls = 0;
    const error = await rejection(
      client.finance.publish(mock.appId, financeRecords(100), {
        batchSize: 10,
        concurrency: 2,
        onBatchSettled: () => {
          calls++;
          if (calls === 1) throw failure;
        },
      }),
    );
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBe(failure);
    const { report } = error as PublishStoppedError;
    // The slow first batch was in flight when the second settled and threw: it finished and is reported.
    expect(report.batches[0]?.status).toBe('sent');
    expect(report.recordsSent).toBe(mock.state.recordCount(mock.appId));
    expectAccounted(report, 100);
  });

  it('rejects with PublishStoppedError when a sync input throws during the up-front validation', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    const failure = new Error('file truncated');
    function* records(): Generator<FinanceRecordInput> {
      yield financeRecord(0);
      throw failure;
    }
    const error = await rejection(client.finance.publish(mock.appId, records()));
    expect(error).toBeInstanceOf(PublishStoppedError);
    expect((error as PublishStoppedError).cause).toBe(failure);
    expect((error as PublishStoppedError).report.recordsSent).toBe(0);
    expect(financeStatuses(mock)).toEqual([]);
  });

  it('logs a throwing onProgress as a warning and goes on publishing', async () => {
    const { createPushApiMock } = await import('push-api-client/testing/msw');
    const mock = createPushApiMock();
    const warnings: { message: string; fields: unknown }[] = [];
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (message: string, fields?: unknown) => warnings.push({ message, fields }),
      error: () => {},
    };
    const client = clientFor(mock, { logger });
    const report = await client.finance.publish(mock.appId, financeRecords(30), {
      batchSize: 10,
      concurrency: 1,
      onProgress: () => {
        throw new Error('progress bar broke');
      },
    });
    expect(report.recordsSent).toBe(30);
    const progressWarnings = warnings.filter((w) => w.message.includes('onProgress'));
    expect(progressWarnings).toHaveLength(3);
    expect(progressWarnings[0]?.fields).toEqual({ error: 'progress bar broke' });
  });
});

describe('publish errors are typed', () => {
  it('exports the finance errors from the package root, as members of the PushError family', async () => {
    const root = await import('../../src/index.js');
    const report = { recordsSent: 0 } as PublishReport;
    const stopped = new root.PublishStoppedError(report, new root.AbortError('aborted'));
    expect(stopped).toBeInstanceOf(root.PushError);
    expect(stopped.report).toBe(report);
    expect(stopped.cause).toBeInstanceOf(root.AbortError);
    expect(new root.UploadStoppedError({ filesUploaded: 0 } as UploadReport, new Error('x'))).toBeInstanceOf(
      root.PushError,
    );
    expect(new root.UnexpectedResponseError(200, '', {}, 'no success', false)).toBeInstanceOf(root.PushApiError);
  });

  it('gives a RecordValidationError whose report is typed as a PublishReport', async () => {
    const mock = createPushApiMock();
    const client = clientFor(mock);
    async function* records(): AsyncGenerator<FinanceRecordInput> {
      yield financeRecord(0);
      yield financeRecord(1, { currency: 'euro' });
    }
    const error = await rejection(client.finance.publish(mock.appId, records()));
    expect(error).toBeInstanceOf(RecordValidationError);
    // The default type argument is PublishReport: no cast to read the report's fields.
    const typed: RecordValidationError = error as RecordValidationError;
    const report: PublishReport | undefined = typed.report;
    expect(report?.recordsRead).toBe(2);
  });
});
