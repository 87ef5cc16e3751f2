/**
 * `POST {auth_url}/oauth2/token`: the client-credentials grant of RFC 6749 §4.4.
 *
 * Decisions where the spec is silent:
 * - HTTP Basic client authentication (§2.3.1) is accepted besides the body parameters the spec
 *   shows; using both is refused, as §2.3 forbids more than one method.
 * - An omitted `scope` is `invalid_scope`, as the spec lists `scope` as required; with
 *   `lenientScope` it grants every scope the credential holds (§3.3 lets a server apply a default).
 *   An empty `scope` is `invalid_scope`.
 * - A parameter sent twice is `invalid_request` (§3.2).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readBodyWithLimit } from './body.js';
import type { EmulatorContext, IncomingRequest } from './context.js';
import { jsonResponse, type OAuthErrorCode, oauthError } from './responses.js';

const FORM_TYPE = 'application/x-www-form-urlencoded';

interface ClientAuth {
  clientId: string | undefined;
  clientSecret: string | undefined;
  usedBasic: boolean;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Basic credentials are form-urlencoded before base64 (RFC 6749 §2.3.1). */
function parseBasic(header: string): { clientId: string; clientSecret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return {
      clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return undefined;
  }
}

function failure(code: OAuthErrorCode, description: string, usedBasic = false): Response {
  if (code === 'invalid_client' && usedBasic) {
    return oauthError(401, code, description, { 'www-authenticate': 'Basic realm="push-api"' });
  }
  return oauthError(400, code, description);
}

export async function handleTokenRequest(context: EmulatorContext, incoming: IncomingRequest): Promise<Response> {
  const { request } = incoming;
  const { state, config, clock } = context;
  if (state.isCurrent(incoming.generation)) state.tokenRequestCount += 1;
  if (request.method !== 'POST') {
    return oauthError(405, 'invalid_request', 'the token endpoint only accepts POST', { allow: 'POST' });
  }
  const contentType = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== FORM_TYPE) {
    return failure('invalid_request', `content-type must be ${FORM_TYPE}`);
  }
  const body = await readBodyWithLimit(request, config.maxBodyBytes);
  if (!body.ok) return oauthError(413, 'invalid_request', 'request body too large');
  const form = new URLSearchParams(Buffer.from(body.bytes).toString('utf8'));

  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) return failure('invalid_request', `parameter ${name} must not repeat`);
  }
  const grantType = form.get('grant_type');
  if (grantType === null) return failure('invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials') {
    return failure('unsupported_grant_type', 'only grant_type=client_credentials is supported');
  }

  const authorization = request.headers.get('authorization');
  const auth: ClientAuth = {
    clientId: form.get('client_id') ?? undefined,
    clientSecret: form.get('client_secret') ?? undefined,
    usedBasic: false,
  };
  if (authorization !== null) {
    const basic = parseBasic(authorization);
    if (!basic) return failure('invalid_client', 'malformed Basic authorization header', true);
    if (auth.clientId !== undefined || auth.clientSecret !== undefined) {
      return failure('invalid_request', 'use either HTTP Basic or client_id/client_secret in the body, not both');
    }
    auth.clientId = basic.clientId;
    auth.clientSecret = basic.clientSecret;
    auth.usedBasic = true;
  }
  if (auth.clientId === undefined) return failure('invalid_request', 'client_id is required');
  const credential = state.credentials.get(auth.clientId);
  if (auth.clientSecret === undefined || !credential || !sameSecret(auth.clientSecret, credential.clientSecret)) {
    return failure('invalid_client', 'client authentication failed', auth.usedBasic);
  }

  const scopeParam = form.get('scope');
  let scopes: string[];
  if (scopeParam === null) {
    // SPEC.md lists scope as a required parameter; the lenient mode is for clients that omit it.
    if (!config.lenientScope) return failure('invalid_scope', 'scope is required');
    scopes = [...credential.scopes];
  } else {
    scopes = [...new Set(scopeParam.split(' ').filter((scope) => scope !== ''))];
    if (scopes.length === 0) return failure('invalid_scope', 'scope is empty');
    const missing = scopes.find((scope) => !credential.scopes.includes(scope));
    if (missing !== undefined) return failure('invalid_scope', `scope not granted to this client: ${missing}`);
  }

  const token = randomBytes(32).toString('base64url');
  const issuedAt = clock.now();
  const ttl = config.tokenTtlSeconds;
  // A token issued for a request that arrived before a reset is not kept: the reset forgot tokens.
  if (state.isCurrent(incoming.generation)) {
    state.tokens.set(token, {
      token,
      clientId: credential.clientId,
      scopes,
      issuedAt,
      expiresAt: issuedAt + ttl * 1000,
      revoked: false,
    });
  }
  return jsonResponse(
    200,
    { access_token: token, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') },
    { 'cache-control': 'no-store', pragma: 'no-cache' },
  );
}
