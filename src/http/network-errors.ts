import { AbortError, ConnectionError, PushError, TimeoutError } from '../errors.js';

/**
 * Error codes that mean the connection was never established, so the request cannot have been
 * written: DNS failures, refused or unreachable hosts, connect timeouts and TLS handshake failures.
 * Anything else (a reset, a closed socket, a body timeout) may come after the request was sent.
 */
const BEFORE_SEND_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** Walks `cause` links (fetch wraps the socket error in a TypeError) and returns the first `code`. */
export function findErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (current as { errors?: unknown }).errors;
    // AggregateError (happy eyeballs tries several addresses): each one failed to connect.
    if (Array.isArray(errors) && errors.length > 0) current = errors[0];
    else current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Turns whatever `fetch` threw into a PushError. The signals tell a caller abort from a timeout:
 * both surface as an abort of the combined signal.
 */
export function toTransportError(
  error: unknown,
  context: { userSignal?: AbortSignal; timeoutSignal: AbortSignal; timeoutMs: number; operation: string },
): PushError {
  if (error instanceof PushError) return error;
  if (context.userSignal?.aborted) {
    return new AbortError(`${context.operation} request aborted by the caller`, { cause: context.userSignal.reason });
  }
  if (context.timeoutSignal.aborted) {
    return new TimeoutError(`${context.operation} request got no response within ${context.timeoutMs} ms`, {
      cause: error,
    });
  }
  const code = findErrorCode(error);
  const requestMaybeSent = code === undefined || !BEFORE_SEND_CODES.has(code);
  const detail = code ?? (error instanceof Error ? error.message : 'network error');
  return new ConnectionError(`${context.operation} request failed: ${detail}`, { requestMaybeSent, cause: error });
}
