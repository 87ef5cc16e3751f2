import type { InvalidRecord, SendingBatch, SettledBatch } from '../../index.js';
import type { Checkpoint } from '../checkpoint.js';
import { type Origin, OriginTable } from '../origins.js';
import type { RowIssue } from '../readers/types.js';
import type { RejectsWriter } from '../rejects.js';
import type { PublishCounts } from './counts.js';

/**
 * Where every record of a run ends: the settle sink. It keeps the origin (file, line, ordinal) of
 * each record handed to the publisher until its batch settles, then writes the rejects, the
 * checkpoint and the counts. Records are keyed by the publisher's index, which is the order they
 * were handed over; the checkpoint's numbering (the ordinal) travels in the origin. With a checkpoint,
 * a batch's records are reserved in it right before its request is sent ({@link SettleSink.sending}).
 */
export class SettleSink {
  readonly #origins = new OriginTable();
  readonly #names: string[];

  readonly #rejects: RejectsWriter;
  readonly #checkpoint: Checkpoint | undefined;
  readonly #counts: PublishCounts;
  readonly #onChange: () => void;

  constructor(
    names: string[],
    rejects: RejectsWriter,
    checkpoint: Checkpoint | undefined,
    counts: PublishCounts,
    onChange: () => void,
  ) {
    this.#rejects = rejects;
    this.#checkpoint = checkpoint;
    this.#counts = counts;
    this.#onChange = onChange;
    this.#names = names;
  }

  /** A record handed to the publisher as its `index`-th record. */
  handOver(index: number, ordinal: number, input: number, line: number): void {
    this.#origins.add(index, ordinal, input, line);
  }

  get unsettled(): number {
    return this.#origins.size;
  }

  /** A row that could not be read or failed validation. */
  async invalid(
    file: string,
    line: number,
    reasons: RowIssue[],
    record?: Record<string, unknown>,
    raw?: string,
  ): Promise<void> {
    this.#counts.recordsInvalid++;
    await this.#rejects.write({
      file,
      line,
      kind: 'invalid',
      reasons,
      ...(record !== undefined && { record }),
      ...(raw !== undefined && { raw }),
    });
  }

  /** A record whose outcome an earlier run left unknown: not sent again unless `--resend-unknown`. */
  async carriedUnknown(file: string, line: number, record: Record<string, unknown>): Promise<void> {
    this.#counts.recordsUnknown++;
    const message = 'outcome unknown from an earlier run; not sent again (use --resend-unknown to send it)';
    await this.#rejects.write({ file, line, kind: 'unknown', reasons: [{ field: '', message }], record });
  }

  /**
   * The publisher's `onBatchSending`: the batch's records go into the checkpoint before its request
   * leaves, so a run killed from now until it settles reports exactly these as unknown.
   */
  readonly sending = (batch: SendingBatch): Promise<void> | undefined => {
    if (this.#checkpoint === undefined) return undefined;
    const ordinals: number[] = [];
    for (const index of batch.indexes) {
      const ordinal = this.#origins.ordinalOf(index);
      if (ordinal !== undefined) ordinals.push(ordinal);
    }
    return this.#checkpoint.reserve(ordinals);
  };

  /**
   * The publisher's `onBatchSettled`. The counts and the checkpoint take the batch's outcome before
   * the rejects file is written: if writing it fails, the run stops, and the outcome is still known.
   */
  readonly settle = async (batch: SettledBatch): Promise<void> => {
    const origins: { origin: Origin; position: number }[] = [];
    for (let i = 0; i < batch.indexes.length; i++) {
      const origin = this.#origins.take(batch.indexes[i] as number);
      if (origin !== undefined) origins.push({ origin, position: i });
    }
    const counts = this.#counts;
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
    this.#checkpoint?.settle(
      batch.status,
      origins.map(({ origin }) => origin.ordinal),
    );
    this.#checkpoint?.saveSoon();
    this.#onChange();
    if (batch.status === 'sent') return;
    const message = batch.error?.message ?? (batch.status === 'unknown' ? 'outcome unknown' : 'not sent');
    for (const { origin, position } of origins) {
      await this.#rejects.write({
        file: this.#names[origin.input] as string,
        line: origin.line,
        kind: batch.status,
        reasons: [{ field: '', message }],
        batch: batch.index,
        ...(batch.requestId !== undefined && { requestId: batch.requestId }),
        record: batch.records[position] as Record<string, unknown> | undefined,
      });
    }
  };

  /**
   * Records the publisher refused after they were handed over (one too big for any request body,
   * under `--max-batch-bytes` or the 5 MiB default): invalid rows like any other, never "not read",
   * since sending them again cannot succeed. In the checkpoint they stay unsent, so the next run
   * reports them again instead of skipping them.
   */
  async refused(invalid: readonly InvalidRecord[]): Promise<void> {
    const ordinals: number[] = [];
    for (const entry of invalid) {
      const origin = this.#origins.take(entry.index);
      if (origin === undefined) continue;
      ordinals.push(origin.ordinal);
      this.#counts.recordsValid--;
      const reasons = entry.issues.map((issue) => ({ field: issue.path, message: issue.message }));
      await this.invalid(this.#names[origin.input] as string, origin.line, reasons);
    }
    this.#checkpoint?.settle('failed', ordinals);
  }

  /**
   * Records handed over whose batch never settled once the publisher has returned. The publisher
   * settles every batch it sent (and `settle` records a batch's outcome before anything in it can
   * fail), so these were never sent: they count as not read, and the checkpoint sends them again.
   */
  settleLeftovers(): void {
    const ordinals: number[] = [];
    for (const origin of this.#origins.takeAll()) {
      ordinals.push(origin.ordinal);
      this.#counts.recordsNotRead++;
    }
    // Not sent: "failed" in the checkpoint means "send again", exactly what the next run must do.
    this.#checkpoint?.settle('failed', ordinals);
  }
}
