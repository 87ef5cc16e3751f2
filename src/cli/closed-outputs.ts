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
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {
      // Node has destroyed the stream: later writes to it are dropped, and nobody is left to tell.
    });
  }
}
