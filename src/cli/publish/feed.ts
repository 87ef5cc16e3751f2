import { checkFinanceRecord, type FinanceRecord } from '../../index.js';
import type { Checkpoint } from '../checkpoint.js';
import { checkRow, rowIssues } from '../normalize/check-row.js';
import { type InputSpec, readInput } from '../readers/index.js';
import { InputError, type RowRules } from '../readers/types.js';
import type { PublishCounts } from './counts.js';
import type { SettleSink } from './sink.js';

export interface FeedOptions {
  inputs: InputSpec[];
  /** How rows become records: `--map`, `--set`, the formats, `--transform`. */
  rules: RowRules;
  checkpoint: Checkpoint | undefined;
  /** False for `--dry-run`: records are validated, never handed over. */
  sending: boolean;
  /** First Ctrl-C: stop reading. */
  stopReading: AbortSignal;
  /** The request body limit, checked here on a dry run only: when sending, the SDK refuses such a record. */
  maxBatchBytes: number;
}

/** `{"records":[` and `]}`: a request body holding one record is this much larger than the record. */
const ONE_RECORD_BODY_OVERHEAD = 14;

/** Why a record is too big for any request, as the SDK says it when sending; undefined when it fits. */
function tooBigToSend(record: FinanceRecord, maxBatchBytes: number): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(record));
  if (bytes + ONE_RECORD_BODY_OVERHEAD <= maxBatchBytes) return undefined;
  return `record is ${bytes} bytes as JSON; a request body holding it alone would exceed maxBatchBytes (${maxBatchBytes})`;
}

/**
 * Yields the reader's chunks of rows until the input ends or `stop` fires, without waiting for a
 * slow read (stdin) to finish. One abort listener serves the whole read and settles whichever wait
 * is current: a listener per read cost as much as parsing a row.
 */
async function* untilStopped<T>(rows: AsyncGenerator<T>, stop: AbortSignal): AsyncGenerator<T> {
  let wake: ((value: 'stop') => void) | undefined;
  const onAbort = () => wake?.('stop');
  stop.addEventListener('abort', onAbort, { once: true });
  try {
    while (!stop.aborted) {
      const read = rows.next();
      const next = await new Promise<IteratorResult<T> | 'stop'>((resolve, reject) => {
        wake = resolve;
        read.then(resolve, reject);
      });
      wake = undefined;
      if (next === 'stop' || next.done) return;
      yield next.value;
    }
  } finally {
    stop.removeEventListener('abort', onAbort);
    // Not awaited: a pending read must not hold up the summary.
    void rows.return(undefined).catch(() => {});
  }
}

/**
 * The record feed of a run: reads every input, converts and validates each row, numbers the valid
 * records (the ordinal, the checkpoint's numbering), decides with the checkpoint whether each is
 * sent, and hands the rest over. Invalid rows go to
 * the sink at once. Rows are handed over in order, so the publisher's index of a record is simply
 * how many were handed over before it.
 */
export class RecordFeed {
  bytesRead = 0;
  /** The whole input was read. */
  complete = false;
  /** A broken input (a bad header, broken JSON structure) that stopped reading. */
  inputError: InputError | undefined;
  /** Records handed to the publisher so far. */
  handedOff = 0;
  /** Where reading stopped: the input, and how many of its rows were read. */
  #inputIndex = 0;
  #rowsInInput = 0;

  readonly #options: FeedOptions;
  readonly #sink: SettleSink;
  readonly #counts: PublishCounts;
  readonly #onProgress: () => void;

  constructor(options: FeedOptions, sink: SettleSink, counts: PublishCounts, onProgress: () => void) {
    this.#options = options;
    this.#sink = sink;
    this.#counts = counts;
    this.#onProgress = onProgress;
  }

  async *records(): AsyncGenerator<FinanceRecord> {
    const { inputs, checkpoint, stopReading } = this.#options;
    let ordinal = 0;
    try {
      for (let inputIndex = 0; inputIndex < inputs.length; inputIndex++) {
        this.#inputIndex = inputIndex;
        this.#rowsInInput = 0;
        const input = inputs[inputIndex] as InputSpec;
        const chunks = readInput(input, { rules: this.#options.rules, onBytes: (n) => (this.bytesRead += n) });
        for await (const rows of untilStopped(chunks, stopReading)) {
          for (const row of rows) {
            this.#counts.rowsRead++;
            this.#rowsInInput++;
            if (this.#counts.rowsRead % 1000 === 0) this.#onProgress();
            if (row.kind === 'filtered') {
              this.#counts.recordsFiltered++;
              continue;
            }
            if (row.kind === 'reject') {
              // What could be read of the row is checked too: every problem is reported at once.
              const check = row.record === undefined ? undefined : await checkRow(row.record, row.issues);
              const reasons = check !== undefined && !check.ok ? check.issues : row.issues;
              await this.#sink.invalid(row.file, row.line, reasons, row.record ?? row.source, row.raw);
              continue;
            }
            // The SDK's check awaited here, not through a helper: one promise per row, not three.
            const result = await checkFinanceRecord(row.record);
            if (!result.ok) {
              await this.#sink.invalid(row.file, row.line, rowIssues(row.record, result), row.record);
              continue;
            }
            if (!this.#options.sending) {
              // A dry run says what a real run would: a record no request can carry is invalid.
              const tooBig = tooBigToSend(result.record, this.#options.maxBatchBytes);
              if (tooBig !== undefined) {
                await this.#sink.invalid(row.file, row.line, [{ field: '', message: tooBig }], row.record);
                continue;
              }
            }
            this.#counts.recordsValid++;
            const current = ordinal++;
            const decision = checkpoint?.decide(current) ?? 'send';
            if (decision === 'skip-delivered') {
              this.#counts.recordsSkipped++;
              continue;
            }
            if (decision === 'skip-unknown') {
              await this.#sink.carriedUnknown(row.file, row.line, result.record as Record<string, unknown>);
              continue;
            }
            if (!this.#options.sending) continue;
            // Not reserved in the checkpoint here: the sink does it when the batch is about to be
            // sent, so that rows read ahead and never sent are sent by the next run, not unknown.
            this.#sink.handOver(this.handedOff++, current, inputIndex, row.line);
            yield result.record;
            // Ctrl-C stops reading at once, not at the end of the chunk.
            if (stopReading.aborted) return;
          }
        }
        if (stopReading.aborted) return;
      }
      this.complete = true;
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      // Stop reading, but let what was already handed over settle, so the report stays exact.
      this.inputError = error;
    }
  }

  /**
   * Rows after the point where reading stopped, counted by reading on without validating or
   * sending; undefined when stdin holds the rest (it cannot be read again).
   */
  async countUnread(): Promise<number | undefined> {
    const { inputs, rules } = this.#options;
    let unread = 0;
    for (let index = this.#inputIndex; index < inputs.length; index++) {
      const input = inputs[index] as InputSpec;
      if (input.path === '-') return undefined;
      let rows = 0;
      try {
        // Rows a transform skips would not have been sent either: they are not "not read".
        for await (const chunk of readInput(input, { rules })) {
          for (const row of chunk) if (row.kind !== 'filtered') rows++;
        }
      } catch (error) {
        if (!(error instanceof InputError)) throw error;
      }
      unread += index === this.#inputIndex ? Math.max(0, rows - this.#rowsInInput) : rows;
    }
    return unread;
  }
}
