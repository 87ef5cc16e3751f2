import { DEFAULTS } from '../defaults.js';
import { TokenError } from '../errors.js';
import { parseJsonObject } from '../internal/json.js';
import { REDACTED, scrubJsonValue, scrubSecrets, trimHttpWhitespace, truncateText } from '../internal/redact.js';
import type { AccessToken } from './token-store.js';

/**
 * Reading the token endpoint's answers. Messages never quote the response body: a success body
 * holds the token, and an error body may echo what was sent.
 */

/**
 * Maps a non-2xx token response to a TokenError carrying the OAuth `error` code (RFC 6749 §5.2).
 * `bodyText` was scrubbed already; the parsed fields are scrubbed again, because JSON decoding
 * may turn an escaped secret back into the secret.
 */
export function tokenErrorFromResponse(
  status: number,
  bodyText: string,
  secrets: readonly string[],
  answer: { retryAfterMs?: number; requestId?: string; tokenUrl?: URL } = {},
): TokenError {
  // What the answer's headers said (Retry-After, x-request-id), on every error built here.
  const retry = {
    ...(answer.retryAfterMs !== undefined && { retryAfterMs: answer.retryAfterMs }),
    ...(answer.requestId !== undefined && { requestId: answer.requestId }),
  };
  if (status >= 300 && status < 400) {
    // The request carries the client credentials, so it is never re-sent to wherever a redirect points.
    return new TokenError(
      'http_error',
      `Token endpoint answered HTTP ${status} (a redirect); token requests do not follow redirects. Check authUrl.`,
      { status, ...retry },
    );
  }
  const parsed = parseJsonObject(bodyText);
  const body = parsed === undefined ? undefined : (scrubJsonValue(parsed, secrets) as Record<string, unknown>);
  const code = typeof body?.error === 'string' && /^[\x20-\x7e]{1,100}$/.test(body.error) ? body.error : undefined;
  const rawDescription = typeof body?.error_description === 'string' ? body.error_description : undefined;
  const description = rawDescription === undefined ? undefined : truncateText(rawDescription);
  const hint = settingToCheck(code, status, answer.tokenUrl);
  if (code === undefined) {
    return new TokenError('http_error', `Token request failed with HTTP ${status}${hint}`, { status, ...retry });
  }
  const detail = description ? `: ${description}` : '';
  return new TokenError(code, `Token request failed with HTTP ${status} (${code})${detail}${hint}`, {
    status,
    errorDescription: description,
    ...retry,
  });
}

/**
 * The setting a person most likely got wrong, for the refusals met while setting up: a wrong
 * secret or id, a scope prefix the credential does not have, an `authUrl` with no token endpoint
 * under it (often the token endpoint's own address, to which the path is added a second time).
 * The token URL is shown without its query; it holds no credential (the client refuses a URL with
 * `user:password@`).
 */
function settingToCheck(code: string | undefined, status: number, tokenUrl: URL | undefined): string {
  if (code === 'invalid_client' || (code === undefined && status === 401)) {
    return '; check clientId and clientSecret (PUSH_CLIENT_ID, PUSH_CLIENT_SECRET)';
  }
  if (code === 'invalid_scope') return '; check scopeBase (PUSH_SCOPE_BASE) or scopes';
  if (code !== undefined || (status !== 404 && status !== 405) || tokenUrl === undefined) return '';
  const doubled = tokenUrl.pathname.replace(/\/+$/, '').endsWith(`${DEFAULTS.tokenPath}${DEFAULTS.tokenPath}`);
  const given = doubled ? ', which must not end in /oauth2/token' : '';
  return `: no token endpoint at ${tokenUrl.origin}${tokenUrl.pathname}; check authUrl (PUSH_AUTH_URL)${given}: tokens are requested from {authUrl}${DEFAULTS.tokenPath}`;
}

function isVisibleAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

function invalid(reason: string, status: number): TokenError {
  return new TokenError('invalid_token_response', `Token endpoint returned an unusable token: ${reason}`, { status });
}

