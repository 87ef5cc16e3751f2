/** Fault shapes the patience tests share: a service that refuses every other request, and one that answers slowly. */

/**
 * The stopSignal cases, each run with the default patience and with none left: with none (0), a
 * failure with a 503 would stop the run itself, so these show that a stop stays the caller's.
 */
export const PATIENCE_CASES = [
  ['', undefined],
  [', even with no patience left', 0],
] as const;

/**
 * A fault rule's `random` (with `probability: 0.5`) that strikes every other matching request,
 * starting with the first: refused, accepted, refused, … whatever the timing.
 */
export function everyOther(): () => number {
  let strike = false;
  return () => {
    strike = !strike;
    return strike ? 0 : 1;
  };
}

/** The global fetch, holding each request back `ms` first when `applies` says so: a run of a known least length. */
export function heldBack(ms: number, applies: (url: string, method: string) => boolean): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (applies(url, method)) await new Promise((resolve) => setTimeout(resolve, ms));
    return fetch(input, init);
  };
}
