import {
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  type PushError,
  TokenError,
} from '../errors.js';

/**
 * Errors that every following request would meet too, so the run stops instead of hammering: a
 * connection that could not be made at all (DNS, TLS, nothing listening, after the transport's own
 * retries), a refused token, a 401, 403 or 404 on the app, a configuration error. A connection lost
 * after the request was written is not one of them: it concerns that request only.
 */
export function stopsTheRun(error: PushError): boolean {
  return (
    (error instanceof ConnectionError && !error.requestMaybeSent) ||
    error instanceof AuthenticationError ||
    error instanceof PermissionDeniedError ||
    error instanceof NotFoundError ||
    error instanceof TokenError ||
    error instanceof ConfigurationError
  );
}
