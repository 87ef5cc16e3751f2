import { appResourceUrl } from '../app-path.js';
import type { ClientContext } from '../context.js';
import { FINANCE_DEFAULTS } from '../defaults.js';
import { ConfigurationError, PublishStoppedError, RecordValidationError } from '../errors.js';
import { callSettings } from '../http/call-options.js';
import type { WithResponse } from '../http/public-types.js';
import { MAX_FINANCE_RESPONSE_BYTES } from '../http/response-body.js';
import { ResponsePromise, responseMetadataOf } from '../http/response-promise.js';
import { abortErrorFrom } from '../internal/waits.js';
import { ConcurrencyLimiter, startBytesFor } from '../run/concurrency-limiter.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { BatchSource, InputCursor } from './batch-source.js';
import { BatchAssembler, bodyBytesFor, buildBody, EMPTY_BODY_BYTES, utf8Length } from './batcher.js';
import { expectSuccess, type PendingBatch, ReportBuilder } from './report.js';
import { PublishRun } from './run.js';
import type { FinanceRecordInput } from './schema.js';
import type { PublishBatchOptions, PublishOptions, PublishReport } from './types.js';
import { prevalidate } from './validate.js';

type Settings = Required<
  Pick<PublishOptions, 'batchSize' | 'maxBatchBytes' | 'concurrency' | 'onInvalid' | 'adaptive'>
>;

/**
 * Publishes finance records (SPEC.md, endpoint 4): validate, batch by count and bytes, send, report.
 * Reached as `client.finance`. A finance request is not idempotent, so a batch whose outcome is
 * unknown (a 500 or a reset after sending) is reported as `unknown` rather than sent twice, unless
 * the client was created with `retryAmbiguous: true`; a batch re-sent that way stays `unknown`
 * (`storedAtLeastOnce` when a re-send succeeded), since the service may then hold it twice.
 */
