import { FINANCE_DEFAULTS } from '../defaults.js';
import {
  AuthenticationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  PushApiError,
  PushError,
  RateLimitError,
  ServerError,
  TokenError,
  UploadError,
} from '../index.js';
import { UsageError } from './exit-codes.js';

/** The patience of a publish or upload run the CLI starts, which sets no deadline of its own. */
const PATIENCE_MINUTES = FINANCE_DEFAULTS.rateLimitDeadlineMs / 60_000;

/** The `error` member of every `--json` report of a run that did not complete. */
export interface JsonError {
  name: string;
  message: string;
  code?: string;
  /** The service's request id, when the error is an answer of the service. */
  requestId?: string;
}

/** Where the run was talking to, for messages: hosts only, never a credential. */
export interface Endpoints {
  authUrl?: string;
  baseUrl?: string;
  appId?: string;
}

/** OAuth codes (RFC 6749 §5.2) by which a token endpoint says the client itself is refused. */
const REFUSED_CLIENT = new Set(['invalid_client', 'unauthorized_client', 'invalid_grant']);

/** The first `code` along the `cause` chain (a socket error's ECONNREFUSED, ENOTFOUND, a TLS code). */
function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Codes of a certificate signed by an authority this machine does not trust (a private CA, a self-signed one). */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/** host:port of a URL, as a person would type it; the URL text itself when it does not parse. */
function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.host;
  } catch {
    return url;
  }
}

/** The socket's own address when the cause names it (`127.0.0.1:4099`), else the host of the service the request went to. */
function addressOf(error: PushError, endpoints: Endpoints): string | undefined {
  let current: unknown = error.cause;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const { address, port, hostname } = current as { address?: unknown; port?: unknown; hostname?: unknown };
    if (typeof address === 'string') return typeof port === 'number' ? `${address}:${port}` : address;
    if (typeof hostname === 'string') return hostname;
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return hostOf(error.message.startsWith('token ') ? endpoints.authUrl : endpoints.baseUrl);
}

/** The machine-readable code of an error, when it has one: a socket code, an API `code`, an OAuth `error`. */
function errorCode(error: unknown): string | undefined {
  if (error instanceof PushApiError) return error.code;
  if (error instanceof TokenError) return error.error;
  if (error instanceof UploadError && error.storageCode !== undefined) return error.storageCode;
  if (error instanceof ConnectionError) return causeCode(error);
  return undefined;
}

/**
 * One line that names the cause of a stop and where it happened, such as
 * `cannot connect to 127.0.0.1:4099 (ECONNREFUSED)`. Errors of this package never hold a secret.
 * `command`: the run that stopped, since the same error stops each for its own reason.
 */
export function describeStop(error: unknown, endpoints: Endpoints, command: 'publish' | 'upload' | 'token'): string {
  if (!(error instanceof PushError)) return error instanceof Error ? error.message : String(error);
  const app = endpoints.appId === undefined ? 'the app' : `app "${endpoints.appId}"`;
  const api = hostOf(endpoints.baseUrl) ?? 'the data API';
  if (error instanceof ConnectionError) {
    const code = causeCode(error);
    const where = addressOf(error, endpoints) ?? 'the service';
    if (error.requestMaybeSent) return `connection to ${where} lost: ${error.message}`;
    if (code !== undefined && UNTRUSTED_CERTIFICATE.has(code)) {
      // Node's fetch trusts its own CA list only; a company's CA is added from a file.
      return `cannot connect to ${where} (${code}): its TLS certificate is not signed by an authority this machine trusts; for a private CA, set NODE_EXTRA_CA_CERTS to its PEM file`;
    }
    // Without a socket's code the message is the only account of it (a proxy that refused the tunnel).
    return `cannot connect to ${where}${code ? ` (${code})` : `: ${error.message}`}`;
  }
  if (error instanceof TokenError) {
    const where = hostOf(endpoints.authUrl) ?? 'the token service';
    // Only a refusal of the client says the credentials are wrong: a 404 is a wrong --auth-url,
    // invalid_scope a wrong --scope-base, and the message names what to check.
    const refused = REFUSED_CLIENT.has(error.error) || (error.error === 'http_error' && error.status === 401);
    return `the token service at ${where} ${refused ? 'refused the credentials' : 'answered'}: ${error.message}`;
  }
  if (error instanceof AuthenticationError)
    return `the data API at ${api} refused the access token (401): ${error.message}`;
  if (error instanceof PermissionDeniedError) {
    return `the data API at ${api} denied access to ${app} (403): the credential lacks the scope or the app`;
  }
  if (error instanceof NotFoundError) {
    // The spec's 404 is an unknown customer or app, but a --base-url that is not the data API's
    // address is answered 404 too: the service's own words tell the two apart.
    return `the data API at ${api} answered 404 for ${app} (${error.message}): check --app, and --base-url if that is not the data API's address`;
  }
  if (error instanceof RateLimitError) {
    // A publish stops on a 429 once its patience ran out; an upload when a request for upload
    // addresses was refused past its retries.
    if (command === 'upload') {
      return `the data API at ${api} answered 429 (rate limited) to a request for upload addresses, past its retries: the files not yet uploaded can be uploaded later (${error.message})`;
    }
    return `the data API at ${api} answered 429 (rate limited) and accepted nothing for ${PATIENCE_MINUTES} minutes, the run's patience: the run stopped, and the records not yet sent can be sent later (${error.message})`;
  }
  if (error instanceof UploadError && (error.status === 429 || error.status === 503) && command === 'upload') {
    // An upload stops on a storage host's 429 or 503 past its retries once no file was stored for its patience.
    const answer = error.status === 429 ? '429 (rate limited)' : '503 (unavailable)';
    return `the storage host answered ${answer} and stored no file for ${PATIENCE_MINUTES} minutes, the run's patience: the run stopped, and the files not yet uploaded can be uploaded later (${error.message})`;
  }
  if (error instanceof ServerError && error.status === 503 && command === 'publish') {
    // A publish stops on a 503 past its retries once nothing was accepted for its patience: an outage.
    return `the data API at ${api} answered 503 (unavailable) and accepted nothing for ${PATIENCE_MINUTES} minutes, the run's patience: the run stopped, and the records not yet sent can be sent later (${error.message})`;
  }
  return error.message;
}

/** The `error` member of a `--json` report. */
export function jsonError(error: unknown, message?: string): JsonError {
  const name = error instanceof Error ? error.name : 'Error';
  const code = errorCode(error);
  const requestId = (error as { requestId?: unknown } | null)?.requestId;
  return {
    name: error instanceof UsageError ? 'UsageError' : name,
    message: message ?? (error instanceof Error ? error.message : String(error)),
    ...(code !== undefined && { code }),
    ...(typeof requestId === 'string' && { requestId }),
  };
}
