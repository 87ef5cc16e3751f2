import type { PushClient } from '../client.js';
import { PublishAbortedError } from '../errors.js';
import type { FinanceRecord } from '../finance/schema.js';
import type { SettledBatch } from '../finance/types.js';
import { checkRecord, loadRecordSchema } from '../finance/validate.js';
import type { Checkpoint } from './checkpoint.js';
import { OriginTable } from './origins.js';
import { type InputSpec, readInput } from './readers/index.js';
import { InputError } from './readers/types.js';
import type { RejectsWriter } from './rejects.js';

export interface PublishRunOptions {
  appId: string;
  inputs: InputSpec[];
  columnMap: Map<string, string>;
  batchSize: number;
  maxBatchBytes: number | undefined;
  concurrency: number | undefined;
  /** Undefined for `--dry-run`: records are validated and nothing is sent. */
  client: PushClient | undefined;
  rejects: RejectsWriter;
  checkpoint: Checkpoint | undefined;
  /** First Ctrl-C: stop reading; in-flight batches finish. */
  stopReading: AbortSignal;
  /** Second Ctrl-C: abort in-flight requests. */
  abort: AbortSignal;
  onProgress: (counts: PublishCounts, bytesRead: number) => void;
}

export interface PublishCounts {
  rowsRead: number;
  recordsValid: number;
  recordsSent: number;
  recordsInvalid: number;
  recordsFailed: number;
  recordsUnknown: number;
  /** Delivered by an earlier run with the same checkpoint, so not sent again. */
  recordsSkipped: number;
  batchesSent: number;
  batchesFailed: number;
  batchesUnknown: number;
}

export interface PublishRunResult {
  counts: PublishCounts;
  /** The whole input was read (no Ctrl-C, no fatal input error). */
  inputComplete: boolean;
  interrupted: boolean;
  /** An error that ended the run early: a broken input, or one every batch would meet (401, 403, 404). */
  fatal: Error | undefined;
  durationMs: number;
}

/**
 * Yields the reader's chunks of rows until the input ends or `stop` fires, without waiting for a
 * slow read (stdin) to finish. One abort listener serves the whole read and settles whichever wait
 * is current: a listener added and removed per read cost as much as parsing a row, and racing one
 * long-lived promise on every read would retain a reaction per read for the whole run.
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
 * Reads every input, validates each row, writes rejects, and streams the valid records to
 * `client.finance.publish`. The publisher numbers records 0, 1, 2… as it reads them; `inFlight`
 * maps those numbers back to file and line only until their batch settles, so memory stays bounded
 * by the publisher's read-ahead, not by the input size. Readers hand over a chunk of rows at a
 * time, so the only per-record `await` left is the publisher's own read.
 */
