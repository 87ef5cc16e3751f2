import type { InvalidRecord, PushError } from '../errors.js';
import type { FinanceRecord } from './schema.js';

/** Finance publisher defaults, in one place (the README's option table mirrors them). */
export const FINANCE_DEFAULTS = {
  /** SPEC.md, Limits: at most 1000 records per finance request. */
  maxBatchSize: 1000,
  batchSize: 1000,
  /** 5 MiB: gateways in front of APIs commonly cap bodies at 10 MB, so this leaves headroom. */
  maxBatchBytes: 5 * 1024 * 1024,
  concurrency: 4,
  onInvalid: 'throw',
  adaptive: true,
} as const;

/** What happened to one batch: `unknown` means the server may or may not have stored it. */
export type BatchStatus = 'sent' | 'failed' | 'unknown';

/** One batch in the report. `firstRecord`/`lastRecord` are zero-based input indexes. */
export interface BatchReport {
  /** Zero-based position of the batch in the run. */
  index: number;
  firstRecord: number;
  lastRecord: number;
  recordCount: number;
  status: BatchStatus;
  /** Why the batch is `failed` or `unknown`. */
  error?: PushError;
}

/** A settled batch as given to `onBatchSettled`: the report entry plus its records, for checkpoints and rejects. */
export interface SettledBatch extends BatchReport {
  /** The records in wire form, as sent (or as they would have been sent). */
  records: FinanceRecord[];
  /** Input index of each record, in the same order (not contiguous when invalid records were skipped). */
  indexes: number[];
}

/** Running counts, given to `onProgress` each time a batch settles. */
export interface PublishProgress {
  /** Records taken from the input so far (valid or not). */
  recordsRead: number;
  recordsSent: number;
  recordsInvalid: number;
  recordsFailed: number;
  recordsUnknown: number;
  batchesSent: number;
  batchesFailed: number;
  batchesUnknown: number;
}

/**
 * The outcome of `publish`. Every record read is counted in exactly one of `recordsSent`,
 * `recordsInvalid`, `recordsFailed` and `recordsUnknown`.
 */
export interface PublishReport extends PublishProgress {
  /** Each invalid record's input index and issues, in input order. */
  invalid: InvalidRecord[];
  /** Every batch, in input order. */
  batches: BatchReport[];
  durationMs: number;
  /**
   * Set when publishing stopped before the end of the input because of an error every further
   * batch would meet too (401, 403, 404, a token or configuration error). Records after the stop
   * were not read and are not counted.
   */
  stoppedBy?: PushError;
}

export interface PublishOptions {
  /** Most records per request; at most 1000 (the spec's limit). @default 1000 */
  batchSize?: number;
  /** Most UTF-8 bytes per request body, `{"records":[...]}` included. @default 5242880 (5 MiB) */
  maxBatchBytes?: number;
  /** Most requests in flight. @default 4 */
  concurrency?: number;
  /**
   * `throw`: nothing invalid is sent. Arrays and sync iterables are validated in full before the
   * first request and the error lists every bad record; async iterables stop at the first bad
   * record and the error carries the report of what was already sent.
   * `skip`: valid records are sent; invalid ones are listed in the report.
   * @default 'throw'
   */
  onInvalid?: 'throw' | 'skip';
  /** Called with running counts each time a batch settles. */
  onProgress?: (progress: PublishProgress) => void;
  /**
   * Called once per settled batch, in completion order, with its records and their input indexes.
   * A returned promise is awaited before that worker takes the next batch. If it throws,
   * publishing stops and `publish` rejects with that error.
   */
  onBatchSettled?: (batch: SettledBatch) => void | Promise<void>;
  /** Stops reading input and aborts requests in flight; `publish` rejects with `PublishAbortedError`. */
  signal?: AbortSignal;
  /**
   * Adapt the in-flight window to the service's rate limit: halve it on 429 and pause until the
   * `Retry-After` deadline, then grow it back. `false` keeps a fixed `concurrency`.
   * @default true
   */
  adaptive?: boolean;
}

/** Options of `publishBatch`. */
export interface PublishBatchOptions {
  signal?: AbortSignal;
}
