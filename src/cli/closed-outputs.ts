/**
 * Whoever reads the CLI's stdout or stderr may go away before the run ends: `push-api … 2>&1 |
 * head -n 2`, a log shipper that restarts, a terminal or ssh session that closes. The next write
 * then fails (EPIPE on a pipe, EIO on a closed terminal), and Node reports that as an 'error' event
 * on the stream, which ends the process when nothing listens: the run would die half-way, with
 * batches in flight, no rejects file and no report. Listened to here, such a failure only closes
 * that one stream: what would have been printed on it is dropped (see terminal-text.ts), and the
 * run goes on to its ordered end, its files and its exit code.
 *
 * This file imports nothing: the entry point installs it before it loads anything else.
 */
export function outliveClosedOutputs(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    // Node has destroyed the stream: later writes to it are dropped. A reader that went away
    // (EPIPE) chose to; a redirect to a full disk (`--json > report.json`, ENOSPC) or a failing
    // device did not, and whoever reads stderr is told once that the report is missing.
    if (error.code === 'EPIPE' || process.stderr.destroyed) return;
    process.stderr.write(
      `push-api: stdout could not be written (${error.code ?? 'error'}): what the run printed there is lost (with --json, its report); the exit code and the files written say how it ended\n`,
    );
  });
  process.stderr.on('error', () => {
    // Destroyed too: later writes to it are dropped, and nobody is left to tell.
  });
}
