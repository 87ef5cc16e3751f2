/**
 * The exit codes of `push-api`, documented in docs/cli.md ("Exit codes").
 * Scripts branch on these, so they never change meaning.
 */
export const ExitCode = {
  /** Every record was sent (or, with `--dry-run`, every record is valid). */
  Success: 0,
  /** A failure: some records were not sent because of an error (failed batches, auth, network, interrupted run). */
  Failure: 1,
  /** A usage, configuration or input error caught before anything was sent. */
  Usage: 2,
  /** Partial: some rows were invalid or some batches have an unknown outcome; the rest was sent. */
  Partial: 3,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A usage, configuration or input error: printed as one line (no stack unless `--verbose`), exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Counts of one publish run, as the exit code sees them. */
export interface OutcomeCounts {
  recordsSent: number;
  recordsInvalid: number;
  recordsFailed: number;
  recordsUnknown: number;
}

/**
 * Failure beats partial: a failed batch or a fatal error (including an interrupted run) is 1;
 * otherwise invalid rows or unknown batches make it 3; otherwise 0.
 */
export function exitCodeFor(counts: OutcomeCounts, fatal: boolean): ExitCodeValue {
  if (fatal || counts.recordsFailed > 0) return ExitCode.Failure;
  if (counts.recordsInvalid > 0 || counts.recordsUnknown > 0) return ExitCode.Partial;
  return ExitCode.Success;
}
