import { FINANCE_DEFAULTS } from '../../defaults.js';
import { AbortError, type PublishReport, PublishStoppedError, type PushClient, PushError } from '../../index.js';
import type { Checkpoint } from '../checkpoint.js';
import { InputChangedError } from '../readers/file-identity.js';
import type { InputSpec } from '../readers/index.js';
import type { RowRules } from '../readers/types.js';
import type { RejectsWriter } from '../rejects.js';
import { emptyCounts, type PublishCounts } from './counts.js';
import { RecordFeed } from './feed.js';
import { SettleSink } from './sink.js';

export interface PublishRunOptions {
  appId: string;
  inputs: InputSpec[];
  rules: RowRules;
  batchSize: number;
  maxBatchBytes: number | undefined;
  concurrency: number | undefined;
  /** False: `concurrency` requests in flight, always (`--fixed-concurrency`). */
  adaptive: boolean;
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

export interface PublishRunResult {
  counts: PublishCounts;
  /** The whole input was read. */
  inputComplete: boolean;
  interrupted: boolean;
  /** The error that stopped the run: the service, the credentials, the app, or a broken input. */
  stoppedBy: Error | undefined;
  /** The input whose unread rows cannot be counted: stdin (it cannot be read again), or a file that changed. */
  unreadRestOf: string | undefined;
  durationMs: number;
}

/**
 * One `finance publish` run: the record feed hands valid records to `client.finance.publish`, whose
 * `onBatchSettled` is the settle sink. A run stopped by an error rejects with it (the SDK's
 * contract); the rows it left unsent are counted as not read, and the checkpoint sends them next time.
 */
export async function runPublish(options: PublishRunOptions): Promise<PublishRunResult> {
  // The monotonic clock: a wall clock stepped back mid-run (NTP, a VM resumed) must not make the
  // duration negative.
  const started = performance.now();
  const { checkpoint } = options;
  const counts = emptyCounts();
  let feed: RecordFeed | undefined;
  const progress = () => options.onProgress(counts, feed?.bytesRead ?? 0);
  const names = options.inputs.map((input) => input.name);
  const sink = new SettleSink(names, options.rejects, checkpoint, counts, progress);
  feed = new RecordFeed(
    {
      inputs: options.inputs,
      rules: options.rules,
      checkpoint,
      sending: options.client !== undefined,
      stopReading: options.stopReading,
      maxBatchBytes: options.maxBatchBytes ?? FINANCE_DEFAULTS.maxBatchBytes,
    },
    sink,
    counts,
    progress,
  );

  let stoppedBy: Error | undefined;
  let interrupted = false;
  if (options.client === undefined) {
    for await (const _ of feed.records()) {
      // Dry run: reading validates and writes rejects; nothing is sent.
    }
  } else {
    let report: PublishReport | undefined;
    try {
      report = await options.client.finance.publish(options.appId, feed.records(), {
        batchSize: options.batchSize,
        maxBatchBytes: options.maxBatchBytes,
        concurrency: options.concurrency,
        adaptive: options.adaptive,
        onInvalid: 'skip',
        onBatchSending: sink.sending,
        onBatchSettled: sink.settle,
        signal: options.abort,
        // A batch waiting to be sent again gives up at the first signal, with its last answer:
        // a scheduler's grace period (Kubernetes gives 30 s) must not be spent on a Retry-After.
        stopSignal: options.stopReading,
      });
    } catch (error) {
      // A stopped run's report (a PublishStoppedError's, typed) still says which records were refused.
      if (error instanceof PushError && error.report !== undefined && 'invalid' in error.report) report = error.report;
      const cause = error instanceof PublishStoppedError ? error.cause : error;
      if (cause instanceof AbortError || options.abort.aborted) interrupted = true;
      else if (error instanceof PublishStoppedError && error.report.stoppedBy !== cause) {
        // The feed or the sink threw (a rejects file that cannot be written, say): the cause is what to report.
        stoppedBy = cause instanceof Error ? cause : error;
      } else stoppedBy = cause instanceof Error ? cause : new PushError(String(cause));
    }
    // Before the leftovers: a refused record is invalid, not "not read".
    if (report !== undefined) {
      try {
        await sink.refused(report.invalid);
      } catch (error) {
        stoppedBy ??= error instanceof Error ? error : new PushError(String(error));
      }
    }
    sink.settleLeftovers();
  }
  if (feed.inputError) stoppedBy ??= feed.inputError;
  if (options.stopReading.aborted && !feed.complete) interrupted = true;
  let unreadRestOf: string | undefined;
  if (stoppedBy instanceof InputChangedError) unreadRestOf = stoppedBy.file;
  else if (stoppedBy !== undefined && !interrupted && !feed.complete) {
    const unread = await feed.countUnread();
    if (unread === undefined) unreadRestOf = '<stdin>';
    else counts.recordsNotRead += unread;
  }
  if (checkpoint) {
    // Every record handed over has settled by now (the leftovers as not sent): only a killed run
    // leaves batches in flight in the file.
    if (feed.complete && !interrupted && stoppedBy === undefined) checkpoint.markComplete();
    try {
      checkpoint.save();
    } catch (error) {
      // The disk refused: the run has stopped, and says why in its report.
      stoppedBy ??= error instanceof Error ? error : new PushError(String(error));
    }
  }
  progress();
  return {
    counts,
    inputComplete: feed.complete,
    interrupted,
    stoppedBy,
    unreadRestOf,
    durationMs: Math.round(performance.now() - started),
  };
}
