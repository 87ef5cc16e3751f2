import type { InvalidRecord, PushError } from '../errors.js';
import type { RequestOptions } from '../http/public-types.js';
import type { RateBudget } from './rate-budget.js';
import type { FinanceRecord } from './schema.js';

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
  /**
   * Why the batch is `failed` or `unknown`: the last attempt's error, or, when an earlier attempt
   * was ambiguous and re-sent (`retryAmbiguous: true`), that ambiguous attempt's error: the batch
   * is then `unknown` however the re-sends ended, since the server may hold it.
   */
  error?: PushError;
  /**
   * `true` on an `unknown` batch whose ambiguous attempt was re-sent (`retryAmbiguous: true`) and
   * whose re-send was answered `{"success": true}`: the service holds its records at least once,
   * maybe twice. Do not send it again; remove duplicates downstream if they matter. Absent on every
   * other batch, including an `unknown` one that may not be stored at all.
   * @default undefined
   */
  storedAtLeastOnce?: true;
  /**
   * The service's request id (`x-request-id`) of the attempt that settled the batch: its
   * acceptance, or the error answer it failed with. Absent when that attempt got no answer (a
   * connection failure, a timeout) or the batch was never sent. Quote it to the service's support.
   * @default undefined
   */
  requestId?: string;
}

/** A batch about to be sent, as given to `onBatchSending`. */
export interface SendingBatch {
  /** The batch's index, as in the report's `batches` and in `onBatchSettled`. */
  index: number;
  recordCount: number;
  /** Input index of each record, in the order sent (not contiguous when invalid records were skipped). */
  indexes: number[];
}

