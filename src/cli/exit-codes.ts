/**
 * The exit codes of `push-api`, one table for every command (docs/cli.md, "Exit codes").
 * Scripts branch on these, so they never change meaning.
 */
export const ExitCode = {
  /** Everything was sent (with `--dry-run`: everything is valid). */
  Success: 0,
  /** The run was stopped by an error (the service unreachable, credentials or app refused); see the stderr line. */
  Stopped: 1,
  /** A usage or input error caught before anything was sent. */
  Usage: 2,
  /** The run completed, and some records were invalid, failed or unknown (or some files failed). */
  Partial: 3,
  /** Interrupted (Ctrl-C, SIGTERM, SIGHUP): 128 + SIGINT, as shells report it, whichever signal it was. */
  Interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** A usage, configuration or input error: printed as one line (no stack unless `--verbose`), exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Counts of one run, as the exit code sees them. */
export interface OutcomeCounts {
  recordsInvalid: number;
  recordsFailed: number;
  recordsUnknown: number;
}

/** Interrupted beats stopped beats partial: each says more about what is left to do. */
export function exitCodeFor(counts: OutcomeCounts, run: { stopped: boolean; interrupted: boolean }): ExitCodeValue {
  if (run.interrupted) return ExitCode.Interrupted;
  if (run.stopped) return ExitCode.Stopped;
  if (counts.recordsInvalid > 0 || counts.recordsFailed > 0 || counts.recordsUnknown > 0) return ExitCode.Partial;
  return ExitCode.Success;
}
