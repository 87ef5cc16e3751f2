import type { InvalidRecord, PushError, RecordIssue } from '../errors.js';
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
