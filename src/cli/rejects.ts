import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { commitTemp, createTempBeside, discardTemp, holdName, type TempFile } from './files.js';
import { jsonSafe } from './json-safe.js';
import type { RowIssue } from './readers/types.js';
import { terminalSafeJson } from './terminal-text.js';
import { UnwritableOutputError } from './unwritable-output.js';

/**
 * Longest message copied into a rejects line, in characters. A service's error message is copied
 * into every record of its batch; a 1 MiB message times thousands of records made gigabytes.
 */
export const MAX_REJECT_MESSAGE_CHARS = 500;

/**
 * One line of the `--rejects` JSONL file. Every line has the same shape: where the row came from,
 * what happened to it, why, and the row or record itself when there is one.
 * - `invalid`: the row could not be read or failed validation;
 * - `failed`: the service refused its batch (safe to send again once the cause is fixed);
 * - `unknown`: its batch may or may not have been stored: check before sending again.
 */
export interface RejectEntry {
  file: string;
  line: number;
  kind: 'invalid' | 'failed' | 'unknown';
  /** Why: one entry per problem; `field` is empty for the row or batch as a whole. */
  reasons: RowIssue[];
  /** Zero-based batch index within this run, for failed and unknown records. */
  batch?: number;
  /** The service's request id of the answer that settled the batch, for failed and unknown records when the service answered. */
  requestId?: string;
  /** The record as read (invalid) or as it was to be sent (failed, unknown), when there is one. */
  record?: Record<string, unknown>;
  /** The line as read, for a CSV row that could not be split into cells. */
  raw?: string;
}

/** Shortens a message for a rejects line or the terminal. */
function truncateMessage(message: string, max = MAX_REJECT_MESSAGE_CHARS): string {
  return message.length > max ? `${message.slice(0, max)}… (${message.length - max} more characters)` : message;
}

/** How many invalid rows are shown on stderr when there is no `--rejects` file. */
const INVALID_ROWS_SHOWN = 5;

/**
 * Appends reject entries as JSON Lines, honouring backpressure so that millions of rejects stay in
 * bounded memory. The file is created up front (so an unwritable path is a usage error before
 * anything is sent), written under a random temporary name beside it, and renamed into place on
 * close: it describes this run. Without a path, entries are counted, and the first few invalid ones
 * are kept for the summary.
 */
export class RejectsWriter {
  #stream: WriteStream | undefined;
  #temp: TempFile | undefined;
  #failure: Error | undefined;
  #written = false;
  readonly counts = { invalid: 0, failed: 0, unknown: 0 };
  /** The first invalid rows, for stderr when there is no rejects file. */
  readonly firstInvalid: RejectEntry[] = [];

  constructor(readonly path: string | undefined) {
    if (path === undefined) return;
    holdName(path, '--rejects');
    const temp = createTempBeside(path, '--rejects');
    this.#temp = temp;
    // The descriptor stays open after the stream ends: it is flushed to the disk before the rename.
    this.#stream = createWriteStream('', { fd: temp.fd, autoClose: false });
    this.#stream.on('error', (error) => {
      this.#failure = error;
    });
  }

  async write(entry: RejectEntry): Promise<void> {
    this.counts[entry.kind]++;
    for (const reason of entry.reasons) reason.message = truncateMessage(reason.message);
    if (entry.kind === 'invalid' && this.firstInvalid.length < INVALID_ROWS_SHOWN) this.firstInvalid.push(entry);
    if (this.#failure) throw this.#unwritable(this.#failure);
    if (this.#stream === undefined) return;
    // Escaped like --json: `cat` is how a rejects file is read, and a service's message may carry
    // terminal controls. Made safe first: a transform's record may hold a cycle or a BigInt.
    if (!this.#stream.write(`${terminalSafeJson(jsonSafe(entry))}\n`)) await once(this.#stream, 'drain');
  }

  /** The file is in place, holding every entry of the run. */
  get written(): boolean {
    return this.#written;
  }

  async close(): Promise<void> {
    const stream = this.#stream;
    if (stream === undefined || this.path === undefined) return;
    this.#stream = undefined;
    const temp = this.#temp as TempFile;
    try {
      stream.end();
      if (!this.#failure) await once(stream, 'finish');
      if (this.#failure) throw this.#failure;
      commitTemp(temp, this.path);
      this.#written = true;
    } catch (error) {
      discardTemp(temp);
      throw this.#unwritable(error);
    }
  }

  /** The file was created before anything was sent: a write refused now stops the run in order. */
  #unwritable(error: unknown): UnwritableOutputError {
    return new UnwritableOutputError(
      '--rejects',
      this.path as string,
      error,
      "this run's rejected rows and unsent records are not saved; free the disk or fix the directory, then run again (with the same --checkpoint, a re-run lists them again)",
    );
  }
}