/**
 * The longest token lifetime believed, in seconds (24 hours). A service may claim any `expires_in`
 * (1e300 once gave an Invalid Date, and the cache never hit); a longer claim is cut to this, so a
 * token is refreshed at least once a day.
 */
export const MAX_TOKEN_LIFETIME_SECONDS = 86_400;

function readExpiresIn(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  // Some servers send the lifetime as a numeric string; accept it, reject anything else.
  if (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

/**
 * The granted scopes fit to show, and how many were left out: a scope holding a secret (the access
 * token this answer issues, the client secret, or the marker the transport left where it found
 * one) never reaches the "token acquired" log line or the `push-api token` table. No real service
 * lists one; a hostile one would see it written down.
 */
function scopesFitToShow(granted: readonly string[], secrets: readonly string[]): { kept: string[]; leftOut: number } {
  const kept = granted.filter((scope) => !scope.includes(REDACTED) && scrubSecrets(scope, secrets) === scope);
  return { kept, leftOut: granted.length - kept.length };
}

/** A validated token answer: the token, its lifetime, and how many granted scopes were not kept. */
export interface ParsedTokenResponse {
  token: AccessToken;
  lifetimeMs: number;
  /** Granted scopes left out because they held a secret (see `scopesFitToShow`). */
  scopesLeftOut: number;
}

/**
 * Validates a 2xx token response: a non-empty `access_token`, `token_type` Bearer in any case, a
 * positive `expires_in` (cut to {@link MAX_TOKEN_LIFETIME_SECONDS}); and when the server lists the
 * granted `scope`, every required scope must be in it, so that a missing scope fails here rather
 * than as a 403 on each data call. `secrets` are the client secret's forms, kept out of the scopes.
 * `issuedFrom` is the earliest the token can have been issued (its request's start): its lifetime runs from there.
 */
export function parseTokenResponse(
  status: number,
  bodyText: string,
  requiredScopes: readonly string[],
  issuedFrom: number,
  secrets: readonly string[] = [],
): ParsedTokenResponse {
  const body = parseJsonObject(bodyText);
  if (!body) throw invalid('the body is not a JSON object', status);
  const issued = body.access_token;
  if (typeof issued !== 'string' || issued.trim() === '') throw invalid('access_token is missing', status);
  // Kept as a request carries it: fetch drops a header value's leading and trailing whitespace
  // (a token endpoint that ends its token with a newline), and the token is scrubbed as sent.
  const accessToken = trimHttpWhitespace(issued);
  // RFC 6750 tokens are visible ASCII. Anything else goes out as bytes no scrubbing can follow
  // (fetch sends U+0080–U+00FF as single Latin-1 bytes, which an echo then percent-encodes as no
  // UTF-8 decoder reads), or fails every request; refused here, once, with a clear reason.
  if (!isVisibleAscii(accessToken)) {
    throw invalid('access_token holds spaces or characters outside visible ASCII (RFC 6750)', status);
  }
  const tokenType = body.token_type;
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'bearer') {
    throw invalid('token_type is not Bearer', status);
  }
  const expiresIn = readExpiresIn(body.expires_in);
  if (expiresIn === undefined || Number.isNaN(expiresIn) || expiresIn <= 0) {
    throw invalid('expires_in is not a positive number of seconds', status);
  }
  let scopes = [...requiredScopes];
  let scopesLeftOut = 0;
  if (typeof body.scope === 'string' && body.scope.trim() !== '') {
    const granted = body.scope.trim().split(/\s+/);
    const missing = requiredScopes.filter((scope) => !granted.includes(scope));
    if (missing.length > 0) {
      throw new TokenError(
        'insufficient_scope',
        `The token was granted without the required scope(s): ${missing.join(', ')}`,
        {
          status,
        },
      );
    }
    ({ kept: scopes, leftOut: scopesLeftOut } = scopesFitToShow(granted, [issued, accessToken, ...secrets]));
  }
  const lifetimeMs = Math.min(expiresIn, MAX_TOKEN_LIFETIME_SECONDS) * 1000;
  return {
    token: { accessToken, tokenType, expiresAt: new Date(issuedFrom + lifetimeMs), scopes },
    lifetimeMs,
    scopesLeftOut,
  };
}
