/** Fault shapes the patience tests share: a service that refuses every other request, and one that answers slowly. */

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
