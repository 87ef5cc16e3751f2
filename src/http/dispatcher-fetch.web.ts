/** Workers and edge runtimes have no undici: the `dispatcher` option is refused when the client is built. */
import type { Dispatcher } from 'undici';
import { ConfigurationError } from '../errors.js';
import type { FetchLike } from './public-types.js';

export function dispatcherFetch(_dispatcher: Dispatcher): FetchLike {
  throw new ConfigurationError(
    'PushClient: the dispatcher option needs undici, which this build (for workers and edge runtimes) does not load. ' +
      'Pass a fetch option instead.',
  );
}
