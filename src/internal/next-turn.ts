/**
 * One turn of the event loop, for code that must let the runtime finish its own callbacks first.
 * Node's fetch (undici) hands a keep-alive connection back to its pool in a `setImmediate` after
 * the response has ended; a request sent before that finds every connection busy and opens
 * another. Runtimes without `setImmediate` (workers, edge) go on at once.
 *
 * A turn is not a timer, so a test suite's fake clock must not hold it: vitest and Jest replace
 * `setImmediate` with one that waits for the test to advance the clock, and a request waiting on it
 * would hang. The runtime's own function, kept from when this module loaded, is used; if a fake
 * was already installed then, the current one if it is real; with no real one the turn is skipped.
 */

type SetImmediate = (callback: () => void) => unknown;

/**
 * sinon's fake-timers (behind vitest's and Jest's fake timers) mark their functions with `clock`;
 * Jest's legacy ones are mocks; `node:test`'s mock timers install a bound private method.
 */
function isFake(candidate: { name?: unknown }): boolean {
  return 'clock' in candidate || '_isMockFunction' in candidate || candidate.name === 'bound #setImmediate';
}

function realSetImmediate(candidate: unknown): SetImmediate | undefined {
  return typeof candidate === 'function' && !isFake(candidate) ? (candidate as SetImmediate) : undefined;
}

const atLoad = realSetImmediate((globalThis as { setImmediate?: unknown }).setImmediate);

export function nextTurn(): Promise<void> | undefined {
  const setImmediate = atLoad ?? realSetImmediate((globalThis as { setImmediate?: unknown }).setImmediate);
  if (setImmediate === undefined) return undefined;
  return new Promise((resolve) => {
    setImmediate(resolve);
  });
}
