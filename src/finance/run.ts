import type { ClientContext } from '../context.js';
import { FINANCE_DEFAULTS } from '../defaults.js';
import { AbortError, type PushError, RateLimitError } from '../errors.js';
import { type CallSettings, retryTimingOf, tokenOptionsOf } from '../http/call-options.js';
import { abortErrorFrom, delay } from '../http/delay.js';
import { redactedUrl, requestIdOf } from '../http/hooks.js';
import { requestIdFrom } from '../http/request-id.js';
import { backoffDelayMs, backoffUnder, cappedRetryAfterOf, retryTimingWith, statusOf } from '../http/retry.js';
import { GuardedBudget } from './guarded-budget.js';
import {
  asPushError,
  classifyBatchError,
  expectSuccess,
  isAmbiguousFailure,
  isBackPressure,
  stopsTheRun,
} from './outcome.js';
import type { RateBudget } from './rate-budget.js';
import type { PendingBatch, ReportBuilder } from './report.js';
import type { FinanceRecord } from './schema.js';
import type { BatchReport, BatchStatus, PublishOptions, SettledBatch } from './types.js';

type BatchSource = Iterator<PendingBatch, void, undefined> | AsyncIterator<PendingBatch, void, undefined>;

interface Outcome {
  status: BatchStatus;
  error?: PushError;
  /** An ambiguous attempt was re-sent and a re-send succeeded (see `BatchReport.storedAtLeastOnce`). */
  storedAtLeastOnce?: true;
  /** The `x-request-id` of the attempt that settled the batch. */
  requestId?: string;
}

/** Whether a worker still holds the slot it took from the rate budget (released exactly once). */
interface Slot {
  held: boolean;
}

/** Why reading stopped before the end of the input, other than an abort. */
type StopReason = { kind: 'stopped-by'; error: PushError } | { kind: 'thrown'; error: unknown };

/**
 * One publish run: `concurrency` worker loops share one batch iterator, so at most that many
 * batches are pulled from the input at once (plus the one being filled), with no queue. Each worker
 * pulls a batch, takes a slot from the rate budget, sends the batch, and settles it in the report.
 */
export class PublishRun {
  #stop: StopReason | undefined;
  /**
   * When this run met its first 429 since the service last accepted one of its batches: 429
   * patience lasts while the run moves, and runs out for every batch of the run at once.
   */
  #rateLimitedSince: number | undefined;
  /** The input is read to the end: idle workers stop. */
  #exhausted = false;
  private readonly limit: RateBudget;

