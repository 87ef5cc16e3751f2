/**
 * Publishing finance records (spec, operation 4). In this order:
 * - `publish()` checks its options and puts the run's parts together (`FinancePublisher`);
 * - the run sends each batch as one exchange, paced by the rate budget (`PublishRun`);
 * - each batch's outcome (sent, failed or unknown) goes into the report (`ReportBuilder`,
 *   `batchOutcome`).
 */
import type { ClientContext } from '../context.js';
import { FINANCE_DEFAULTS } from '../defaults.js';
import {
  AbortError,
  ConfigurationError,
  type InvalidRecord,
  PublishStoppedError,
  PushError,
  type RecordIssue,
  RecordValidationError,
  requestIdFrom,
  UnexpectedResponseError,
} from '../errors.js';
import { answerText, MAX_ERROR_BODY_BYTES, MAX_FINANCE_RESPONSE_BYTES, requestIdOf } from '../http/fetch.js';
import {
  appResourceUrl,
  type CallSettings,
  callSettings,
  type ReadyBearer,
  ResponsePromise,
  responseMetadataOf,
} from '../http/http-client.js';
import type { WithResponse } from '../http/public-types.js';
import { classifyFailure, isBackPressure, statusOf } from '../http/retry.js';
import type { Exchange, RequestPacing } from '../http/types.js';
import { ignoreRejection } from '../internal/logger.js';
import { parseJsonBounded, utf8ByteLength } from '../internal/text.js';
import { abortErrorFrom, eitherSignal, onAbort } from '../internal/waits.js';
import {
  ConcurrencyLimiter,
  checkPatienceOption,
  type Departure,
  PushBackPatience,
  RunEngine,
  startBytesFor,
  stopsTheRun,
  type WorkSource,
} from '../run/engine.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { BatchSource, InputCursor, prevalidate } from './batch-source.js';
import { BatchAssembler, buildBody, EMPTY_BODY_BYTES } from './batcher.js';
import { GuardedBudget } from './guarded-budget.js';
import type { RateBudget } from './rate-budget.js';
import type { FinanceRecord, FinanceRecordInput } from './schema.js';
import type {
  BatchReport,
  BatchStatus,
  PublishBatchOptions,
  PublishOptions,
  PublishProgress,
  PublishReport,
  SettledBatch,
} from './types.js';