export async function runPublish(options: PublishRunOptions): Promise<PublishRunResult> {
  const started = Date.now();
  const { rejects, checkpoint } = options;
  const counts: PublishCounts = {
    rowsRead: 0,
    recordsValid: 0,
    recordsSent: 0,
    recordsInvalid: 0,
    recordsFailed: 0,
    recordsUnknown: 0,
    recordsSkipped: 0,
    batchesSent: 0,
    batchesFailed: 0,
    batchesUnknown: 0,
  };
  const inFlight = new OriginTable();
  const names = options.inputs.map((input) => input.name);
  let bytesRead = 0;
  let inputComplete = false;
  let inputError: InputError | undefined;
  let handedOffMark = 0;
  /** Records handed to the publisher so far: one past the last ordinal it was given. */
  let handedOff = 0;
  const progress = () => options.onProgress(counts, bytesRead);

  async function* records(): AsyncGenerator<FinanceRecord> {
    let ordinal = 0;
    let publisherIndex = 0;
    try {
      for (let inputIndex = 0; inputIndex < options.inputs.length; inputIndex++) {
        const input = options.inputs[inputIndex] as InputSpec;
        const chunks = readInput(input, { columnMap: options.columnMap, onBytes: (n) => (bytesRead += n) });
        for await (const rows of untilStopped(chunks, options.stopReading)) {
          for (const row of rows) {
            counts.rowsRead++;
            if (counts.rowsRead % 1000 === 0) progress();
            if (row.kind === 'reject') {
              counts.recordsInvalid++;
              await rejects.write({ kind: 'invalid', file: row.file, line: row.line, issues: row.issues });
              continue;
            }
            let result = checkRecord(row.record);
            while (result === 'needs-schema') {
              await loadRecordSchema();
              result = checkRecord(row.record);
            }
            if (!result.ok) {
              counts.recordsInvalid++;
              const issues = result.issues.map((issue) => ({ field: issue.path, message: issue.message }));
              await rejects.write({ kind: 'invalid', file: row.file, line: row.line, issues, record: row.record });
              continue;
            }
            counts.recordsValid++;
            const current = ordinal++;
            const decision = checkpoint?.decide(current) ?? 'send';
            if (decision === 'skip-delivered') {
              counts.recordsSkipped++;
              continue;
            }
            if (decision === 'skip-unknown') {
              counts.recordsUnknown++;
              const error = 'outcome unknown from an earlier run; not sent again (use --resend-unknown to send it)';
              await rejects.write({ kind: 'unknown', file: row.file, line: row.line, error, record: result.record });
              continue;
            }
            if (options.client === undefined) continue;
            if (checkpoint !== undefined && current >= handedOffMark) {
              // Written before the publisher can see these records: after a crash, every record it
              // might have sent is known, and a re-run treats the unsettled ones as unknown.
              handedOffMark = current + options.batchSize;
              checkpoint.handOffThrough(handedOffMark);
            }
            inFlight.add(publisherIndex++, current, inputIndex, row.line);
            handedOff = current + 1;
            yield result.record;
            // Ctrl-C stops reading at once, not at the end of the chunk; the rest of it was never handed over.
            if (options.stopReading.aborted) return;
          }
        }
        if (options.stopReading.aborted) return;
      }
      inputComplete = true;
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      // Stop reading, but let what was already handed over settle, so the report stays exact.
      inputError = error;
    }
  }

  async function settle(batch: SettledBatch): Promise<void> {
    const ordinals: number[] = [];
    const error = batch.error?.message ?? (batch.status === 'unknown' ? 'outcome unknown' : 'not sent');
    for (let i = 0; i < batch.indexes.length; i++) {
      const origin = inFlight.take(batch.indexes[i] as number);
      if (origin === undefined) continue;
      ordinals.push(origin.ordinal);
      if (batch.status !== 'sent') {
        const record = batch.records[i] as Record<string, unknown> | undefined;
        await rejects.write({
          kind: batch.status,
          file: names[origin.input] as string,
          line: origin.line,
          batch: batch.index,
          error,
          record,
        });
      }
    }
    const n = batch.recordCount;
    if (batch.status === 'sent') {
      counts.recordsSent += n;
      counts.batchesSent++;
    } else if (batch.status === 'failed') {
      counts.recordsFailed += n;
      counts.batchesFailed++;
    } else {
      counts.recordsUnknown += n;
      counts.batchesUnknown++;
    }
    checkpoint?.settle(batch.status, ordinals);
    checkpoint?.save();
    progress();
  }

  let fatal: Error | undefined;
  let interrupted = false;
  if (options.client === undefined) {
    for await (const _ of records()) {
      // Dry run: reading validates and writes rejects; nothing is sent.
    }
  } else {
    try {
      const report = await options.client.finance.publish(options.appId, records(), {
        batchSize: options.batchSize,
        maxBatchBytes: options.maxBatchBytes,
        concurrency: options.concurrency,
        onInvalid: 'skip',
        onBatchSettled: settle,
        signal: options.abort,
      });
      if (report.stoppedBy) fatal = report.stoppedBy;
    } catch (error) {
      if (error instanceof PublishAbortedError || options.abort.aborted) interrupted = true;
      else fatal = error instanceof Error ? error : new Error(String(error));
    }
    await settleLeftovers(inFlight, names, counts, options, interrupted);
  }
  if (inputError) fatal = inputError;
  if (options.stopReading.aborted && !inputComplete) interrupted = true;
  if (checkpoint) {
    // Every record handed over has settled by now (the leftovers as unknown): only a killed run
    // leaves the reservation ahead of the sender in the file.
    checkpoint.handedOffExactly(handedOff);
    if (inputComplete && !interrupted && fatal === undefined) checkpoint.markComplete();
    checkpoint.save();
  }
  progress();
  return { counts, inputComplete, interrupted, fatal, durationMs: Date.now() - started };
}

/**
 * Records handed over whose batch never settled (an abort, or a publisher that stopped early) may or
 * may not have reached the service: they are counted and checkpointed as unknown, never resent silently.
 */
async function settleLeftovers(
  inFlight: OriginTable,
  names: string[],
  counts: PublishCounts,
  options: PublishRunOptions,
  interrupted: boolean,
): Promise<void> {
  if (inFlight.size === 0) return;
  const error = interrupted
    ? 'aborted while in flight; outcome unknown'
    : 'not settled by the publisher; outcome unknown';
  const ordinals: number[] = [];
  for (const origin of inFlight.takeAll()) {
    ordinals.push(origin.ordinal);
    counts.recordsUnknown++;
    await options.rejects.write({ kind: 'unknown', file: names[origin.input] as string, line: origin.line, error });
  }
  options.checkpoint?.settle('unknown', ordinals);
}
