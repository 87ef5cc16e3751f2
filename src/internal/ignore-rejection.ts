/**
 * A user's callback (a hook, a logger method) may be async. One whose promise rejects must not
 * become an unhandled rejection, which ends a Node process: the rejection goes to `onRejected`.
 */
export function ignoreRejection(result: unknown, onRejected: (error: unknown) => void): void {
  if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
    Promise.resolve(result).catch(onRejected);
  }
}
