import type { ClientContext } from '../context.js';
import { FINANCE_DEFAULTS } from '../defaults.js';
import { AbortError, PushError } from '../errors.js';
import type { CallSettings } from '../http/call-options.js';
import { requestIdOf } from '../http/hooks.js';
import type { ReadyBearer } from '../http/http-client.js';
import { MAX_FINANCE_RESPONSE_BYTES } from '../http/response-body.js';
import { statusOf } from '../http/retry.js';
import type { Exchange, RequestPacing } from '../http/types.js';
import { ignoreRejection } from '../internal/logger.js';
import { abortErrorFrom, eitherSignal, onAbort } from '../internal/waits.js';
import type { ConcurrencyLimiter } from '../run/concurrency-limiter.js';
import { RunEngine, stopsTheRun, type WorkSource } from '../run/engine.js';
import { AdaptiveLimit } from './adaptive-limit.js';
import { GuardedBudget } from './guarded-budget.js';
import type { RateBudget } from './rate-budget.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import { asPushError, type BatchOutcome, batchOutcome, expectSuccess } from './report.js';
import type { FinanceRecord } from './schema.js';
import type { BatchReport, PublishOptions, SettledBatch } from './types.js';

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
export class PublishRun {
  readonly #engine: RunEngine;
  /**
   * When this run met its first 429 since the service last accepted one of its batches: 429
   * patience lasts while the run moves, and runs out for every batch of the run at once.
   */
  #rateLimitedSince: number | undefined;
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
    // that window wait here, their batch in hand, as they would for a slot.
    this.#window.fitToSize(batch.body.length);
    try {
      await this.#window.admit(signal);
    } catch {
      this.dropUnsent(batch); // aborted while waiting: the batch was never sent
      return;
    }
    try {
      await this.#sendAndSettle(batch);
    } finally {
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
          newConnection = !carried && this.#window.depart();
          carried = true;
          return body;
        },
        onBackPressure: ({ reason, retryAfterMs }) => this.#window.onBackPressure(reason, retryAfterMs, sentAt),
        auth: 'bearer',
        ...(bearer !== undefined && { bearer }),
        retryPolicy: 'non-idempotent',
        maxResponseBytes: MAX_FINANCE_RESPONSE_BYTES,
        call: this.#call,
        pacing: turn,
        runStopped: this.#stopped.signal,
      });
    } finally {
      if (carried) this.#window.landed();
    }
    if (result.ok) {
      this.#window.onRoundTrip({ startedAt: sentAt, endedAt: performance.now(), bytes: body.length, newConnection });
      try {
        await expectSuccess(result.response);
        this.#limit.onSuccess();
        this.#rateLimitedSince = undefined;
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
      const doomsTheRun = (!bodySent && !(error instanceof AbortError)) || stopsTheRun(error);
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
      withinDeadline: (delayMs) => {
        // Patience lasts while the run's 429s began (or it last got a batch accepted) within the deadline.
        const deadlineMs = this.#options.rateLimitDeadlineMs ?? FINANCE_DEFAULTS.rateLimitDeadlineMs;
        // The monotonic clock: a wall clock stepped by NTP mid-run must not end or stretch the patience.
        const now = performance.now();
        this.#rateLimitedSince ??= now;
        return now + delayMs < this.#rateLimitedSince + deadlineMs;
      },
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
