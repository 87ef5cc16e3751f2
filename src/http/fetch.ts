/**
 * The one place a request meets the runtime: which fetch a call uses, and what its failures mean
 * (a ConnectionError that says whether the request may have been written, a TimeoutError, an
 * AbortError, a ConfigurationError for a request the runtime refuses to build, or the error a
 * body's own source threw).
 */
import type { Dispatcher } from 'undici';
import { AbortError, ConfigurationError, ConnectionError, PushError, TimeoutError } from '../errors.js';
import { truncateText } from '../internal/redact.js';
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
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/**
 * The codes of a server certificate that failed verification (OpenSSL's X509 verify results, as
 * Node names them). Verification ends the handshake, before a byte of the request is written.
 */
const CERTIFICATE_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_REJECTED',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
]);

/**
 * OpenSSL's codes for a handshake that could not agree (a protocol version, a cipher, a
 * certificate either side refused, a plain-http port answering TLS). The server's TLS layer
 * delivers no request data before its handshake completes, so even under TLS 1.3, where the
 * client may write before the server has judged its certificate, nothing reached the service.
 * Alerts that can come mid-stream (a bad record MAC, a decode error) are not among them.
 */
const TLS_HANDSHAKE_REFUSAL =
  /^ERR_SSL_(?:\w+_ALERT_(?:PROTOCOL_VERSION|HANDSHAKE_FAILURE|UNKNOWN_CA|BAD_CERTIFICATE|UNSUPPORTED_CERTIFICATE|CERTIFICATE_(?:REVOKED|EXPIRED|UNKNOWN|REQUIRED)|INSUFFICIENT_SECURITY|UNRECOGNIZED_NAME|NO_APPLICATION_PROTOCOL)|UNSUPPORTED_PROTOCOL|NO_PROTOCOLS_AVAILABLE|NO_SHARED_CIPHER|NO_CIPHERS_AVAILABLE|WRONG_VERSION_NUMBER|DH_KEY_TOO_SMALL|EE_KEY_TOO_SMALL|CA_MD_TOO_WEAK|CA_KEY_TOO_SMALL)$/;

/**
 * The system calls of a connection already open. Some codes above are met there too: Linux reports
 * a host or network unreachable on a read or a write (an ICMP error met by a retransmission or a
 * keep-alive probe, a route gone with a VPN), after the request may have reached the service.
 * Node's system errors name the call; other runtimes' errors name none, and their codes keep
 * their meaning.
 */
const OPEN_CONNECTION_SYSCALLS = new Set(['read', 'write', 'writev', 'shutdown']);

/** Whether a failure with this code, met in `syscall`, surely came before the request was written. */
function failedBeforeSending(code: string, syscall: unknown): boolean {
  if (typeof syscall === 'string' && OPEN_CONNECTION_SYSCALLS.has(syscall)) return false;
  return BEFORE_SEND_CODES.has(code) || CERTIFICATE_CODES.has(code) || TLS_HANDSHAKE_REFUSAL.test(code);
}

/** Walks `cause` links (fetch wraps the socket error in a TypeError) and returns the first `code`. */
function findErrorCode(error: unknown): string | undefined {
  return findCodedError(error)?.code;
}

/**
 * Deno's fetch failures carry no `code`: their innermost cause says `client error (Connect): ...`
 * when the connection could not be made, before a byte of the request was written. The operating
 * system's error it names becomes Node's code for it, so that a refused connection counts as not
 * sent (a batch `failed`, safe to send again, and the stop of the run) as it does on Node and Bun.
 */
const DENO_CONNECT_FAILURE = /\bclient error \(Connect\)/;
const DENO_CONNECT_CODES: readonly [RegExp, string][] = [
  [/\(os error 111\)|connection refused/i, 'ECONNREFUSED'],
  [/\bdns error\b.*temporary failure/i, 'EAI_AGAIN'],
  [/\bdns error\b/i, 'ENOTFOUND'],
  [/\(os error 113\)|no route to host/i, 'EHOSTUNREACH'],
  [/\(os error 101\)|network is unreachable/i, 'ENETUNREACH'],
  [/\(os error 99\)|cannot assign requested address/i, 'EADDRNOTAVAIL'],
];

