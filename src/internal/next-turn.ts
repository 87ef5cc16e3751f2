/**
 * One turn of the event loop, for code that must let the runtime finish its own callbacks first.
 * Node's fetch (undici) hands a keep-alive connection back to its pool in a `setImmediate` after
 * the response has ended; a request sent before that finds every connection busy and opens
 * another. Runtimes without `setImmediate` (workers, edge) go on at once.
 */
export function nextTurn(): Promise<void> | undefined {
  const setImmediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (typeof setImmediate !== 'function') return undefined;
  return new Promise((resolve) => {
    setImmediate(resolve);
  });
}
