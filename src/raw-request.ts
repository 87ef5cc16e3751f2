/**
 * `client.request`: any call to the data API that the client does not wrap, with the same token,
 * 401 refresh, retries, hooks, logging, redaction, bounded reads and typed errors as the rest.
 */
import type { ClientContext } from './context.js';
import { answeredBy, ConfigurationError, PushError, requestIdFrom } from './errors.js';
import { answerText } from './http/fetch.js';
import { callSettings, responseMetadataOf } from './http/http-client.js';
import type { RequestOptions, WithResponse } from './http/public-types.js';
import type { RetryPolicy } from './http/types.js';
import { nestsDeeperThan } from './internal/text.js';

/** The methods `client.request` sends. */
export type RawRequestMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A query value: repeated keys come from an array (`filenames=a&filenames=b`, never `filenames[]`). */
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;

/** The options of `client.request`, beside every option a call takes. */
export interface RawRequestOptions extends RequestOptions {
  method: RawRequestMethod;
  /**
   * The path under the base URL's own path: `/services/push/v1/...` with a `baseUrl` of
   * `https://gw.example/push/` goes to `https://gw.example/push/services/push/v1/...`. A path with
   * a scheme, a query, a fragment, a backslash or a `.`/`..` segment is refused, so that it cannot
   * leave the base URL.
   */
  path: string;
  /** Query parameters; `undefined` values are left out. @default none */
  query?: Readonly<Record<string, QueryValue>> | undefined;
  /**
   * Sent as JSON (`content-type: application/json`). A Blob, stream, FormData, URLSearchParams,
   * ArrayBuffer, typed array, Map or Set is refused: JSON would turn it into `{}` or an object of indexes.
   * @default no body
   */
  body?: unknown;
  /** The scopes of this request's token, exactly. @default the client's `scopes` */
  scopes?: readonly string[] | undefined;
}

/** Idempotent methods are retried like a GET; others only when the service surely did not take them. */
function retryPolicyOf(method: RawRequestMethod): RetryPolicy {
  return method === 'POST' || method === 'PATCH' ? 'non-idempotent' : 'idempotent';
}

/**
 * The deepest JSON answer `request` parses. JSON.parse takes any depth, but a hostile answer nesting
 * a million arrays overflows the stack of whatever walks it next (JSON.stringify, a logger, a
 * deep copy) in the caller's code; real API answers nest a few levels.
 */
const MAX_REQUEST_JSON_DEPTH = 512;

const METHODS: readonly string[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function hasControlOrSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** `path` under the base URL's own path; refused when it could point anywhere else. */
function rawRequestUrl(baseUrl: URL, path: string, query: RawRequestOptions['query']): URL {
  if (typeof path !== 'string' || path === '') throw new ConfigurationError('request: path must be a non-empty string');
  if (/[?#\\]|^[a-z][a-z0-9+.-]*:/i.test(path) || hasControlOrSpace(path)) {
    throw new ConfigurationError(
      'request: path must be a path under the base URL, without scheme, query, fragment, backslash or whitespace; put the query in `query`',
    );
  }
  // `//host/x` reads as another host to a human: refused, like every empty segment.
  if (path.includes('//')) throw new ConfigurationError('request: path must not hold an empty segment (`//`)');
  const segments = path.replace(/^\//, '').split('/');
  for (const segment of segments) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw new ConfigurationError(`request: path has a malformed percent-encoding in ${JSON.stringify(segment)}`);
    }
    // A segment's parameters (`..;x`) and what follows a NUL are dropped by servers that treat
    // `..;` as `..` (Tomcat, Spring, gateways before them) or end a path at NUL: those segments
    // leave the base URL's path there, and are refused like `..` itself.
    const bare = decoded.split(';', 1)[0] as string;
    if (bare === '.' || bare === '..' || decoded.includes('/') || decoded.includes('\\') || hasControl(decoded)) {
      throw new ConfigurationError(`request: path must not leave the base URL (segment ${JSON.stringify(segment)})`);
    }
  }
  const url = new URL(baseUrl.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${segments.join('/')}`;
  url.search = '';
  url.hash = '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  url.search = params.toString();
  return url;
}

/**
 * Bodies that JSON.stringify turns into something else without a word (`{}` for a Blob, a stream,
 * a FormData or a Map; an object of indexes for a typed array): sending that would put data the
 * caller never meant on the service, with a 2xx to show for it.
 */
function binaryBodyKind(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const kinds: [string, unknown][] = [
    ['Blob', globalThis.Blob],
    ['FormData', globalThis.FormData],
    ['ReadableStream', globalThis.ReadableStream],
    ['URLSearchParams', globalThis.URLSearchParams],
    ['ArrayBuffer', globalThis.ArrayBuffer],
    ['Map', globalThis.Map],
    ['Set', globalThis.Set],
  ];
  for (const [name, type] of kinds) {
    if (typeof type === 'function' && body instanceof (type as abstract new (...args: never[]) => unknown)) return name;
  }
  if (ArrayBuffer.isView(body)) return body.constructor.name;
  if (typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function') {
    return 'stream';
  }
  return undefined;
}

/** Sends one request to the data API and reads its answer: parsed JSON, or text for other content types. */
export async function rawRequest<T>(ctx: ClientContext, options: RawRequestOptions): Promise<WithResponse<T>> {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('request: options are required');
  const { method, path, query, body, scopes } = options;
  if (typeof method !== 'string' || !METHODS.includes(method)) {
    throw new ConfigurationError(`request: method must be one of ${METHODS.join(', ')}`);
  }
  const url = rawRequestUrl(ctx.baseUrl, path, query);
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.length === 0)) {
    throw new ConfigurationError('request: scopes must be a non-empty array of scope URLs');
  }
  let text: string | undefined;
  if (body !== undefined) {
    const binary = binaryBodyKind(body);
    if (binary !== undefined) {
      throw new ConfigurationError(
        `request: body is a ${binary}, which is sent as JSON and would arrive as something else; pass a plain JSON value`,
      );
    }
    try {
      text = JSON.stringify(body);
    } catch (error) {
      throw new ConfigurationError('request: body cannot be sent as JSON', { cause: error });
    }
    if (text === undefined) throw new ConfigurationError('request: body cannot be sent as JSON');
  }
  const call = callSettings(options, ctx.defaultHeaders);
  const response = await ctx.http.send({
    operation: 'request',
    method,
    url,
    headers: text === undefined ? {} : { 'content-type': 'application/json' },
    ...(text !== undefined && { body: () => text }),
    auth: 'bearer',
    ...(scopes !== undefined && { scopes }),
    retryPolicy: retryPolicyOf(method),
    call,
  });
  const metadata = responseMetadataOf(response);
  const raw = await answerText(response);
  const type = response.headers.get('content-type') ?? '';
  if (!/^application\/([a-z0-9.+-]*\+)?json\b/i.test(type.trim()) || raw === '') {
    return { data: raw as T, response: metadata };
  }
  if (nestsDeeperThan(raw, MAX_REQUEST_JSON_DEPTH)) {
    throw answeredBy(
      new PushError(
        `request: the ${method} ${url.pathname} answer nests deeper than ${MAX_REQUEST_JSON_DEPTH} levels; not parsed.`,
      ),
      requestIdFrom(response.headers),
    );
  }
  try {
    return { data: JSON.parse(raw) as T, response: metadata };
  } catch (error) {
    throw answeredBy(
      new PushError(`request: the ${method} ${url.pathname} answer is not valid JSON.`, { cause: error }),
      requestIdFrom(response.headers),
    );
  }
}