  constructor(
    private readonly ctx: ClientContext,
    private readonly url: URL,
    private readonly report: ReportBuilder,
    limit: RateBudget,
    private readonly options: Pick<
      PublishOptions,
      'onProgress' | 'onBatchSending' | 'onBatchSettled' | 'signal' | 'rateLimitDeadlineMs'
    >,
    private readonly call: CallSettings = { headers: {} },
  ) {
    this.limit = new GuardedBudget(limit, (error) => this.#stopBy(error));
  }

  /** True once reading must stop: aborted, a run-stopping API error, or a callback or the input threw. */
  readonly shouldStop = (): boolean => this.#stop !== undefined || this.options.signal?.aborted === true;

  /** An error thrown by the input or `onBatchSettled`: `publish` rejects with `PublishInterruptedError` once in-flight batches settle. */
  get thrown(): { error: unknown } | undefined {
    return this.#stop?.kind === 'thrown' ? { error: this.#stop.error } : undefined;
  }

  async execute(source: BatchSource, workers: number): Promise<void> {
    await Promise.all(Array.from({ length: workers }, () => this.#worker(source)));
  }

  /** Counts a batch that was read but will not be sent (the run stopped first) as not read. */
  dropUnsent(batch: PendingBatch): void {
    this.report.notRead(batch.recordCount);
    batch.indexes = [];
    batch.body = '';
  }

  /** The error that stopped the run early (a refused connection, token, 401, 403, 404), if any. */
  get stoppedBy(): PushError | undefined {
    return this.#stop?.kind === 'stopped-by' ? this.#stop.error : undefined;
  }

  async #worker(source: BatchSource): Promise<void> {
    const { signal } = this.options;
    while (!this.shouldStop() && !this.#exhausted) {
      let batch: PendingBatch;
      try {
        const next = await source.next();
        if (next.done) {
          this.#exhausted = true;
          return;
        }
        batch = next.value;
      } catch (error) {
        // The input threw, unless the read was cut short by the abort: then the abort is the outcome.
        if (!signal?.aborted) this.#stop ??= { kind: 'thrown', error };
        return;
      }
      // The batch first, then the slot: a slot taken by a worker that then finds the input read to
      // the end would be a request of a shared budget that nobody sends. A waiting worker holds
      // one batch, so the input is still read no further ahead than `concurrency` batches.
      try {
        await this.limit.acquire(signal);
      } catch (error) {
        // Aborted while waiting for a slot, or the budget failed: the batch was never sent.
        if (!signal?.aborted) this.#stopBy(asPushError(error));
        this.dropUnsent(batch);
        return;
      }
      const slot: Slot = { held: true };
      let outcome: Outcome;
      try {
        if (this.shouldStop() || !(await this.#announce(batch))) {
          this.dropUnsent(batch);
          return;
        }
        outcome = await this.#send(batch, slot);
      } catch (error) {
        // `#send` settles every answer itself, so this is a bug. It stops the run, loudly, and the
        // batch, which may have been sent, is reported `unknown` rather than lost.
        this.#stop ??= { kind: 'thrown', error };
        outcome = { status: 'unknown', error: asPushError(error) };
      } finally {
        if (slot.held) this.limit.release();
      }
      await this.#settle(batch, outcome);
    }
  }

  /**
   * `onBatchSending`, awaited before the first request of the batch. False when it threw: the run
   * stops as for a thrown `onBatchSettled`, and the batch, never sent, is dropped.
   */
  async #announce(batch: PendingBatch): Promise<boolean> {
    const { onBatchSending } = this.options;
    if (!onBatchSending) return true;
    try {
      await onBatchSending({ index: batch.index, recordCount: batch.recordCount, indexes: [...batch.indexes] });
    } catch (error) {
      this.#stop ??= { kind: 'thrown', error };
      return false;
    }
    // The callback may have taken long enough for an abort or a stop to come in.
    return !this.shouldStop();
  }

  /**
   * Sends a batch until it settles. A 429 is the service asking for patience, not a failure: while
   * the run makes progress, the batch gives its slot back, waits for `Retry-After` (or a backoff)
   * and for the rate budget, and goes again without using up a retry. It fails with the 429 only
   * when nothing of this run was accepted for `rateLimitDeadlineMs`.
   */
  async #send(batch: PendingBatch, slot: Slot): Promise<Outcome> {
    const { signal } = this.options;
    const { body } = batch;
    // The first attempt that may have been processed and was re-sent anyway (`retryAmbiguous`):
    // from then on the service may hold the batch, whatever the re-sends answer.
    let ambiguous: PushError | undefined;
    // Whether the last attempt handed its body to fetch. An attempt that failed before that, while
    // getting its token, never sent the batch, whatever that token request's own failure says.
    // Not covered: a send answered 401 whose token refresh then fails is judged by the refresh's
    // error (a reset there reads as ambiguous), although the 401 said the batch was not stored.
    let bodySent = false;
    // Every send of this batch is one request to hooks, whose retry events include the 429 waits.
    const callId = this.ctx.http.nextCallId();
    for (let waits = 1; ; waits++) {
      bodySent = false;
      try {
        const response = await this.ctx.http.send({
          operation: 'finance',
          method: 'POST',
          url: this.url,
          headers: { ...this.call.headers, 'content-type': 'application/json' },
          ...(this.call.timeoutMs !== undefined && { timeoutMs: this.call.timeoutMs }),
          ...(this.call.maxRetries !== undefined && { maxRetries: this.call.maxRetries }),
          ...retryTimingOf(this.call),
          body: () => {
            bodySent = true;
            return body;
          },
          auth: 'bearer',
          tokenOptions: tokenOptionsOf(this.call),
          retryPolicy: 'non-idempotent',
          retryRateLimited: false,
          callId,
          onRetry: (info) => {
            bodySent = false;
            if (isAmbiguousFailure(info.error)) ambiguous ??= info.error;
            if (isBackPressure(info.error)) this.limit.onRateLimited(info.delayMs, true);
          },
          signal,
        });
        await expectSuccess(response);
        this.limit.onSuccess();
        this.#rateLimitedSince = undefined;
        // `sent` means stored once. After an ambiguous attempt the service may already have held the
        // batch when the re-send stored it again: at least once, maybe twice.
        const requestId = requestIdFrom(response.headers);
        if (ambiguous !== undefined) return { status: 'unknown', error: ambiguous, storedAtLeastOnce: true, requestId };
        return { status: 'sent', requestId };
      } catch (thrown) {
        const error = signal?.aborted && !(thrown instanceof AbortError) ? abortErrorFrom(signal) : asPushError(thrown);
        // Failing before the body was sent, other than by an abort, is failing to get a token,
        // after the token request's own retries: every further batch would meet it too.
        const tokenUnavailable = !bodySent && !(error instanceof AbortError);
        // A 429 from the token endpoint asks for the same patience as one on the batch itself.
        const rateLimited = error instanceof RateLimitError || (tokenUnavailable && statusOf(error) === 429);
        // The waits follow the client's and the call's `backoff` and `maxRetryAfterMs`, as the transport's do.
        const timing = retryTimingWith(this.ctx.retryTiming, this.call);
        const retryAfterMs = cappedRetryAfterOf(error, timing);
        if (isBackPressure(error)) this.limit.onRateLimited(retryAfterMs);
        if (rateLimited) {
          this.#rateLimitedSince ??= Date.now();
          // Patience is not counted in retries, so it cannot re-send at once forever: a
          // `Retry-After` of 0 (or an HTTP date already past) is honoured for the first wait of a
          // batch only, and after that the backoff grows as for retries.
          const delayMs =
            retryAfterMs !== undefined && (retryAfterMs > 0 || waits === 1)
              ? retryAfterMs
              : backoffDelayMs(waits - 1, backoffUnder(timing));
          if (this.#patient(delayMs, waits)) {
            this.ctx.logger.warn('push-api-client retrying', {
              operation: 'finance',
              method: 'POST',
              path: this.url.pathname,
              attempt: waits,
              status: 429,
              error: error.name,
              delayMs,
              rateLimited: true,
            });
            this.ctx.hooks.retry({
              callId,
              operation: 'finance',
              method: 'POST',
              url: redactedUrl(this.url),
              attempt: waits,
              status: 429,
              requestId: requestIdOf(error),
              error: error.name,
              delayMs,
            });
            const turn = await this.#waitForTurn(slot, delayMs);
            if (turn === 'go') continue;
            // The 429 says the service did not store it: safe to send again, unless an earlier attempt was ambiguous.
            const reason = turn === 'aborted' ? abortErrorFrom(signal) : error;
            return ambiguous ? { status: 'unknown', error: ambiguous } : { status: 'failed', error: reason };
          }
        }
        if (tokenUnavailable || stopsTheRun(error)) this.#stopBy(error);
        const status = classifyBatchError(error, bodySent, ambiguous !== undefined);
        // An `unknown` that only an earlier attempt explains reports that attempt's error.
        const reason = ambiguous !== undefined && classifyBatchError(error, bodySent) === 'failed' ? ambiguous : error;
        return { status, error: reason, requestId: requestIdOf(error) };
      }
    }
  }

  /**
   * Patience lasts while the run's 429s began (or it last got a batch accepted) within the deadline.
   * Waits of 0 (`backoff` and `maxRetryAfterMs` set to 0, as in tests) would re-send at once until
   * the deadline: then a batch is as patient as its retries allow, `maxRetries` waits (at least one).
   */
  #patient(delayMs: number, waits: number): boolean {
    if (delayMs === 0 && waits > Math.max(1, this.call.maxRetries ?? this.ctx.maxRetries)) return false;
    const deadlineMs = this.options.rateLimitDeadlineMs ?? FINANCE_DEFAULTS.rateLimitDeadlineMs;
    const now = Date.now();
    return now + delayMs < (this.#rateLimitedSince ?? now) + deadlineMs;
  }

  /** Stops the run with an error every further batch would meet (the report's `stoppedBy`). */
  #stopBy(error: PushError): void {
    if (this.#stop !== undefined) return;
    this.#stop = { kind: 'stopped-by', error };
    this.report.stop(error);
  }

  /** Gives the slot back for the wait, then takes one again: the budget decides when to re-send. */
  async #waitForTurn(slot: Slot, delayMs: number): Promise<'go' | 'aborted' | 'stopped'> {
    const { signal } = this.options;
    slot.held = false;
    this.limit.release();
    try {
      await delay(delayMs, signal);
      if (this.shouldStop()) return signal?.aborted ? 'aborted' : 'stopped';
      await this.limit.acquire(signal);
    } catch (error) {
      if (signal?.aborted) return 'aborted';
      this.#stopBy(asPushError(error)); // the budget failed
      return 'stopped';
    }
    slot.held = true;
    return 'go';
  }

  async #settle(batch: PendingBatch, outcome: Outcome): Promise<void> {
    const requestId = outcome.requestId ?? requestIdOf(outcome.error);
    const entry = this.report.settle(batch, outcome.status, outcome.error, outcome.storedAtLeastOnce, requestId);
    const { body, indexes } = batch;
    // The report keeps nothing of a batch's records once it has settled.
    batch.indexes = [];
    batch.body = '';
    const { onBatchSettled, onProgress } = this.options;
    try {
      if (onBatchSettled) await onBatchSettled(settledBatch(entry, body, indexes));
    } catch (error) {
      this.#stop ??= { kind: 'thrown', error };
    }
    if (!onProgress) return;
    try {
      onProgress(this.report.progress());
    } catch (error) {
      // A broken progress bar must not stop a run (as with uploads).
      this.ctx.logger.warn('push-api-client onProgress callback threw', {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/**
 * The batch given to `onBatchSettled`. Its `records` are parsed from the request body on first
 * read, so that no batch holds record objects while in flight (see `keepIndexes`, batch-assembler.ts);
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
