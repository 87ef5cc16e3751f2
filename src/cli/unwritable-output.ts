/**
 * A file of a run (`--checkpoint`, `--rejects`) that the disk refused once records were being sent:
 * it filled up, a quota was reached, the directory was remounted read-only or lost its permissions.
 * Unlike an unwritable path found before anything is sent (a usage error, exit 2), this stops the
 * run in order (exit 1): in-flight batches settle, the report keeps its counts, the other files are
 * still written and the lock is released.
 */
export class UnwritableOutputError extends Error {
  override name = 'UnwritableOutputError';

  /**
   * @param option the flag that named the file, such as `--checkpoint`
   * @param consequence what the lost write means for the user, and what to do next
   */
  constructor(option: string, path: string, cause: unknown, consequence: string) {
    super(`${describeFailure(option, path, cause)}; ${consequence}`, { cause });
  }
}

/** `--checkpoint ck.json: cannot write there (EACCES)`, whichever step of the write failed. */
function describeFailure(option: string, path: string, cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  // The CLI's own messages already name the option and the path.
  if (message.startsWith(`${option} `)) return message;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return `${option} ${path}: cannot write there (${code ?? message})`;
}
