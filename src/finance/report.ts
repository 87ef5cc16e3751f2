/**
 * What happened to each batch and to the run: how an exchange settles a batch (`batchOutcome`:
 * sent, failed or outcome unknown) and the report built from those outcomes (`ReportBuilder`).
 */
import type { InvalidRecord, RecordIssue } from '../errors.js';
import { AbortError, PushError, requestIdFrom, UnexpectedResponseError } from '../errors.js';
import { requestIdOf } from '../http/hooks.js';
import { answerText, MAX_ERROR_BODY_BYTES } from '../http/response-body.js';
import { classifyFailure } from '../http/retry.js';
import type { Exchange } from '../http/types.js';
import { parseJsonBounded } from '../internal/json.js';
import type { BatchReport, BatchStatus, PublishProgress, PublishReport } from './types.js';

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
export interface BatchOutcome {
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
 *   aborted before any attempt carried it is not settled at all (run.ts): it was not sent.
 * An `unknown` that only an earlier attempt explains reports that attempt's error.
 */
export function batchOutcome(result: Exchange): BatchOutcome {
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
export async function expectSuccess(response: Response): Promise<void> {
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
