/**
 * undici's own fetch, for the `dispatcher` option. Node only: the build for workers and edge
 * runtimes uses dispatcher-fetch.web.ts instead, so that their bundlers never reach undici.
 */
import type { Dispatcher } from 'undici';
import type { FetchLike } from './public-types.js';

type UndiciFetch = (input: string, init: RequestInit & { dispatcher: Dispatcher }) => Promise<unknown>;

let undiciFetch: Promise<UndiciFetch> | undefined;

/** undici is imported only when a dispatcher is given, so that processes without one never load it. */
function loadUndiciFetch(): Promise<UndiciFetch> {
  undiciFetch ??= import('undici').then((undici) => undici.fetch as unknown as UndiciFetch);
  return undiciFetch;
}

/**
 * undici's fetch with `dispatcher` (the global fetch may bundle a different undici, whose
 * dispatchers are not interchangeable).
 */
export function dispatcherFetch(dispatcher: Dispatcher): FetchLike {
  return async (input, init) => {
    const fetch = await loadUndiciFetch();
    const url = input instanceof Request ? input.url : String(input);
    return (await fetch(url, { ...init, dispatcher })) as Response;
  };
}