/** Node's code for a Deno connect failure `message`, when it names one this module knows. */
function denoConnectCode(message: unknown): string | undefined {
  if (typeof message !== 'string' || !DENO_CONNECT_FAILURE.test(message)) return undefined;
  return DENO_CONNECT_CODES.find(([pattern]) => pattern.test(message))?.[1];
}

/** The first error in the `cause` chain that has a string `code`, with its message and system call. */
function findCodedError(error: unknown): { code: string; message: string | undefined; syscall: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const message = (current as { message?: unknown }).message;
    const code = (current as { code?: unknown }).code ?? denoConnectCode(message);
    if (typeof code === 'string') {
      const syscall = (current as { syscall?: unknown }).syscall;
      return { code, message: typeof message === 'string' && message !== '' ? message : undefined, syscall };
    }
    const errors = (current as { errors?: unknown }).errors;
    // AggregateError (happy eyeballs tries several addresses): each one failed to connect.
    if (Array.isArray(errors) && errors.length > 0) current = errors[0];
    else current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** undici's codes for a request it refuses to start: its arguments are wrong, or not supported. */
const UNDICI_REFUSALS = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/** Codes of errors raised while building a request, before any socket is touched. */
const LOCAL_CODES = new Set(['ERR_INVALID_URL', 'ERR_INVALID_CHAR', 'ERR_INVALID_HTTP_TOKEN', 'ERR_INVALID_ARG_VALUE']);

/**
 * What fetch throws, before connecting, for a request it cannot build: an invalid header name or
 * value (CR, LF, NUL, a character above U+00FF), an unparsable URL, a GET with a body. Network
 * failures in Node carry a coded `cause`; these carry none, or a local code.
 */
function localRequestProblem(error: unknown): string | undefined {
  if (!(error instanceof TypeError)) return undefined;
  const code = findErrorCode(error);
  if (code !== undefined && !LOCAL_CODES.has(code) && !UNDICI_REFUSALS.has(code)) return undefined;
  const message = error.message;
  // The Fetch standard's "bad ports" (1, 6000, 6665-6669, 10080 and others, services that must never
  // receive an HTTP request): fetch refuses them before connecting, saying only "bad port", with no
  // code. Nothing was sent, and every request there would meet it.
  if (error.cause instanceof Error && error.cause.message === 'bad port') {
    return 'its port is one fetch never connects to (a "bad port": the Fetch standard blocks ports such as 1, 6000, 6665-6669 and 10080); use another port';
  }
  if (/invalid header (name|value)|ByteString/i.test(message)) {
    return 'a header name or value is invalid (CR, LF, NUL or a character above U+00FF)';
  }
  if (code === 'ERR_INVALID_URL' || /parse URL|invalid URL/i.test(message)) return 'the URL is invalid';
  if (/cannot have body/i.test(message)) return 'a GET or HEAD request cannot have a body';
  // undici checks a request's headers and options before it writes a byte (a `transfer-encoding`,
  // `upgrade` or `expect` header a middleware set): refused there, nothing was sent.
  if (code !== undefined && UNDICI_REFUSALS.has(code)) {
    return `undici refused it: ${truncateText(findCodedError(error)?.message ?? code, 200)}`;
  }
  return undefined;
}

/**
 * undici's words for a proxy that answered a `CONNECT` with anything but 200. The tunnel never
 * opened, so the request never left this machine, whatever the status.
 */
const TUNNEL_REFUSED = /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling$/;

/**
 * The error for a proxy that refused to open a tunnel or to forward a plain http request, or
 * undefined when `code` and `message` say something else. A 4xx of the proxy (407: its credentials are missing or wrong; 403: its policy
 * forbids the host) answers every attempt the same: a configuration error, never re-sent. A 5xx
 * (the proxy could not reach the host) may pass, so it is retried like a refused connection. The
 * message names the status only: the proxy URL may hold a password.
 */
function proxyRefusal(code: string | undefined, message: string | undefined, operation: string) {
  // A plain http request the proxy was to forward (absolute form): undici turns its 407 into this.
  if (code === 'UND_ERR_INVALID_ARG' && message === 'Proxy Authentication Required (407)') {
    return new ConfigurationError(
      `${operation} request not sent: the proxy refused to forward it (407${PROXY_HINTS[407]})`,
    );
  }
  if (code !== 'UND_ERR_ABORTED' || message === undefined) return undefined;
  const status = Number(TUNNEL_REFUSED.exec(message)?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const what = `${operation} request not sent: the proxy refused to open a tunnel (${status}${PROXY_HINTS[status] ?? ''})`;
  if (status >= 500) return new ConnectionError(what, { requestMaybeSent: false });
  return new ConfigurationError(what);
}

/** What a proxy's refusal of a tunnel most often means, for the statuses that have one cause. */
const PROXY_HINTS: Record<number, string> = {
  407: ' Proxy Authentication Required: check the user and password in the proxy URL',
  403: ' Forbidden: the proxy does not allow this host',
};

/** A PushError that fetch wrapped (it reports a failed body stream as a TypeError caused by it). */
function pushErrorCause(error: unknown): PushError | undefined {
  let current = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof PushError) return current;
    current = current.cause;
  }
  return undefined;
}