/** A settled batch as given to `onBatchSettled`: the report entry plus its records, for checkpoints and rejects. */
export interface SettledBatch extends BatchReport {
  /**
   * The records in wire form, as sent (or as they would have been sent): parsed from the request
   * body when first read, so that a batch in flight holds no record objects. An optional field
   * that was `undefined` is absent, as on the wire.
   */
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
 * `recordsInvalid`, `recordsFailed`, `recordsUnknown` and `recordsNotRead`; for an array input that
 * is every input record. A run that ended normally has `recordsNotRead: 0`. For other iterables,
 * whose length is unknown, records the run never read are not counted.
 */
export interface PublishReport extends PublishProgress {
  /**
   * Records the run stopped before sending (a stop, an abort, a thrown callback): read ahead into a
   * batch that was never sent, or, for an array input, never read at all. No request carried them,
   * so they are safe to send again; they have no `batches` entry and are not in `recordsFailed`.
   */
  recordsNotRead: number;
  /** Each invalid record's input index and issues, in input order. */
  invalid: InvalidRecord[];
  /** Every batch a request was made for, in input order. */
  batches: BatchReport[];
  durationMs: number;
  /**
   * Set when publishing stopped before the end of the input because of an error every further
   * batch would meet too: a connection that cannot be made (DNS, TLS, nothing listening), a refused
   * token, a 401, 403 or 404, a configuration error, a 429 or a 503 (after its retries) once
   * nothing was accepted for `rateLimitDeadlineMs`. `publish` then rejects with a
   * `PublishStoppedError` whose `report` is this report and whose `cause` is this error, unless your
   * code also threw while the run wound down, or you aborted (the thrown error, then the abort, come
   * first). Records after the stop are counted in `recordsNotRead` (for an iterable that is not an
   * array, only those already read).
   */
  stoppedBy?: PushError;
}

/** Options of {@link FinancePublisher.publish}: batching limits, concurrency, invalid records, callbacks. */
export interface PublishOptions extends RequestOptions {
  /** Most records per request; at most 1000 (the spec's limit). @default 1000 */
  batchSize?: number | undefined;
  /** Most UTF-8 bytes per request body, `{"records":[...]}` included. @default 5242880 (5 MiB) */
  maxBatchBytes?: number | undefined;
  /**
   * The most requests in flight (for an array, at most one per record). The window starts at 8 (or
   * at that bound, when lower; or where this client's last publish, within 10 minutes, left it,
   * when higher), grows while round trips stay near their least value, and shrinks when they
   * inflate (the service is queueing) or on a 429 or 503; see `adaptive`.
   * @default 64
   */
  concurrency?: number | undefined;
  /**
   * `throw`: nothing invalid is sent. Arrays and sync iterables are validated in full before the
   * first request and the `RecordValidationError` lists every bad record; async iterables stop at
   * the first bad record and the error's `report` (a `PublishReport`) says what was already sent.
   * Memory: a sync iterable that is not an array can be read only once, so with `throw` all its
   * records are held (validated and serialized) until they are sent; stream large inputs as an
   * async iterable, or use `skip`, to keep memory bounded. An array is checked in a first pass that
   * keeps nothing but the invalid entries, then read again to send.
   * `skip`: valid records are sent; invalid ones are listed in the report.
   * @default 'throw'
   */
  onInvalid?: 'throw' | 'skip' | undefined;
  /**
   * Called with running counts each time a batch settles. If it throws (or, async, rejects), the
   * error is logged as a warning (`logger.warn`) and publishing goes on: a broken progress bar must
   * not stop a run.
   * @default undefined (no progress calls)
   */
  onProgress?: ((progress: PublishProgress) => void) | undefined;
  /**
   * Called once per settled batch, in completion order, with its records and their input indexes.
   * A returned promise is awaited before that worker takes the next batch. If it throws (or
   * rejects), reading stops, batches in flight settle, and `publish` rejects with
   * `PublishStoppedError` (its `report` says what was sent; its `cause` is the thrown error).
   * @default undefined (no calls)
   */
  onBatchSettled?: ((batch: SettledBatch) => void | Promise<void>) | undefined;
  /**
   * Called once per batch right before its first request is sent, after it got its turn under
   * `concurrency` and the rate budget and once its bearer token is at hand (a batch waiting for a
   * token is not in flight); a returned promise is awaited before the request. Between
   * this call and `onBatchSettled` the batch is in flight, so a process that records these calls
   * durably (a checkpoint) knows, after a crash, exactly which records may have reached the
   * service: never more than `concurrency` batches (the window's bound). If it throws (or rejects), the batch is not
   * sent (it counts in `recordsNotRead`), reading stops, batches in flight settle, and `publish`
   * rejects with `PublishStoppedError`. A batch whose run is aborted or stopped while this
   * callback runs is not sent either, and, like that one, gets no `onBatchSettled` call.
   * @default undefined (no calls)
   */
  onBatchSending?: ((batch: SendingBatch) => void | Promise<void>) | undefined;
  /**
   * Stops reading input (even a read that is waiting for the input to yield), aborts requests in
   * flight, closes the input, and rejects with `PublishStoppedError`, which carries the report
   * and, as its `cause`, the `AbortError`.
   * @default undefined (runs to the end of the input)
   */
  signal?: AbortSignal | undefined;
  /**
   * Ends the run in order, as a scheduler's SIGTERM asks, without the wait of the retries: once it
   * fires, no further batch is taken from the input (a read already waiting for the input finishes
   * first) and none is sent; requests on the wire finish; a batch waiting to be sent again (after a
   * 429, a 503 or a lost connection), or waiting for its token or its turn, gives up with its last
   * answer: `failed` after a refusal, `unknown` after an answer that may have stored it, and not
   * sent when it had none. The run then ends within one request timeout, rather than after a
   * `Retry-After` of the service's choosing. `publish` rejects with `PublishStoppedError` (its
   * `cause` an `AbortError`) when records were left unread, and resolves when the whole input had
   * been read. `signal` still aborts the requests in flight.
   * @default undefined (runs to the end of the input)
   */
  stopSignal?: AbortSignal | undefined;
  /**
   * Find the in-flight window from the network, up to `concurrency`: grow it while round trips
   * stay near their least value, shrink it when they inflate, halve it on a 429 or 503. Without a
   * `rateBudget`, a 429 also pauses every request until the `Retry-After` deadline (with jitter),
   * the run keeps within the budget the last rate-limit period taught, and holds requests back at
   * random once refusals pass about a tenth of what the service accepts (client-side throttling).
   * `false`: a fixed window of `concurrency`, and each request waits out its own 429.
   * @default true
   */
  adaptive?: boolean | undefined;
  /**
   * Paces requests against the service's rate limit. Give one shared between processes (the Redis
   * recipe in `examples/redis-rate-budget.ts`) so that a fleet publishing to one app shares what
   * each process learns from 429s and `Retry-After`. `concurrency` still bounds this run's
   * requests in flight.
   * @default a new in-process adaptive window per run (see `adaptive`)
   */
  rateBudget?: RateBudget | undefined;
  /**
   * A 429 is the service asking for patience: the batch waits for `Retry-After` and goes again
   * without using up a retry, for as long as the run makes progress. It is reported `failed` with
   * the `RateLimitError` only when no batch of the run was accepted for this long, counted from
   * the run's first 429 since its last accepted batch (one deadline for the whole run), or would be
   * by the end of its next wait. A batch refused once the deadline has passed stops the run with
   * that error (see `stoppedBy`), and the records not yet sent are not read. A 503 (unavailable)
   * shares the deadline: it uses up the batch's retries and fails it, the count starts at the first
   * 429 or 503 since a batch was accepted, and a batch failing with a 503 once the deadline has
   * passed stops the run too, so that an outage holds the run for the deadline and at most one
   * batch's retries more, not for every batch in turn.
   * @default 300000 (5 minutes)
   */
  rateLimitDeadlineMs?: number | undefined;
}

/** Options of `publishBatch`. */
export interface PublishBatchOptions extends RequestOptions {
  /**
   * Most UTF-8 bytes of the request body, `{"records":[...]}` included; a larger batch is refused
   * with `ConfigurationError` before anything is sent, instead of meeting the gateway's 413.
   * @default 5242880 (5 MiB)
   */
  maxBatchBytes?: number | undefined;
  /** Aborts the request; `publishBatch` then rejects with `AbortError`. @default undefined (no abort) */
  signal?: AbortSignal | undefined;
}
