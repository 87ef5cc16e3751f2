/**
 * The token endpoint's answer as middleware sees it: the tokens it hands out replaced by markers,
 * so that a middleware that logs answers never writes down a live access token. The transport
 * puts the real values back in whatever the middleware returns: the answer it was given, a clone,
 * or a new Response built from its body.
 */
import { ResponseTooLargeError } from '../errors.js';
import { parseJsonObject } from '../internal/json.js';
import { scrubSecrets } from '../internal/redact.js';
import { decodeText, readBounded } from './read-body.js';
import { headersToRecord } from './response-body.js';

/** The fields of an OAuth token answer that are credentials. */
export const TOKEN_ANSWER_SECRETS: readonly string[] = ['access_token', 'refresh_token', 'id_token'];

/** Conceals the secrets of one attempt's answer from its middleware, and restores them after. */
export class ConcealedAnswer {
  readonly #fields: readonly string[];
  readonly #operation: string;
  readonly #maxBytes: number;
  /** Marker to real value: a marker is random per answer, so no service can forge one. */
  readonly #markers = new Map<string, string>();
  readonly #real = new WeakMap<Response, Response>();

  constructor(fields: readonly string[], operation: string, maxBytes: number) {
    this.#fields = fields;
    this.#operation = operation;
    this.#maxBytes = maxBytes;
  }

  /** The answer with each secret field replaced by a marker; the answer given is already in memory. */
  async conceal(response: Response): Promise<Response> {
    if (!response.ok) return response;
    const text = await response.text();
    const init = { status: response.status, statusText: response.statusText, headers: response.headers };
    const real = new Response(text, init);
    const body = parseJsonObject(text);
    const values: string[] = [];
    if (body !== undefined) {
      for (const field of this.#fields) {
        const value = body[field];
        if (typeof value !== 'string' || value === '') continue;
        const marker = `concealed-${field.replace(/_/g, '-')}-${crypto.randomUUID()}`;
        this.#markers.set(marker, value);
        values.push(value);
        body[field] = marker;
      }
    }
    if (values.length === 0) return real;
    // A hostile endpoint may echo the token in a header too.
    const headers = new Headers(headersToRecord(response.headers, values));
    headers.delete('content-length');
    const shown = new Response(scrubSecrets(JSON.stringify(body), values), { ...init, headers });
    this.#real.set(shown, real);
    return shown;
  }

  /** What the middleware returned, with the real values back in place of the markers. */
  async restore(response: Response): Promise<Response> {
    if (this.#markers.size === 0) return response;
    const real = this.#real.get(response);
    if (real !== undefined) return real;
    if (!response.ok) return response;
    const { bytes, truncated } = await readBounded(response, this.#maxBytes);
    if (truncated) throw new ResponseTooLargeError(this.#operation, response.status, this.#maxBytes);
    let text = decodeText(bytes);
    for (const [marker, value] of this.#markers) {
      // Inside a JSON string: the value goes back escaped as JSON would write it.
      text = text.split(marker).join(JSON.stringify(value).slice(1, -1));
    }
    const init = { status: response.status, statusText: response.statusText, headers: response.headers };
    return new Response(text, init);
  }
}
