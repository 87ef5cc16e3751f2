import type { Dispatcher } from 'undici';
import { dispatcherFetch } from './dispatcher-fetch.js';
import type { FetchLike } from './public-types.js';

export type { FetchLike } from './public-types.js';

/**
 * Chooses the fetch for one call, in this order: the `fetch` option; undici's own fetch when a
 * `dispatcher` is given (Node only, see dispatcher-fetch.ts); otherwise `globalThis.fetch`,
 * looked up at call time so that msw and other interceptors installed after the client was built
 * still see every request.
 */
export function createFetch(options: { fetch?: FetchLike; dispatcher?: Dispatcher }): FetchLike {
  const { fetch: custom, dispatcher } = options;
  if (custom) return (input, init) => custom(input, init);
  if (dispatcher) return dispatcherFetch(dispatcher);
  return (input, init) => globalThis.fetch(input, init);
}
