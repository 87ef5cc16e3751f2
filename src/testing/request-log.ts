/**
 * Builds request-log entries that never hold a secret (no bodies, no tokens, no signatures) and
 * never hold more than {@link LOG_ENTRY_LIMITS}: whoever reaches the emulator chooses the path,
 * the query and the headers, and a web page can send long URLs to it without being let in.
 */
import type { Operation, RequestLogEntry } from './state.js';

const REDACTED = '[redacted]';
/**
 * Query parameters that carry a credential: the storage signature, and what a client may put in a
 * URL by mistake, the client secret (a token request sent as a query) and a bearer token (the
 * `access_token` parameter of RFC 6750 §2.3). The emulator accepts neither there, but logs the query.
 */
const SECRET_PARAMS = new Set(['signature', 'client_secret', 'access_token']);

/**
 * What one entry keeps of a request. The query limits hold the SDK's own address requests whole
 * (their URLs stay under 8,000 characters), so tests can still assert on every file name asked for.
 */
export const LOG_ENTRY_LIMITS = {
  /** Characters of the path (and of `url`, past its origin). */
  pathChars: 2048,
  /** Headers kept; the rest are left out. */
  headers: 64,
  /** Characters of one header name. */
  headerNameChars: 256,
  /** Characters of one header value. */
  headerValueChars: 1024,
  /** Characters of every kept header name and value together. */
  headerChars: 8192,
  /** Query values kept, across every parameter; the rest are left out. */
  queryValues: 1024,
  /** Characters of one query parameter name or value. */
  queryValueChars: 1024,
  /** Characters of every kept query name and value together, one more for each pair. */
  queryChars: 8192,
} as const;

/**
 * A copy of `text` that holds no other string. V8 keeps a slice, and a concatenation, as views of
 * the strings they came from, and Node's URL hands out its parts as slices of the whole address:
 * kept as they are, a short path would keep alive the long query beside it.
 */
function ownCopy(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

/**
 * `text` cut to `limit` characters, ending with a marker (`...[cut N chars]`) that says how much was
 * left out. The marker is ASCII, so that a Latin-1 text stays one byte a character.
 */
function cut(text: string, limit: number): string {
  return text.length <= limit ? text : ownCopy(`${text.slice(0, limit)}...[cut ${text.length - limit} chars]`);
}

/** Counts what an entry could not keep whole. */
class Truncation {
  headersLeftOut = 0;
  queryValuesLeftOut = 0;
  textCut = false;

  cut(text: string, limit: number): string {
    if (text.length <= limit) return text;
    this.textCut = true;
    return cut(text, limit);
  }

  get any(): boolean {
    return this.textCut || this.headersLeftOut > 0 || this.queryValuesLeftOut > 0;
  }
}

function redactedHeaderValue(name: string, value: string): string {
  if (name === 'authorization' || name === 'proxy-authorization') {
    const scheme = value.trim().split(/\s+/)[0] ?? '';
    return scheme && scheme !== value.trim() ? `${scheme} ${REDACTED}` : REDACTED;
  }
  return name === 'cookie' ? REDACTED : value;
}

function keptHeaders(headers: Headers, truncation: Truncation): Record<string, string> {
  const out: Record<string, string> = {};
  let kept = 0;
  let chars = 0;
  headers.forEach((value, fullName) => {
    const name = truncation.cut(fullName, LOG_ENTRY_LIMITS.headerNameChars);
    const shown = truncation.cut(redactedHeaderValue(fullName, value), LOG_ENTRY_LIMITS.headerValueChars);
    if (kept >= LOG_ENTRY_LIMITS.headers || chars + name.length + shown.length > LOG_ENTRY_LIMITS.headerChars) {
      truncation.headersLeftOut += 1;
      return;
    }
    kept += 1;
    chars += name.length + shown.length;
    out[name] = shown;
  });
  return out;
}

function keptQuery(params: URLSearchParams, truncation: Truncation): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  let kept = 0;
  let chars = 0;
  params.forEach((fullValue, fullName) => {
    // Like the path, parts of the query may be slices of the whole address.
    const name = ownCopy(truncation.cut(fullName, LOG_ENTRY_LIMITS.queryValueChars));
    const value = SECRET_PARAMS.has(fullName)
      ? REDACTED
      : ownCopy(truncation.cut(fullValue, LOG_ENTRY_LIMITS.queryValueChars));
    const cost = name.length + value.length + 1;
    if (kept >= LOG_ENTRY_LIMITS.queryValues || chars + cost > LOG_ENTRY_LIMITS.queryChars) {
      truncation.queryValuesLeftOut += 1;
      return;
    }
    kept += 1;
    chars += cost;
    const list = out[name] ?? [];
    list.push(value);
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
  const truncation = new Truncation();
  const path = ownCopy(truncation.cut(url.pathname, LOG_ENTRY_LIMITS.pathChars));
  // Over HTTP the origin names a Host the emulator accepted; through msw it can be any.
  const origin = truncation.cut(url.origin, LOG_ENTRY_LIMITS.headerNameChars);
  const entry: RequestLogEntry = {
    id,
    at,
    method: truncation.cut(request.method, LOG_ENTRY_LIMITS.headerNameChars),
    url: ownCopy(`${origin}${path}`),
    path,
    query: keptQuery(url.searchParams, truncation),
    operation,
    status,
    headers: keptHeaders(request.headers, truncation),
    durationMs,
  };
  if (fault) entry.fault = fault;
  if (truncation.any) {
    entry.truncated = {
      headersLeftOut: truncation.headersLeftOut,
      queryValuesLeftOut: truncation.queryValuesLeftOut,
    };
  }
  return entry;
}

// What the log's byte budget counts: an estimate of the heap an entry holds, not a measurement.
// A string is counted at two bytes a character (as if it held characters beyond Latin-1) plus its
// header; a property or array slot at a fixed cost. It errs high, so the budget holds.
const STRING_BYTES = 16;
const SLOT_BYTES = 16;
const ENTRY_BYTES = 256;

function textBytes(text: string): number {
  return STRING_BYTES + 2 * text.length;
}

/** The estimated heap size of one entry, in bytes, as the request log's byte budget counts it. */
export function estimateEntryBytes(entry: RequestLogEntry): number {
  let bytes =
    ENTRY_BYTES + textBytes(entry.id) + textBytes(entry.method) + textBytes(entry.url) + textBytes(entry.path);
  for (const [name, value] of Object.entries(entry.headers)) bytes += SLOT_BYTES + textBytes(name) + textBytes(value);
  for (const [name, values] of Object.entries(entry.query)) {
    bytes += SLOT_BYTES + textBytes(name);
    for (const value of values) bytes += SLOT_BYTES + textBytes(value);
  }
  return bytes;
}
