import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { RowIssue } from './readers/types.js';

/**
 * One line of the `--rejects` JSONL file.
 * - `invalid`: the row could not be read or failed validation; `issues` say why.
 * - `failed`: the service refused its batch; fix the cause and replay the record.
 * - `unknown`: the batch's outcome is unknown (it may have been stored); reconcile before replaying.
 */
export interface RejectEntry {
  kind: 'invalid' | 'failed' | 'unknown';
  file: string;
  line: number;
  issues?: RowIssue[];
  /** Zero-based batch index within this run, for failed and unknown records. */
  batch?: number;
  /** Why the batch failed or is unknown. */
  error?: string;
  /** The record as read (invalid) or as it was to be sent (failed, unknown), when there is one. */
  record?: Record<string, unknown>;
}

/** Appends reject entries as JSON Lines, honouring backpressure so that millions of rejects stay in bounded memory. */
export class RejectsWriter {
  private stream: WriteStream | undefined;
  private failure: Error | undefined;
  readonly counts = { invalid: 0, failed: 0, unknown: 0 };

  /** With no path, entries are only counted. The file is replaced: it describes this run. */
  constructor(readonly path: string | undefined) {
    if (path !== undefined) {
      this.stream = createWriteStream(path, { flags: 'w', mode: 0o600 });
      this.stream.on('error', (error) => {
        this.failure = error;
      });
    }
  }

  async write(entry: RejectEntry): Promise<void> {
    this.counts[entry.kind]++;
    if (this.failure) throw this.failure;
    if (this.stream === undefined) return;
    if (!this.stream.write(`${JSON.stringify(entry)}\n`)) await once(this.stream, 'drain');
  }

  async close(): Promise<void> {
    const stream = this.stream;
    if (stream === undefined) return;
    this.stream = undefined;
    stream.end();
    await once(stream, 'close');
    if (this.failure) throw this.failure;
  }
}
