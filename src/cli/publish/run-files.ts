import type { Checkpoint } from '../checkpoint.js';
import type { RejectsWriter } from '../rejects.js';

/**
 * The last writes of a run: the checkpoint's newest state (settled batches are saved in the
 * background, and must be on the disk before the lock is released) and the rejects file, renamed
 * into place. Both are tried whatever happens to the other, so a full disk under the checkpoint
 * does not lose the rejects; the first failure is returned, for the report.
 */
export async function closeRunFiles(
  checkpoint: Checkpoint | undefined,
  rejects: RejectsWriter,
): Promise<Error | undefined> {
  let failure: Error | undefined;
  try {
    checkpoint?.flush();
  } catch (error) {
    failure = asError(error);
  }
  try {
    await rejects.close();
  } catch (error) {
    failure ??= asError(error);
  }
  return failure;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