export class FinancePublisher {
  // A private field: the context holds the caller's default headers, which may carry a gateway
  // credential, and must not show in `util.inspect` or `JSON.stringify` of `client.finance`.
  readonly #ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.#ctx = ctx;
  }

  /**
   * Publishes any number of records from an array, an iterable or an async iterable, in batches of
   * at most `batchSize` records and `maxBatchBytes` bytes, with at most `concurrency` in flight.
   * A run that gave every record a final status resolves with the report: every record is sent,
   * invalid, failed or unknown. Failed batches do not reject: check `recordsFailed` and
   * `recordsUnknown`. A stopped run rejects with a `PublishStoppedError`, whose `report` says what
   * was sent (with `recordsNotRead`: what the stop left unsent) and whose `cause` is what stopped
   * it. However it ends, the input's iterator is closed (`return()`) if it was not read to the end.
   * @throws {PublishStoppedError} the run stopped; the batches in flight settled first. `cause`,
   *   in this order: what the input or `onBatchSettled` threw; the `AbortError` of the signal; an
   *   error every further batch would meet: a refused connection (DNS, TLS, nothing listening:
   *   `ConnectionError`), a refused token (`TokenError`), or a 401, 403 or 404
   *   (`AuthenticationError`, `PermissionDeniedError`, `NotFoundError`); the `AbortError` of
   *   `stopSignal`, when it left records unread.
   * @throws {RecordValidationError<PublishReport>} `onInvalid: 'throw'` met invalid records; for an
   *   async iterable, `report` says what was already sent.
   * @throws {AbortError} the signal had fired before the call: nothing was read.
   * @throws {ConfigurationError} bad options or appId, before any request.
   *
   * @example
   * ```ts
   * // Invalid records are listed in the report instead of stopping the run.
   * try {
   *   const report = await client.finance.publish(appId, records, {
   *     onInvalid: 'skip',
   *     onProgress: (progress) => console.log(`${progress.recordsSent} sent`),
   *   });
   *   for (const { index, issues } of report.invalid) console.warn(`record ${index}:`, issues);
   *   if (report.recordsFailed + report.recordsUnknown > 0) process.exitCode = 1;
   * } catch (error) {
   *   // Stopped: a refused connection or token, a 401, 403 or 404, an abort. `report` says what was sent.
   *   if (error instanceof PublishStoppedError) console.error(error.message, error.report.recordsNotRead);
   *   throw error;
   * }
   * ```
   *
   * @example
   * Streaming from an async iterable (a database cursor, a file) keeps memory bounded:
   * ```ts
   * import type { FinanceRecordInput } from 'push-api-client';
   *
   * async function* fromExport(rows: AsyncIterable<{ id: string; cents: number; at: Date }>) {
   *   for await (const row of rows) {
   *     const record: FinanceRecordInput = {
   *       created: row.at,
   *       amount: row.cents / 100,
   *       currency: 'EUR',
   *       type: 'invoice',
   *       identifier: 'billing',
   *       vendor: 'Acme',
   *       transactionNumber: row.id,
   *     };
   *     yield record;
   *   }
   * }
   * declare const rows: AsyncIterable<{ id: string; cents: number; at: Date }>;
   * await client.finance.publish(appId, fromExport(rows), { signal });
   * ```
   */
  async publish(
    appId: string,
    records: Iterable<FinanceRecordInput> | AsyncIterable<FinanceRecordInput>,
    options: PublishOptions = {},
  ): Promise<PublishReport> {
    const url = financeUrl(this.#ctx.baseUrl, appId);
    const settings = resolvePublishOptions(options);
    let call = callSettings(options, this.#ctx.defaultHeaders);
    const { signal } = options;
    if (signal?.aborted) throw abortErrorFrom(signal);
    if (!isAsyncIterable(records) && !isIterable(records)) {
      throw new ConfigurationError('records must be an array, an iterable or an async iterable of finance records');
    }

    // The token is asked for before the input is read or checked, so that its round trip overlaps
    // that work and the first batch can leave as soon as it is ready. Nothing is asked for an empty array.
    if (!Array.isArray(records) || records.length > 0) {
      call = await this.#ctx.http.prepareBearer(call);
      if (signal?.aborted) {
        call.earlyBearer?.release();
        throw await this.#abortedBeforeReading(records, signal);
      }
    }

    const report = new ReportBuilder();
    const limit = options.rateBudget ?? new AdaptiveLimit({ max: settings.concurrency, adaptive: settings.adaptive });
    const window = new ConcurrencyLimiter({
      // An array of n records makes at most n batches: no more loops than that wait for a slot.
      max: Array.isArray(records) ? Math.max(1, Math.min(settings.concurrency, records.length)) : settings.concurrency,
      adaptive: settings.adaptive,
      operation: 'finance',
      onChange: this.#ctx.hooks.concurrency,
      resume: this.#ctx.windows.recall('finance'),
      // A batch's timeout covers sending its body, which a window too wide for the link slows down.
      answerWithinMs: call.timeoutMs ?? this.#ctx.timeoutMs,
      // The first batches go out before any answer says what the link carries.
      startBytes: startBytesFor(call.timeoutMs ?? this.#ctx.timeoutMs),
    });
    const run = new PublishRun(this.#ctx, url, report, limit, window, options, call);
    const limits = { batchSize: settings.batchSize, maxBatchBytes: settings.maxBatchBytes };
    const assembler = new BatchAssembler(limits, {
      keepIndexes: options.onBatchSettled !== undefined || options.onBatchSending !== undefined,
    });
    const batches = new BatchSource(assembler, report, {
      maxBatchBytes: settings.maxBatchBytes,
      stopAtInvalid: settings.onInvalid === 'throw',
    });

    let input: InputCursor | undefined;
    try {
      let source: AsyncGenerator<PendingBatch, void> | Generator<PendingBatch, void>;
      if (isAsyncIterable(records)) {
        input = new InputCursor(records);
        source = batches.fromInput(input, run.shouldStop, signal);
      } else if (settings.onInvalid === 'throw') {
        // Everything is checked before the first batch, so the error can list every bad record.
        // An array is read again to send; any other iterable can be read once, so it is kept.
        const rereadable = Array.isArray(records);
        let checked: Awaited<ReturnType<typeof prevalidate>>;
        try {
          checked = await prevalidate(records, settings.maxBatchBytes, !rereadable);
        } catch (error) {
          throw new PublishStoppedError(report.build(), error); // the input threw; nothing was sent
        }
        if (checked.invalid.length > 0) throw new RecordValidationError<PublishReport>(checked.invalid);
        if (rereadable) {
          input = new InputCursor(records);
          source = batches.fromInput(input, run.shouldStop, signal);
        } else {
          source = batches.fromPrepared(checked.items, run.shouldStop);
        }
      } else {
        input = new InputCursor(records);
        source = batches.fromInput(input, run.shouldStop, signal);
      }

      await run.execute(source);
      // Left in the assembler only when reading stopped early: read, never sent.
      const leftover = assembler.flush();
      if (leftover) run.dropUnsent(leftover);
      // An array's length is known, so the records it never reached are counted too.
      if (Array.isArray(records)) report.notRead(records.length - report.progress().recordsRead);
    } finally {
      this.#ctx.windows.remember('finance', window.outcome(), window.max);
      // A token request still on its way that no batch waits for (nothing was sent) is dropped.
      call.earlyBearer?.release();
      await input?.close((error) => this.#closeFailed(error));
    }

    const result = report.build();
    const { stopSignal } = options;
    // A stop the caller asked for is the outcome only when it left records unread: batches read but
    // never sent count as not read, and an array read to its last record is read to its end even
    // when the batch that record completed was the last one taken (no read saw the end after it).
    const leftUnread = result.recordsNotRead > 0 || (!Array.isArray(records) && !batches.readToEnd);
    const cause = run.stopCause() ?? (stopSignal?.aborted && leftUnread ? abortErrorFrom(stopSignal) : undefined);
    if (cause !== undefined) throw new PublishStoppedError(result, cause);
    if (batches.firstInvalid) throw new RecordValidationError<PublishReport>([batches.firstInvalid], result);
    return result;
  }

  /**
   * The stop of a run whose signal fired after the call began (while its token request left) and
   * before anything was read: a stop like any later abort, so a `PublishStoppedError` whose report
   * has nothing sent and an array's records not read, the input closed.
   */
  async #abortedBeforeReading(
    records: Iterable<FinanceRecordInput> | AsyncIterable<FinanceRecordInput>,
    signal: AbortSignal,
  ): Promise<PublishStoppedError> {
    const report = new ReportBuilder();
    if (Array.isArray(records)) report.notRead(records.length);
    await new InputCursor(records).close((error) => this.#closeFailed(error));
    return new PublishStoppedError(report.build(), abortErrorFrom(signal));
  }

  #closeFailed(error: unknown): void {
    this.#ctx.logger.warn('push-api-client closing the finance input failed', {
      error: error instanceof Error ? error.message : String(error),
    });
  }

  /**
   * Sends one request of 1 to 1000 records, validated first, whose body is at most
   * `maxBatchBytes`. Resolves when the service answered `{"success": true}`; otherwise rejects with
   * the error (no report, no batching). Use it when the caller owns batching and retries (a queue
   * consumer acknowledging one message per request); `publish` fits everything else better.
   * @throws {ConfigurationError} no records, more than 1000, or a body above `maxBatchBytes`.
   * @throws {RecordValidationError} invalid records (its `report` is undefined: nothing was sent).
   * @throws {PushError} the request failed after the retries that are safe for a non-idempotent
   *   request: a `PushApiError` subclass per status (such as `UnprocessableEntityError`), a
   *   `ConnectionError`, or an `AbortError` when `signal` fired.
   *
   * @example
   * ```ts
   * await client.finance.publishBatch(appId, records.slice(0, 1000), { signal: AbortSignal.timeout(30_000) });
   * ```
   */
  publishBatch(
    appId: string,
    records: readonly FinanceRecordInput[],
    options: PublishBatchOptions = {},
  ): ResponsePromise<{ success: true }> {
    return new ResponsePromise(this.#publishBatch(appId, records, options));
  }

  async #publishBatch(
    appId: string,
    records: readonly FinanceRecordInput[],
    options: PublishBatchOptions,
  ): Promise<WithResponse<{ success: true }>> {
    const url = financeUrl(this.#ctx.baseUrl, appId);
    const call = callSettings(options, this.#ctx.defaultHeaders);
    if (!Array.isArray(records) || records.length === 0 || records.length > FINANCE_DEFAULTS.maxBatchSize) {
      const got = Array.isArray(records) ? `${records.length} records` : 'no array';
      // publish() splits any number into batches; an empty request is one the spec has no use for.
      const next = Array.isArray(records) && records.length > 0 ? '; use publish() for more' : '';
      throw new ConfigurationError(
        `publishBatch sends one request of 1 to ${FINANCE_DEFAULTS.maxBatchSize} records (the spec's limit), got ${got}${next}`,
      );
    }
    const maxBatchBytes = options.maxBatchBytes ?? FINANCE_DEFAULTS.maxBatchBytes;
    checkMaxBatchBytes(maxBatchBytes);
    const checked = await prevalidate(records, maxBatchBytes, true);
    if (checked.invalid.length > 0) throw new RecordValidationError(checked.invalid);
    const bodyBytes = bodyBytesFor(
      checked.items.length,
      checked.items.reduce((sum, item) => sum + utf8Length(item), 0),
    );
    if (bodyBytes > maxBatchBytes) {
      throw new ConfigurationError(
        `publishBatch body would be ${bodyBytes} bytes, above maxBatchBytes (${maxBatchBytes}); send fewer records per call, or use publish(), which splits by bytes`,
      );
    }
    const body = buildBody(checked.items);
    const response = await this.#ctx.http.send({
      operation: 'finance',
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      body: () => body,
      auth: 'bearer',
      retryPolicy: 'non-idempotent',
      maxResponseBytes: MAX_FINANCE_RESPONSE_BYTES,
      call,
    });
    await expectSuccess(response);
    return { data: { success: true }, response: responseMetadataOf(response) };
  }
}

/** `{base_url}/services/push/v1/customer/apps/{appId}/finance`; the appId is checked and encoded in app-path.ts. */
export function financeUrl(baseUrl: URL, appId: string): URL {
  return appResourceUrl(baseUrl, appId, 'finance');
}

function checkMaxBatchBytes(maxBatchBytes: number): void {
  if (!Number.isSafeInteger(maxBatchBytes) || maxBatchBytes <= EMPTY_BODY_BYTES) {
    throw new ConfigurationError(
      `maxBatchBytes must be an integer above ${EMPTY_BODY_BYTES}, the size of an empty body`,
    );
  }
}

function resolvePublishOptions(options: PublishOptions): Settings {
  const settings: Settings = {
    batchSize: options.batchSize ?? FINANCE_DEFAULTS.batchSize,
    maxBatchBytes: options.maxBatchBytes ?? FINANCE_DEFAULTS.maxBatchBytes,
    concurrency: options.concurrency ?? FINANCE_DEFAULTS.concurrency,
    onInvalid: options.onInvalid ?? FINANCE_DEFAULTS.onInvalid,
    adaptive: options.adaptive ?? FINANCE_DEFAULTS.adaptive,
  };
  const max = FINANCE_DEFAULTS.maxBatchSize;
  if (!Number.isInteger(settings.batchSize) || settings.batchSize < 1 || settings.batchSize > max) {
    throw new ConfigurationError(`batchSize must be an integer from 1 to ${max} (the spec's limit per request)`);
  }
  checkMaxBatchBytes(settings.maxBatchBytes);
  if (!Number.isInteger(settings.concurrency) || settings.concurrency < 1) {
    throw new ConfigurationError('concurrency must be a positive integer');
  }
  if (settings.onInvalid !== 'throw' && settings.onInvalid !== 'skip') {
    throw new ConfigurationError("onInvalid must be 'throw' or 'skip'");
  }
  // As upload checks it: a string such as 'false' is truthy, and would keep the window adaptive.
  if (options.adaptive !== undefined && typeof options.adaptive !== 'boolean') {
    throw new ConfigurationError('adaptive must be true or false');
  }
  const deadline = options.rateLimitDeadlineMs;
  if (deadline !== undefined && !(typeof deadline === 'number' && deadline >= 0 && !Number.isNaN(deadline))) {
    throw new ConfigurationError('rateLimitDeadlineMs must be a number ≥ 0 (milliseconds)');
  }
  return settings;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof (value as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] === 'function';
}
