/**
 * What the transport does with an answer's body: a 2xx body is read under its cap and handed on;
 * any other body is read under the error cap, scrubbed of secrets and turned into an error. The
 * caps and the capped read itself (`readBounded`) are at the end of this file.
 */
import {
  type ApiErrorBody,
  answeredBy,
  type HeadersRecord,
  PushApiError,
  type PushError,
  ResponseTooLargeError,
  requestIdFrom,
} from '../errors.js';
import { parseJsonObject } from '../internal/json.js';
import { cutAfterSecrets, scrubJsonValue, scrubSecrets, secretInName, trimHttpWhitespace } from '../internal/redact.js';
import type { AnswerHead, RequestSpec } from './types.js';

/** Statuses whose response cannot carry a body (Fetch standard "null body status"). */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * Response headers as a plain object, each value scrubbed: a service may echo a secret in a header
 * too. A header whose name holds a secret is left out (a name cannot carry the redaction marker).
 */
export function headersToRecord(headers: Headers, secrets: readonly string[] = []): HeadersRecord {
  const out: HeadersRecord = {};
  const holdsSecret = secretInName(secrets);
  headers.forEach((value, key) => {
    if (holdsSecret(key)) return;
    out[key] = scrubSecrets(value, secrets);
  });
  return out;
}

/**
 * The headers with each value scrubbed and each name holding a secret left out, or the same object
 * when no name or value held one (the common case: the copy and its checks cost a success answer
 * more than reading its body).
 */
function scrubbedHeaders(headers: Headers, secrets: readonly string[]): Headers {
  let changed = false;
  const holdsSecret = secretInName(secrets);
  headers.forEach((value, key) => {
    changed ||= scrubSecrets(value, secrets) !== value || holdsSecret(key);
  });
  return changed ? new Headers(headersToRecord(headers, secrets)) : headers;
}

/**
 * The text of the success answers read here, scrubbed, by the answer handed on: the SDK's own
 * readers take it from here instead of reading the copy's body again. The copy's body stays
 * unread, so a caller given the response may still read it.
 */
const answerTexts = new WeakMap<Response, string>();

/** An answer's body as text: the text it was buffered with, or else read. */
export function answerText(response: Response): Promise<string> {
  const text = answerTexts.get(response);
  return text === undefined ? response.text() : Promise.resolve(text);
}

function parseErrorBody(text: string, secrets: readonly string[]): ApiErrorBody | string | undefined {
  if (text === '') return undefined;
  const parsed = parseJsonObject(text);
  return parsed === undefined ? text : (scrubJsonValue(parsed, secrets) as ApiErrorBody);
}

/**
 * The status and headers of an answer rebuilt in memory, without its reason phrase: clients are to
 * ignore it (RFC 9112 §4), HTTP/2 has none, and a service may write anything there, a secret it
 * received included. Fetch decodes it as UTF-8, so a Latin-1 phrase arrives as U+FFFD, which no
 * search for the secret matches and which a Response refuses to carry.
 */
export function answerHead(response: Response, headers: HeadersInit): ResponseInit {
  return { status: response.status, headers };
}

/**
 * The credentials a 2xx answer hands out: the values of its JSON body's `fields` (the token
 * endpoint's `access_token`), as issued and as a request will carry them (trimmed).
 */
function issuedSecrets(text: string, fields: readonly string[]): string[] {
  const body = parseJsonObject(text);
  if (body === undefined) return [];
  const values = new Set<string>();
  for (const field of fields) {
    const value = body[field];
    if (typeof value !== 'string') continue;
    for (const form of [value, trimHttpWhitespace(value)]) if (form !== '') values.add(form);
  }
  return [...values];
}

/**
 * Reads a 2xx body under `spec.maxResponseBytes` and returns a response that holds it in memory.
 * Past the cap: a ResponseTooLargeError, and the connection is dropped. When the request carried
 * secrets (the bearer token), they are scrubbed from the body too: no answer needs to echo them,
 * and whatever the caller builds from it (an error quoting the body) stays clean. The headers are
 * scrubbed of them as well, and of the credentials the answer itself hands out
 * (`spec.answerSecrets`): the caller needs the new token from the body, and from nowhere else.
 * The response carries no reason phrase (see {@link answerHead}).
 */
