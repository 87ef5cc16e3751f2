import type { Dispatcher } from 'undici';

/** The fetch signature the transport needs; `globalThis.fetch`, undici's and most polyfills fit. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

type UndiciFetch = (input: string, init: RequestInit & { dispatcher: Dispatcher }) => Promise<unknown>;

let undiciFetch: Promise<UndiciFetch> | undefined;

/** undici is imported only when a dispatcher is given, so that browser bundles never pull it in. */
function loadUndiciFetch(): Promise<UndiciFetch> {
  undiciFetch ??= import('undici').then((undici) => undici.fetch as unknown as UndiciFetch);
  return undiciFetch;
}

/**
 * Chooses the fetch for one call, in this order: the `fetch` option; undici's own fetch when a
 * `dispatcher` is given (the global fetch may bundle a different undici, whose dispatchers are not
 * interchangeable); otherwise `globalThis.fetch`, looked up at call time so that msw and other
 * interceptors installed after the client was built still see every request.
 */
export function createFetch(options: { fetch?: FetchLike; dispatcher?: Dispatcher }): FetchLike {
  const { fetch: custom, dispatcher } = options;
  if (custom) return (input, init) => custom(input, init);
  if (dispatcher) {
    return async (input, init) => {
      const fetch = await loadUndiciFetch();
      const url = input instanceof Request ? input.url : String(input);
      return (await fetch(url, { ...init, dispatcher })) as Response;
    };
  }
  return (input, init) => globalThis.fetch(input, init);
}
