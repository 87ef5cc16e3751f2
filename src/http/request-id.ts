import { scrubSecrets, truncateText } from '../internal/redact.js';

/**
 * Longest request id kept. Ids are short tokens (a UUID is 36 characters); one that is longer is
 * cut, so that a hostile answer cannot repeat megabytes into every batch report, hook event,
 * rejects line and `--json` report that carries it.
 */
const MAX_REQUEST_ID_LENGTH = 200;

/** A request id as the server sent it, cut to {@link MAX_REQUEST_ID_LENGTH}; undefined when absent. */
export function boundedRequestId(value: string | null | undefined): string | undefined {
  return value === null || value === undefined ? undefined : truncateText(value, MAX_REQUEST_ID_LENGTH);
}

/**
 * The `x-request-id` of an answer, bounded, and scrubbed of `secrets`: a hostile service may echo
 * the token or the client secret it was sent in any header, this one included.
 */
export function requestIdFrom(headers: Pick<Headers, 'get'>, secrets: readonly string[] = []): string | undefined {
  const value = headers.get('x-request-id');
  return boundedRequestId(value === null || secrets.length === 0 ? value : scrubSecrets(value, secrets));
}