// ── The publisher ────────────────────────────────────────────────────────────────────────────────
// `publish()` and `publishBatch()`: options checked, then the run's parts put together.

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
    const assembler = new BatchAssembler<FinanceRecord>(limits, {
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
    const body = buildBody(checked.items.map((item) => item.record));
    const bodyBytes = utf8ByteLength(body);
    if (bodyBytes > maxBatchBytes) {
      throw new ConfigurationError(
        `publishBatch body would be ${bodyBytes} bytes, above maxBatchBytes (${maxBatchBytes}); send fewer records per call, or use publish(), which splits by bytes`,
      );
    }
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

/** `{base_url}/services/push/v1/customer/apps/{appId}/finance`; the appId is checked and encoded by appResourceUrl (http/http-client.ts). */
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
  checkPatienceOption(options.rateLimitDeadlineMs);
  return settings;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return typeof (value as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] === 'function';
}

// ── The run ──────────────────────────────────────────────────────────────────────────────────────
// Batches pulled by the engine's loops, each sent as one exchange in its turn of the budget.

const JSON_CONTENT: Readonly<Record<string, string>> = { 'content-type': 'application/json' };

/** The publish options a run reads. */
type RunOptions = Pick<
  PublishOptions,
  'onProgress' | 'onBatchSending' | 'onBatchSettled' | 'signal' | 'stopSignal' | 'rateLimitDeadlineMs'
>;

/**
 * One publish run: the run engine's loops share one batch iterator, each taking a slot of the
 * concurrency limiter's window before it pulls a batch, so at most that window of batches is
 * pulled from the input at once (plus the one being filled), with no queue. Each loop pulls a
 * batch, takes a slot from the rate budget, sends the batch, and settles it in the report; each
 * answer's round trip and each push-back feeds the window.
 */
class PublishRun {
  readonly #engine: RunEngine;
  /**
   * How long the run goes on while the service pushes back (429, 503) and accepts nothing. A wait
   * that would only end past the deadline fails its own batch, not the run: the service may recover
   * before the deadline, and other batches may be accepted meanwhile.
   */
  readonly #patience: PushBackPatience;
  readonly #limit: RateBudget;
  readonly #window: ConcurrencyLimiter;
  readonly #ctx: ClientContext;
  readonly #url: URL;
  readonly #report: ReportBuilder;
  readonly #options: RunOptions;
  readonly #call: CallSettings;
  /**
   * Fires at the run's first stop, or at the caller's `stopSignal`: a batch waiting to be sent
   * again gives up with its last answer.
   */
  readonly #stopped = new AbortController();

  constructor(
    ctx: ClientContext,
    url: URL,
    report: ReportBuilder,
    limit: RateBudget,
    window: ConcurrencyLimiter,
    options: RunOptions,
    call: CallSettings = { headers: {} },
  ) {
    this.#ctx = ctx;
    this.#url = url;
    this.#report = report;
    this.#options = options;
    this.#call = call;
    this.#window = window;
    this.#patience = new PushBackPatience(options.rateLimitDeadlineMs ?? FINANCE_DEFAULTS.rateLimitDeadlineMs);
    this.#engine = new RunEngine(
      options.signal,
      (error) => report.stop(error),
      () => this.#stopped.abort(),
    );
    // The run's own budget neither throws nor outlives an abort; a user's (Redis, say) may do both.
    this.#limit =
      limit instanceof AdaptiveLimit ? limit : new GuardedBudget(limit, (error) => this.#engine.stopBy(error));
  }

  /**
   * True once reading must stop: aborted, stopped by the caller, a run-stopping API error, or a
   * callback or the input threw.
   */
  readonly shouldStop = (): boolean => this.#engine.shouldStop();

  /** The error a stopped run rejects with, as its `cause` (the engine's one order); undefined when it was not stopped. */
  stopCause(): unknown {
    return this.#engine.stopCause(abortErrorFrom);
  }

  async execute(source: WorkSource<PendingBatch>): Promise<void> {
    const { stopSignal } = this.#options;
    const stopListening = stopSignal === undefined ? undefined : onAbort(stopSignal, () => this.#engine.halt());
    try {
      await this.#engine.run(source, this.#window, (batch) => this.#publishBatch(batch));
    } finally {
      stopListening?.();
    }
  }

  /** Counts a batch that was read but will not be sent (the run stopped first) as not read. */
  dropUnsent(batch: PendingBatch): void {
    this.#report.notRead(batch.recordCount);
    batch.indexes = [];
    batch.body = '';
  }

  async #publishBatch(batch: PendingBatch): Promise<void> {
    const { signal } = this.#options;
    // The first batch's size sets how wide the first, blind round may be; loops holding a slot past
    // that window wait here, their batch in hand, as they would for a slot. The body is measured in
    // the bytes that cross the uplink (up to three per character), only until the first answer.
    if (this.#window.fitsToSize) this.#window.fitToSize(utf8ByteLength(batch.body));
    try {
      await this.#window.admit(signal);
    } catch {
      this.dropUnsent(batch); // aborted while waiting: the batch was never sent
      return;
    }
    this.#patience.itemStarted();
    try {
      await this.#sendAndSettle(batch);
    } finally {
      this.#patience.itemSettled();
      this.#window.dismiss();
    }
  }

  async #sendAndSettle(batch: PendingBatch): Promise<void> {
    const { signal } = this.#options;
    // The batch first, then the slot: a slot taken by a worker that then finds the input read to
    // the end would be a request of a shared budget that nobody sends. A waiting worker holds
    // one batch, so the input is still read no further ahead than the window of batches.
    let taken: boolean;
    try {
      taken = await this.#takeTurn();
    } catch (error) {
      // Aborted while waiting for a slot, or the budget failed: the batch was never sent.
      if (!signal?.aborted) this.#engine.stopBy(asPushError(error));
      this.dropUnsent(batch);
      return;
    }
    if (!taken) {
      this.dropUnsent(batch); // the run stopped while it waited: never sent
      return;
    }
    const turn = this.#turn();
    let outcome: BatchOutcome | undefined;
    try {
      const token = await this.#tokenReady();
      // Stopped or aborted while it waited for its token: never announced, never sent.
      if (this.shouldStop() || !(await this.#announce(batch))) {
        this.dropUnsent(batch);
        return;
      }
      // A 429 from the token endpoint gets a rate limit's patience, which the request's lifecycle gives.
      outcome =
        !(token instanceof PushError) || statusOf(token) === 429
          ? await this.#send(batch, turn, token instanceof PushError ? undefined : token)
          : this.#unsent(token);
      if (outcome === undefined) {
        // Aborted before any request carried it (while it waited for its token): not sent.
        this.dropUnsent(batch);
        return;
      }
    } catch (error) {
      // `#send` settles every answer itself, so this is a bug. It stops the run, loudly, and the
      // batch, which may have been sent, is reported `unknown` rather than lost.
      this.#engine.interrupt(error);
      outcome = { status: 'unknown', error: asPushError(error) };
    } finally {
      turn.release();
    }
    await this.#settle(batch, outcome);
  }

  /**
   * Waits for the batch's token before the batch is announced, so that `onBatchSending` (where the
   * CLI's checkpoint reserves a batch's records) means "its request leaves now". A batch waiting
   * for a slow token endpoint, at the start or at a refresh mid-run, was sent nowhere: announced
   * earlier, a run killed meanwhile left the whole window's records unknown. The token at hand,
   * which the batch's request then leaves with (a refresh begun after the announcement must not
   * hold it back), or the failure that request would have met.
   */
  async #tokenReady(): Promise<ReadyBearer | PushError | undefined> {
    try {
      return await this.#ctx.http.bearerReady(this.#call, this.#stopped.signal);
    } catch (error) {
      return asPushError(error);
    }
  }

  /** A batch that got no token: its request never left, so it failed, and so would every batch after it. */
  #unsent(error: PushError): BatchOutcome {
    this.#engine.stopBy(error);
    return batchOutcome({ ok: false, error, bodySent: false, earlierAmbiguous: undefined });
  }

  /**
   * `onBatchSending`, awaited before the first request of the batch. False when it threw: the run
   * stops as for a thrown `onBatchSettled`, and the batch, never sent, is dropped.
   */
  async #announce(batch: PendingBatch): Promise<boolean> {
    const { onBatchSending } = this.#options;
    if (!onBatchSending) return true;
    try {
      await onBatchSending({ index: batch.index, recordCount: batch.recordCount, indexes: [...batch.indexes] });
    } catch (error) {
      this.#engine.interrupt(error);
      return false;
    }
    // The callback may have taken long enough for an abort or a stop to come in.
    return !this.shouldStop();
  }

  /**
   * Sends a batch: one request to the transport, which does every re-send. A 429 is the service
   * asking for patience, not a failure: with this run's pacing, the transport gives the batch's
   * turn back, waits for `Retry-After` (or a backoff) and for the rate budget, and goes again
   * without using up a retry. It fails with the 429 only when nothing of this run was accepted for
   * `rateLimitDeadlineMs`. Undefined when the caller aborted before any attempt carried the body
   * (it waited for its token): the batch was not sent, like one read ahead and never announced.
   */
  async #send(
    batch: PendingBatch,
    turn: RequestPacing,
    bearer: ReadyBearer | undefined,
  ): Promise<BatchOutcome | undefined> {
    const { signal } = this.#options;
    const { body } = batch;
    // When the last attempt left: its round trip, not the token request's or a retry's wait, is what feeds the window.
    let sentAt = 0;
    // Whether any attempt carried the body (the first waits for the token before it is built).
    let carried = false;
    // The body's first departure, on the wire until the batch settles.
    let departure: Departure | undefined;
    // Whether the last attempt likely opened a connection of its own (only a first attempt can).
    let newConnection = false;
    let result: Exchange;
    try {
      result = await this.#ctx.http.exchange({
        operation: 'finance',
        method: 'POST',
        url: this.#url,
        headers: JSON_CONTENT,
        body: () => {
          sentAt = performance.now();
          newConnection = false;
          if (departure === undefined) {
            departure = this.#window.depart();
            newConnection = departure.newConnection;
          }
          carried = true;
          return body;
        },
        onBackPressure: ({ reason, retryAfterMs }) => {
          // A 503's retries are bounded by `maxRetries`, each batch on its own: without the run's
          // patience, a service down for hours would meet every batch of the input in turn.
          if (reason === 'unavailable') this.#patience.pushedBack();
          this.#window.onBackPressure(reason, retryAfterMs, sentAt);
        },
        auth: 'bearer',
        ...(bearer !== undefined && { bearer }),
        retryPolicy: 'non-idempotent',
        maxResponseBytes: MAX_FINANCE_RESPONSE_BYTES,
        call: this.#call,
        pacing: turn,
        runStopped: this.#stopped.signal,
      });
    } finally {
      if (departure) this.#window.landed(departure);
    }
    if (result.ok) {
      this.#window.onRoundTrip({ startedAt: sentAt, endedAt: performance.now(), bytes: body.length, newConnection });
      try {
        await expectSuccess(result.response);
        this.#limit.onSuccess();
        this.#patience.accepted();
      } catch (error) {
        result = { ok: false, error: asPushError(error), bodySent: true, earlierAmbiguous: result.earlierAmbiguous };
      }
    }
    if (!result.ok) {
      // Not sent: aborted, or the run stopped, while it waited for its token.
      if ((signal?.aborted || result.notStarted) && !carried) return undefined;
      if (signal?.aborted && !(result.error instanceof AbortError))
        result = { ...result, error: abortErrorFrom(signal) };
      const { error, bodySent } = result;
      // Failing before the body was sent, other than by an abort, is failing to get a token,
      // after the token request's own retries: every further batch would meet it too. Not an
      // answer whose next attempt the stop cut short (a 401 waiting for its refresh): nothing
      // refused the credentials, and the stop is what ended the run.
      const doomsTheRun =
        (!bodySent && !(error instanceof AbortError)) ||
        stopsTheRun(error) ||
        (isBackPressure(error) && this.#patience.runOut);
      if (doomsTheRun && !result.nextAttemptCut) this.#engine.stopBy(error);
    }
    return batchOutcome(result);
  }

  /**
   * Waits for a turn of the rate budget: false when the run stopped first (a turn taken as it
   * stopped is given back), since a 429's pause, up to a minute of the service's choosing, must
   * not hold a stopped run. Rejects with the caller's abort, or with the budget's own failure.
   */
  async #takeTurn(): Promise<boolean> {
    const { signal } = this.#options;
    // The common case, a free slot of the run's own budget: nothing to wait for, no signal to link.
    if (this.#limit instanceof AdaptiveLimit && !signal?.aborted && this.#limit.tryAcquire()) {
      if (!this.#stopped.signal.aborted) return true;
      this.#limit.release();
      return false;
    }
    const waiting = eitherSignal(signal, this.#stopped.signal);
    try {
      await this.#limit.acquire(waiting.signal);
    } catch (error) {
      if (signal?.aborted) throw abortErrorFrom(signal);
      if (this.#stopped.signal.aborted) return false;
      throw error;
    } finally {
      waiting.release();
    }
    if (!this.#stopped.signal.aborted) return true;
    this.#limit.release();
    return false;
  }

  /**
   * The batch's turn in the rate budget, as the transport's pacing: held while the batch is sent,
   * given back for a rate limit's wait, taken again after it (the budget decides when to re-send).
   */
  #turn(): RequestPacing {
    let held = true;
    return {
      acquire: async (signal) => {
        if (this.shouldStop()) {
          if (signal?.aborted) throw abortErrorFrom(signal);
          return false;
        }
        try {
          if (!(await this.#takeTurn())) return false;
        } catch (error) {
          if (signal?.aborted) throw abortErrorFrom(signal);
          this.#engine.stopBy(asPushError(error)); // the budget failed
          return false;
        }
        held = true;
        return true;
      },
      release: () => {
        if (!held) return;
        held = false;
        this.#limit.release();
      },
      rateLimited: (retryAfterMs, willRetry) => this.#limit.onRateLimited(retryAfterMs, willRetry || undefined),
      withinDeadline: (delayMs) => this.#patience.allowsWait(delayMs),
    };
  }

  async #settle(batch: PendingBatch, outcome: BatchOutcome): Promise<void> {
    const requestId = outcome.requestId ?? requestIdOf(outcome.error);
    const entry = this.#report.settle(batch, outcome.status, outcome.error, outcome.storedAtLeastOnce, requestId);
    const { body, indexes } = batch;
    // The report keeps nothing of a batch's records once it has settled.
    batch.indexes = [];
    batch.body = '';
    const { onBatchSettled, onProgress } = this.#options;
    try {
      if (onBatchSettled) await onBatchSettled(settledBatch(entry, body, indexes));
    } catch (error) {
      this.#engine.interrupt(error);
    }
    if (!onProgress) return;
    // A broken progress bar must not stop a run (as with uploads), nor, when it is async and
    // rejects, become an unhandled rejection that ends the process.
    const threw = (error: unknown) =>
      this.#ctx.logger.warn('push-api-client onProgress callback threw', {
        error: error instanceof Error ? error.message : String(error),
      });
    try {
      ignoreRejection(onProgress(this.#report.progress()), threw);
    } catch (error) {
      threw(error);
    }
  }
}

/**
 * The batch given to `onBatchSettled`. Its `records` are parsed from the request body on first
 * read, so that no batch holds record objects while in flight (see `keepIndexes`, batcher.ts);
 * most callers only count, or look at the records of a batch that failed.
 */
function settledBatch(entry: BatchReport, body: string, indexes: number[]): SettledBatch {
  let text: string | undefined = body;
  let records: FinanceRecord[] | undefined;
  const batch = { ...entry, indexes } as SettledBatch;
  return Object.defineProperty(batch, 'records', {
    enumerable: true,
    configurable: true,
    get(): FinanceRecord[] {
      if (records === undefined) {
        records = (JSON.parse(text ?? '{"records":[]}') as { records: FinanceRecord[] }).records;
        text = undefined;
      }
      return records;
    },
    // Still a plain property to the caller, who may replace it (say, with redacted records).
    set(value: FinanceRecord[]) {
      records = value;
      text = undefined;
    },
  });
}

// ── The report ───────────────────────────────────────────────────────────────────────────────────
// What happened to each batch and to the run: the report built from the batches' outcomes
// (`ReportBuilder`), and how an exchange settles a batch (`batchOutcome`: sent, failed or outcome
// unknown).

/** A batch read from the input and not yet settled. */
export interface PendingBatch {
  index: number;
  /** Input index of the first record; -1 for an empty batch. */
  firstRecord: number;
  /** Input index of the last record; -1 for an empty batch. */
  lastRecord: number;
  recordCount: number;
  /** The request body, built once when the batch was read (every attempt sends it). */
  body: string;
  /**
   * Input index of each record, kept only for `onBatchSettled` (otherwise empty). The records
   * themselves are not kept: `onBatchSettled` parses them from `body` when asked.
   */
  indexes: number[];
}

/**
 * Accumulates the report of one publish run. Holds one small entry per batch and per invalid
 * record, never the records of a settled batch, so a stream of millions stays in bounded memory.
 */
export class ReportBuilder {
  readonly #startedAt = performance.now();
  readonly #counts: PublishProgress = {
    recordsRead: 0,
    recordsSent: 0,
    recordsInvalid: 0,
    recordsFailed: 0,
    recordsUnknown: 0,
    batchesSent: 0,
    batchesFailed: 0,
    batchesUnknown: 0,
  };
  readonly #invalid: InvalidRecord[] = [];
  /** Indexed by batch index; batches settle out of order, the report keeps input order. */
  readonly #batches: BatchReport[] = [];
  #stoppedBy: PushError | undefined;
  #recordsNotRead = 0;

  read(count = 1): void {
    this.#counts.recordsRead += count;
  }

  addInvalid(index: number, issues: RecordIssue[]): InvalidRecord {
    const entry = { index, issues };
    this.#invalid.push(entry);
    this.#counts.recordsInvalid++;
    return entry;
  }

  /** Records the first error that stops the run early (the report's `stoppedBy`). */
  stop(error: PushError): void {
    this.#stoppedBy ??= error;
  }

  /** Counts a settled batch and returns its report entry. */
  settle(
    batch: PendingBatch,
    status: BatchStatus,
    error?: PushError,
    storedAtLeastOnce?: true,
    requestId?: string,
  ): BatchReport {
    const count = batch.recordCount;
    const entry: BatchReport = {
      index: batch.index,
      firstRecord: batch.firstRecord,
      lastRecord: batch.lastRecord,
      recordCount: count,
      status,
    };
    if (error !== undefined) entry.error = error;
    if (storedAtLeastOnce) entry.storedAtLeastOnce = true;
    if (requestId !== undefined) entry.requestId = requestId;
    this.#batches[batch.index] = entry;
    const counts = this.#counts;
    if (status === 'sent') {
      counts.recordsSent += count;
      counts.batchesSent++;
    } else if (status === 'failed') {
      counts.recordsFailed += count;
      counts.batchesFailed++;
    } else {
      counts.recordsUnknown += count;
      counts.batchesUnknown++;
    }
    return entry;
  }

  /**
   * Counts records the run stopped before sending: a batch read ahead and never sent, or the
   * records of an array input that were never read (`count` of them). They are not `failed` (no
   * request carried them) and get no `batches` entry; they are safe to send again.
   */
  notRead(count: number): void {
    if (count > 0) this.#recordsNotRead += count;
  }

  progress(): PublishProgress {
    return { ...this.#counts };
  }

  build(): PublishReport {
    const report: PublishReport = {
      ...this.#counts,
      recordsNotRead: this.#recordsNotRead,
      invalid: this.#invalid,
      // Dense: a batch read and never sent (the run stopped first) has no entry, and leaves no hole.
      batches: this.#batches.filter(() => true),
      durationMs: Math.round(performance.now() - this.#startedAt),
    };
    if (this.#stoppedBy !== undefined) report.stoppedBy = this.#stoppedBy;
    return report;
  }
}

/**
 * What one failed attempt says about the records it carried: the transport's own classifier
 * (`classifyFailure`, the same one that decides retries) under the non-idempotent policy, so that
 * "re-sent because surely not processed" and "reported failed, safe to send again" never disagree.
 * - `ambiguous`: the server may have stored them (a 5xx other than 503, so 501 and 505 too, a
 *   connection lost after the request may have been written, a timeout), or a 2xx whose body does
 *   not say `success`;
 * - otherwise the server surely did not store them (a 4xx, a 429 or 503, a connection refused
 *   before anything was written, `success: false`).
 */
function isAmbiguousFailure(error: PushError): boolean {
  if (error instanceof UnexpectedResponseError) return !error.refused;
  return classifyFailure(error, 'non-idempotent') === 'ambiguous';
}

/** How a batch settled: its status, the error that explains it, and the request id of the answer. */
interface BatchOutcome {
  status: BatchStatus;
  error?: PushError;
  /** An ambiguous attempt was re-sent and a re-send succeeded (see `BatchReport.storedAtLeastOnce`). */
  storedAtLeastOnce?: true;
  /** The `x-request-id` of the attempt that settled the batch. */
  requestId?: string;
}

/**
 * The one rule from how a batch's request ended (the transport's `Exchange`, its 2xx body already
 * checked) to the batch's status:
 * - `sent`: the service answered `{"success": true}`, and no earlier attempt was ambiguous;
 * - `unknown`: an earlier attempt was ambiguous and re-sent (`retryAmbiguous`), however the
 *   re-sends ended, even `{"success": true}` (then `storedAtLeastOnce`); or the last body may have
 *   reached the service and its failure does not say it was refused (`isAmbiguousFailure`, or the
 *   caller's abort while it was out);
 * - `failed`: the last body never left (the token could not be had, the abort came during a wait
 *   after an earlier attempt, a 401 whose refresh then failed) or the service refused it. A batch
 *   aborted before any attempt carried it is not settled at all (`PublishRun`, above): it was not sent.
 * An `unknown` that only an earlier attempt explains reports that attempt's error.
 */
function batchOutcome(result: Exchange): BatchOutcome {
  if (result.ok) {
    const requestId = requestIdFrom(result.response.headers);
    const ambiguous = result.earlierAmbiguous;
    // `sent` means stored once. After an ambiguous attempt the service may already have held the
    // batch when the re-send stored it again: at least once, maybe twice.
    if (ambiguous !== undefined) return { status: 'unknown', error: ambiguous, storedAtLeastOnce: true, requestId };
    return { status: 'sent', ...(requestId !== undefined && { requestId }) };
  }
  const { error, bodySent, earlierAmbiguous } = result;
  const requestId = requestIdOf(error);
  const maybeStored = bodySent && (error instanceof AbortError || isAmbiguousFailure(error));
  const status = maybeStored || earlierAmbiguous !== undefined ? 'unknown' : 'failed';
  const reason = earlierAmbiguous !== undefined && !maybeStored ? earlierAmbiguous : error;
  return { status, error: reason, ...(requestId !== undefined && { requestId }) };
}

/** Anything thrown is reported as a PushError; foreign errors are kept as the cause. */
export function asPushError(error: unknown): PushError {
  if (error instanceof PushError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new PushError(`finance request failed: ${message}`, { cause: error });
}

/**
 * Reads a 2xx answer and checks the spec's success body, `{"success": true}`.
 * `success: false` means the service refused the batch; a body that says neither (a proxy's page,
 * an empty body) leaves the outcome unknown.
 */
async function expectSuccess(response: Response): Promise<void> {
  const text = await answerText(response);
  // Depth-bounded: the body may end up in an error that is logged or serialized.
  const parsed = parseJsonBounded(text);
  const body = parsed.ok ? parsed.value : undefined;
  const success = typeof body === 'object' && body !== null ? (body as { success?: unknown }).success : undefined;
  if (success === true) return;
  const headers = Object.fromEntries(response.headers);
  // The transport scrubbed the token from this body already; a text body is cut like any error body.
  const kept =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : text.slice(0, MAX_ERROR_BODY_BYTES);
  const message =
    success === false
      ? `${response.status} the service answered success: false`
      : `${response.status} the service answered without "success": true; the batch may or may not have been stored`;
  throw new UnexpectedResponseError(response.status, kept, headers, message, success === false);
}
