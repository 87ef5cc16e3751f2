/**
 * Issue 5's assertions for one seed, as a list of violations (empty when the seed passed), so
 * that the test and the many-seeds script report the same thing.
 */
import type { BatchStatus, PublishReport, UploadReport } from 'push-api-client';
import type { EmulatorStateView } from 'push-api-client/testing';
import type { Workload } from './workload.js';

export interface RecordBuckets {
  sent: number;
  invalid: number;
  failed: number;
  unknown: number;
}

export interface InvariantInput {
  workload: Workload;
  report: PublishReport;
  /** Status of each input index, from `onBatchSettled` (records never read are taken from the report). */
  statusOf: Map<number, BatchStatus>;
  uploads: UploadReport;
  state: EmulatorStateView;
  appId: string;
  retryAmbiguous: boolean;
  /** Upper bound of token requests for this run (see `tokenRequestBound`). */
  tokenBound: number;
}

export interface InvariantResult {
  violations: string[];
  buckets: RecordBuckets;
  /** Records the emulator holds more than once. */
  duplicates: number;
}

/** Keeps the first few of a kind of violation, then counts the rest. */
class Violations {
  readonly list: string[] = [];
  readonly #perKind = new Map<string, number>();
  add(kind: string, detail: string): void {
    const seen = (this.#perKind.get(kind) ?? 0) + 1;
    this.#perKind.set(kind, seen);
    if (seen <= 3) this.list.push(`${kind}: ${detail}`);
    else if (seen === 4) this.list.push(`${kind}: (more)`);
  }
}

function countAtEmulator(input: InvariantInput): Map<string, number> {
  const counts = new Map<string, number>();
  for (const record of input.state.records(input.appId)) {
    const key = record.transactionNumber ?? '(none)';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

export function checkInvariants(input: InvariantInput): InvariantResult {
  const { workload, report, statusOf, retryAmbiguous } = input;
  const v = new Violations();
  const total = workload.records.length;

  // 1. Every input record is in exactly one bucket.
  if (report.stoppedBy)
    v.add('stopped', `publish stopped early: ${report.stoppedBy.name}: ${report.stoppedBy.message}`);
  const invalid = new Set(report.invalid.map((entry) => entry.index));
  // Records an early stop left unsent (never read, or read into a batch never sent) are in no batch.
  const notRead = new Set<number>();
  if (report.recordsNotRead > 0) {
    for (let i = 0; i < total; i++) if (!statusOf.has(i) && !invalid.has(i)) notRead.add(i);
    if (notRead.size !== report.recordsNotRead)
      v.add('report counts', `not read ${report.recordsNotRead} ≠ ${notRead.size} records in no batch`);
  }
  const statusAt = (i: number): BatchStatus | undefined => statusOf.get(i);
  const buckets: RecordBuckets = { sent: 0, invalid: invalid.size, failed: 0, unknown: 0 };
  for (let i = 0; i < total; i++) {
    const status = statusAt(i);
    if (invalid.has(i) && status !== undefined) v.add('two buckets', `record ${i} is invalid and in a ${status} batch`);
    else if (!invalid.has(i) && status === undefined && !notRead.has(i)) v.add('no bucket', `record ${i}`);
    if (status !== undefined) buckets[status] += 1;
    if (!notRead.has(i) && invalid.has(i) !== workload.invalidIndexes.has(i))
      v.add('invalid', `record ${i} misclassified`);
  }
  const reported =
    report.recordsSent + report.recordsInvalid + report.recordsFailed + report.recordsUnknown + report.recordsNotRead;
  if (reported !== total) v.add('report counts', `sum ${reported} ≠ ${total} records`);
  if (report.recordsSent !== buckets.sent || report.recordsFailed !== buckets.failed) {
    v.add(
      'report counts',
      `sent/failed ${report.recordsSent}/${report.recordsFailed} ≠ batches ${buckets.sent}/${buckets.failed}`,
    );
  }
  if (report.recordsUnknown !== buckets.unknown)
    v.add('report counts', `unknown ${report.recordsUnknown} ≠ ${buckets.unknown}`);

  // 2. The emulator holds each record as its bucket allows; 3. no sent batch is missing.
  const held = countAtEmulator(input);
  let duplicates = 0;
  const expected = new Set<string>();
  for (let i = 0; i < total; i++) {
    const record = workload.records[i];
    const key = record?.transactionNumber ?? '';
    expected.add(key);
    const copies = held.get(key) ?? 0;
    if (copies > 1) duplicates += 1;
    const status = invalid.has(i) ? 'invalid' : statusAt(i);
    if (status === 'sent' && copies === 0) v.add('sent but missing', `record ${i}`);
    if ((status === 'invalid' || status === 'failed') && copies > 0)
      v.add(`${status} but stored`, `record ${i} ×${copies}`);
    // `sent` means stored exactly once, in every mode: only an `unknown` record may be held twice,
    // and only when ambiguous attempts were re-sent.
    if (status === 'sent' && copies > 1) v.add('sent but duplicated', `record ${i} ×${copies}`);
    else if (!retryAmbiguous && copies > 1)
      v.add('duplicate without retryAmbiguous', `record ${i} ×${copies} (${status})`);
  }
  for (const key of held.keys()) if (!expected.has(key)) v.add('foreign record', key);

  // 4. Every uploaded file's bytes match the source; no bearer token reached the storage host.
  const bySource = new Map(workload.files.map((file) => [file.name, file]));
  if (input.uploads.files.length !== workload.files.length) v.add('upload report', 'one entry per file expected');
  for (const result of input.uploads.files) {
    const source = bySource.get(result.name);
    const stored = input.state.file(input.appId, result.name);
    if (result.status === 'uploaded') {
      if (!stored) v.add('uploaded but missing', result.name);
      else if (stored.sha256 !== source?.sha256) v.add('sha256 mismatch', result.name);
    } else if (!result.error) v.add('failed without error', result.name);
    if (stored?.authorization !== undefined) v.add('authorization at storage host', result.name);
  }

  // 5. Token requests stay bounded.
  const tokenRequests = input.state.tokenRequestCount;
  if (tokenRequests > input.tokenBound)
    v.add('token stampede', `${tokenRequests} token requests > bound ${input.tokenBound}`);

  return { violations: v.list, buckets, duplicates };
}
