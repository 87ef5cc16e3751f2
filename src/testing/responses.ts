/**
 * The three error dialects the emulated service speaks: the spec's JSON shape on the data API,
 * RFC 6749 §5.2 on the token endpoint, and object-store XML on the signed-URL host.
 */

const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  411: 'Length Required',
  413: 'Content Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** Reason phrase for the status line; Node would otherwise send none, which no real server does. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status < 400 ? 'OK' : 'Error');
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    statusText: reasonPhrase(status),
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** The spec's error body: `{code: "<status>", message, success: false}`. */
export function apiError(status: number, detail?: string, headers: Record<string, string> = {}): Response {
  const message = detail ? `${reasonPhrase(status)}: ${detail}` : reasonPhrase(status);
  return jsonResponse(status, { code: String(status), message, success: false }, headers);
}

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error';

/** RFC 6749 §5.2 error; §5.1 also forbids caching any token response. */
export function oauthError(
  status: number,
  error: OAuthErrorCode,
  description: string,
  headers: Record<string, string> = {},
): Response {
  return jsonResponse(
    status,
    { error, error_description: description },
    { 'cache-control': 'no-store', pragma: 'no-cache', ...headers },
  );
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** Object-store style error, as S3 and GCS answer a bad presigned PUT. */
export function xmlError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error>`;
  return new Response(body, {
    status,
    statusText: reasonPhrase(status),
    headers: { 'content-type': 'application/xml', ...headers },
  });
}