export async function bufferSuccess(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<Response> {
  const head = (headSecrets: readonly string[]): ResponseInit =>
    answerHead(response, headSecrets.length === 0 ? response.headers : scrubbedHeaders(response.headers, headSecrets));
  if (NULL_BODY_STATUSES.has(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, head(secrets));
  }
  const limit = spec.maxResponseBytes ?? MAX_API_RESPONSE_BYTES;
  const { bytes, truncated } = await readBounded(response, limit);
  if (truncated) {
    const requestId = requestIdFrom(response.headers, secrets);
    throw answeredBy(new ResponseTooLargeError(spec.operation, response.status, limit), requestId);
  }
  if (secrets.length === 0 && spec.answerSecrets === undefined) return new Response(bytes, head(secrets));
  const text = decodeText(bytes);
  const scrubbed = scrubSecrets(text, secrets);
  const issued = spec.answerSecrets === undefined ? [] : issuedSecrets(scrubbed, spec.answerSecrets);
  const buffered = new Response(scrubbed === text ? bytes : scrubbed, head([...secrets, ...issued]));
  answerTexts.set(buffered, scrubbed);
  return buffered;
}

/**
 * An answer as middleware sees it: read under the caps the transport reads it under, with every
 * secret the request carried (the client secret's forms, the bearer token) scrubbed from its body
 * and headers, so that a logging middleware never writes down one that a hostile service echoed.
 * A request without secrets (a signed-address PUT) gets its answer read under the caps too: a
 * middleware that logs answers must not read a storage host's endless one into memory.
 */
export async function answerForMiddleware(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<Response> {
  if (response.ok) return bufferSuccess(response, spec, secrets);
  const init = answerHead(response, new Headers(headersToRecord(response.headers, secrets)));
  if (NULL_BODY_STATUSES.has(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return new Response(null, init);
  }
  // Only the start of an error body is ever used (errorFromResponse reads no further).
  const { bytes, truncated } = await readErrorBody(response, spec);
  const scrubbed = scrubSecrets(decodeText(bytes), secrets);
  return new Response(truncated ? cutAfterSecrets(scrubbed, secrets) : scrubbed, init);
}

/** The answer's status and headers, the headers scrubbed of secrets, for `mapError` (its body was read). */
function withScrubbedHeaders(response: Response, secrets: readonly string[]): AnswerHead {
  if (secrets.length === 0) return response;
  return { status: response.status, headers: new Headers(headersToRecord(response.headers, secrets)) };
}

/**
 * Turns a non-2xx answer into the error `spec.mapError` builds (by default the PushApiError
 * subclass for its status). The body is read up to {@link MAX_ERROR_BODY_BYTES} only: the status
 * decides what happens next, and the text is detail. Secrets are removed from the raw text, from
 * every parsed field and from the headers before anything reaches the error.
 */
export async function errorFromResponse(
  response: Response,
  spec: RequestSpec,
  secrets: readonly string[],
): Promise<PushError> {
  const { bytes, truncated } = await readErrorBody(response, spec);
  const scrubbed = scrubSecrets(decodeText(bytes), secrets);
  // The cap, or the end of a body that stopped coming, may have cut through an echoed secret,
  // leaving a prefix that no search finds.
  const text = truncated ? cutAfterSecrets(scrubbed, secrets) : scrubbed;
  if (spec.mapError) return spec.mapError(withScrubbedHeaders(response, secrets), text);
  return PushApiError.fromResponse(
    response.status,
    parseErrorBody(text, secrets),
    headersToRecord(response.headers, secrets),
  );
}

// Reading response bodies with a cap. A hostile or broken service may answer with gigabytes; the
// body is read chunk by chunk, and past the cap reading stops and the connection is dropped, so
// memory stays bounded whatever the answer claims.

/**
 * Token answers: `{access_token, token_type, expires_in, scope}`. A JWT access token is a few KB;
 * 64 KiB leaves room for any real token and nothing more.
 */
export const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

/**
 * Finance answers: `{"success": true}`, or an error (read under {@link MAX_ERROR_BODY_BYTES}). A
 * publish has many in flight at once, so a success answer padded to the data API's cap would cost
 * megabytes each; 64 KiB leaves room for any field a service may add, and nothing more.
 */
export const MAX_FINANCE_RESPONSE_BYTES = 64 * 1024;

/**
 * Data API answers (an address map, `client.request`). The largest is an address map: one
 * request asks for at most ~8 KB of `filenames=` pairs, so at most ~680 names, and each gets an
 * address of at most 8 KiB (the request-line limit of common proxies, which a signed address must
 * pass): ~5.5 MiB with the names, rounded up.
 */
export const MAX_API_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Error answers: only the start is used (a code and a message, an XML `<Code>` and `<Message>`).
 * A longer error body is cut here, not refused: its status still decides what happens next.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What a capped read found: the bytes up to the cap, and whether more followed. */
export interface BoundedBody {
  bytes: Uint8Array<ArrayBuffer>;
  truncated: boolean;
}

/**
 * Reads the start of an error answer's body (up to {@link MAX_ERROR_BODY_BYTES}). The status is
 * the service's verdict and the body only detail, so a body that stops coming (it stalls past the
 * attempt's timeout, or its connection drops) ends the read with what came, counted as cut: a 400
 * stays a refusal and a 503 a pause, never "no answer" (which would leave a finance batch the
 * service refused `unknown`). The caller's abort still ends the request as an abort.
 */
function readErrorBody(response: Response, spec: RequestSpec): Promise<BoundedBody> {
  return readBounded(response, MAX_ERROR_BODY_BYTES, () => spec.call?.signal?.aborted !== true);
}

/**
 * Reads at most `limit` bytes of a response body. Past the limit, the body is cancelled, which
 * makes fetch drop the connection (a half-read HTTP/1.1 response cannot be reused). Errors while
 * reading (a reset, the attempt's timeout) propagate as thrown by the stream, unless
 * `keepPartial` says to end the read there: then what came is returned as a cut body.
 */
export async function readBounded(
  response: Response,
  limit: number,
  keepPartial?: (error: unknown) => boolean,
): Promise<BoundedBody> {
  const body = response.body;
  if (body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let truncated = false;
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        if (keepPartial?.(error) !== true) throw error;
        truncated = true;
        break;
      }
      const { done, value } = next;
      if (done) break;
      if (length + value.byteLength > limit) {
        chunks.push(value.subarray(0, limit - length));
        length = limit;
        truncated = true;
        break;
      }
      chunks.push(value);
      length += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

/** Decodes bytes as UTF-8; a character cut at the cap becomes U+FFFD instead of an exception. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