/**
 * Turns whatever `fetch` threw into a PushError. The caller's signal and `timedOut` tell a caller
 * abort from a timeout: both surface as an abort of the attempt's signal.
 */
export function toTransportError(
  error: unknown,
  context: {
    userSignal?: AbortSignal;
    timedOut: boolean;
    timeoutMs: number;
    operation: string;
    /** The status of an answer whose headers had come when it failed. */
    answered?: number | undefined;
  },
): PushError {
  if (error instanceof PushError) return error;
  // The request body's own source failed (a file that changed while it was read): that error is
  // the outcome, not a network fault, and sending again cannot fix it.
  const sourceError = pushErrorCause(error);
  if (sourceError !== undefined) return sourceError;
  if (context.userSignal?.aborted) {
    return new AbortError(`${context.operation} request aborted by the caller`, { cause: context.userSignal.reason });
  }
  if (context.timedOut) {
    const what =
      context.answered === undefined
        ? 'got no response'
        : `got an answer (${context.answered}) whose body did not finish`;
    return new TimeoutError(`${context.operation} request ${what} within ${context.timeoutMs} ms`, { cause: error });
  }
  // Every attempt would fail the same way, and nothing was sent: fatal, never "maybe sent". The
  // cause is left out: fetch quotes the offending value, which may be a header holding a token.
  const refusal = proxyRefusal(findErrorCode(error), findCodedError(error)?.message, context.operation);
  if (refusal !== undefined) return refusal;
  const problem = localRequestProblem(error);
  if (problem !== undefined) {
    return new ConfigurationError(`${context.operation} request could not be sent: ${problem}`);
  }
  const coded = findCodedError(error);
  const code = coded?.code;
  const requestMaybeSent = code === undefined || !failedBeforeSending(code, coded?.syscall);
  // undici's own errors say what went wrong in words a code cannot ("other side closed"); so do
  // Node's for a certificate ("self-signed certificate", the names a certificate holds). Neither
  // names a header value. System errors (ECONNRESET...) need none; OpenSSL's are a source path.
  const worded =
    code !== undefined &&
    (code.startsWith('UND_ERR_') || CERTIFICATE_CODES.has(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID');
  const detail =
    worded && coded?.message !== undefined
      ? `${code} (${truncateText(coded.message, 200)})`
      : (code ?? (error instanceof Error ? error.message : 'network error'));
  return new ConnectionError(`${context.operation} request failed: ${detail}`, { requestMaybeSent, cause: error });
}
