/**
 * Bearer checks of the data API: 401 for a missing, unknown, expired or revoked token (with the
 * RFC 6750 §3 challenge), 403 when the token lacks the operation's scope.
 */
import type { EmulatorContext } from './context.js';
import { CONNECTOR_WRITE } from './options.js';
import { apiError } from './responses.js';
import type { TokenRecord } from './state.js';

function unauthorized(detail: string, error?: string): Response {
  const challenge = error ? `Bearer realm="push-api", error="${error}"` : 'Bearer realm="push-api"';
  return apiError(401, detail, { 'www-authenticate': challenge });
}

export function authenticate(context: EmulatorContext, request: Request): TokenRecord | Response {
  const header = request.headers.get('authorization');
  if (header === null) return unauthorized('missing bearer token');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) return unauthorized('malformed authorization header', 'invalid_request');
  const token = context.state.tokens.get(match[1]);
  if (!token) return unauthorized('unknown access token', 'invalid_token');
  if (token.revoked) return unauthorized('access token revoked', 'invalid_token');
  if (context.clock.now() >= token.expiresAt) return unauthorized('access token expired', 'invalid_token');
  return token;
}

export function requireConnectorWrite(context: EmulatorContext, token: TokenRecord): Response | undefined {
  const needed = `${context.config.scopeBase}/${CONNECTOR_WRITE}`;
  if (token.scopes.includes(needed)) return undefined;
  return apiError(403, `token lacks scope ${needed}`, {
    'www-authenticate': `Bearer realm="push-api", error="insufficient_scope", scope="${needed}"`,
  });
}
