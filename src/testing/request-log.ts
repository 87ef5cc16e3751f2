/** Builds request-log entries that never hold a secret: no bodies, no tokens, no signatures. */
import type { Operation, RequestLogEntry } from './state.js';

const REDACTED = '[redacted]';
const SECRET_PARAMS = new Set(['signature']);

function redactHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name === 'authorization' || name === 'proxy-authorization') {
      const scheme = value.trim().split(/\s+/)[0] ?? '';
      out[name] = scheme && scheme !== value.trim() ? `${scheme} ${REDACTED}` : REDACTED;
    } else if (name === 'cookie') {
      out[name] = REDACTED;
    } else {
      out[name] = value;
    }
  });
  return out;
}

function redactQuery(params: URLSearchParams): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  params.forEach((value, name) => {
    const list = out[name] ?? [];
    list.push(SECRET_PARAMS.has(name) ? REDACTED : value);
    out[name] = list;
  });
  return out;
}

export function logEntry(
  request: Request,
  url: URL,
  id: string,
  at: number,
  operation: Operation | undefined,
  status: number,
  fault: RequestLogEntry['fault'],
  durationMs: number,
): RequestLogEntry {
  const entry: RequestLogEntry = {
    id,
    at,
    method: request.method,
    url: `${url.origin}${url.pathname}`,
    path: url.pathname,
    query: redactQuery(url.searchParams),
    operation,
    status,
    headers: redactHeaders(request.headers),
    durationMs,
  };
  if (fault) entry.fault = fault;
  return entry;
}
