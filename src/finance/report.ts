import type { InvalidRecord, PushError, RecordIssue } from '../errors.js';
import type { BatchItem } from './batcher.js';
import type { FinanceRecord } from './schema.js';
import type { BatchReport, BatchStatus, PublishProgress, PublishReport, SettledBatch } from './types.js';

/** A batch read from the input and not yet settled. Its records are dropped once it settles. */
export interface PendingBatch {
  index: number;
  items: BatchItem<FinanceRecord>[];
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

  /** Counts a settled batch and returns what `onBatchSettled` receives. */
  settle(batch: PendingBatch, status: BatchStatus, error?: PushError): SettledBatch {
    const { items } = batch;
    const entry: BatchReport = {
      index: batch.index,
      firstRecord: items[0]?.index ?? -1,
      lastRecord: items[items.length - 1]?.index ?? -1,
      recordCount: items.length,
      status,
    };
    if (error !== undefined) entry.error = error;
    this.#batches[batch.index] = entry;
    const counts = this.#counts;
    if (status === 'sent') {
      counts.recordsSent += items.length;
      counts.batchesSent++;
    } else if (status === 'failed') {
      counts.recordsFailed += items.length;
      counts.batchesFailed++;
    } else {
      counts.recordsUnknown += items.length;
      counts.batchesUnknown++;
    }
    return {
      ...entry,
      records: items.map((item) => item.record),
      indexes: items.map((item) => item.index),
    };
  }

  /**
   * Counts the records of an array input that publishing stopped before reading, as one last
   * `failed` entry (not sent, safe to send again) covering input indexes `first` to `total - 1`.
   * Call once every batch has settled: the entry takes the next batch index.
   */
  notRead(first: number, total: number, error: PushError): void {
    const count = total - first;
    if (count <= 0) return;
    this.#batches.push({
      index: this.#batches.length,
      firstRecord: first,
      lastRecord: total - 1,
      recordCount: count,
      status: 'failed',
      error,
    });
    this.#recordsNotRead += count;
    this.#counts.recordsFailed += count;
    this.#counts.batchesFailed++;
  }

  progress(): PublishProgress {
    return { ...this.#counts };
  }

  build(): PublishReport {
    const report: PublishReport = {
      ...this.#counts,
      recordsNotRead: this.#recordsNotRead,
      invalid: this.#invalid,
      batches: this.#batches,
      durationMs: Math.round(performance.now() - this.#startedAt),
    };
    if (this.#stoppedBy !== undefined) report.stoppedBy = this.#stoppedBy;
    return report;
  }
}
