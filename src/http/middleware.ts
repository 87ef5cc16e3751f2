/**
 * Client-wide middleware: functions that see each attempt's first request, may replace it, and
 * hand it on. Credentials are added after the last one has run, so no middleware ever sees the
 * client secret or the bearer token; the transport's own rules apply to what comes out.
 */
import { ConnectionError, PushError, ResponseTooLargeError } from '../errors.js';
import { parseJsonObject } from '../internal/json.js';
import { scrubSecrets } from '../internal/redact.js';
import { onAbort } from '../internal/waits.js';
import { isReservedHeader } from './call-options.js';
import type { FetchLike } from './fetch.js';
import { answerHead, decodeText, headersToRecord, readBounded } from './response-body.js';

/** The public name of an operation, as middleware sees it. */
export type MiddlewareOperation = 'token' | 'uploadUrls' | 'upload' | 'finance' | 'request';

/** What a middleware knows of the request it is given. */
export interface MiddlewareContext {
  /** The operation the request serves. */
  operation: MiddlewareOperation;
  /** The attempt of this request, from 1: a re-send after a retryable failure counts one more. */
  attempt: number;
}

/**
 * A middleware: returns the answer of `next(request)`, for this request or a replacement (with a
 * header added, say). It may also answer without calling `next`.
 */
export type Middleware = (
  request: Request,
  next: (request: Request) => Promise<Response>,
  context: MiddlewareContext,
) => Promise<Response>;

const PUBLIC_NAMES: Readonly<Record<string, MiddlewareOperation>> = {
  token: 'token',
  'upload-urls': 'uploadUrls',
  upload: 'upload',
  finance: 'finance',
  request: 'request',
};

/** The public name of an internal operation name. */
export function middlewareOperation(operation: string): MiddlewareOperation {
  return PUBLIC_NAMES[operation] ?? 'request';
}

/** What the transport adds after the middleware: never shown to it. */
export interface Credentials {
  /** Headers such as `authorization` (Bearer, or Basic with the client secret). */
  headers: Record<string, string>;
  /** Form fields appended to a form body (`client_id`, `client_secret`). */
  form: Record<string, string>;
}

export interface MiddlewareSend {
  fetch: FetchLike;
  middleware: readonly Middleware[];
  context: MiddlewareContext;
  /** The transport's own request, without credentials. */
  url: URL;
  init: RequestInit & { duplex?: 'half' };
  credentials: Credentials;
  /**
   * The request carries the client secret: its URL must stay exactly the transport's, so that the
   * secret goes to the token endpoint the client was given and to no other path of that host.
   */
  keepUrl: boolean;
  /** Told of the headers that go on, without credentials, so that redirect hops carry them too. */
  onHeaders: (headers: Record<string, string>) => void;
  /**
   * The answer as the middleware may see it: with every secret the request carried scrubbed, so
   * that a logging middleware never writes down one a hostile service echoed.
   */
  answer: (response: Response) => Promise<Response>;
  /** Credentials the answer hands out (a new token), hidden from middleware and restored after it. */
  conceal?: ConcealedAnswer;
}

/**
 * A header the transport owns (`headers` refuses them from callers too) that the middleware set or
 * changed: a wrong length or framing makes fetch refuse the request, or the service wait for bytes
 * that never come, and neither is a network failure that may have sent it. Authorization is not
 * among them: the credentials replace it.
 */
function changedOwnedHeader(chosen: Headers, transport: RequestInit['headers']): string | undefined {
  const original = new Headers(transport);
  for (const [name] of chosen) {
    if (name === 'authorization' || name === 'proxy-authorization' || !isReservedHeader(name)) continue;
    if (chosen.get(name) !== original.get(name)) return name;
  }
  return undefined;
}

/** Form fields appended to a urlencoded body. */
export function withForm(body: string, form: Record<string, string>): string {
  const params = new URLSearchParams(body);
  for (const [name, value] of Object.entries(form)) params.set(name, value);
  return params.toString();
}

/**
 * Runs the chain, then sends what comes out of it with the credentials added. The request must
 * stay on its origin and method: the transport checked those, and credentials go only there.
 */
export async function sendThroughMiddleware(options: MiddlewareSend): Promise<Response> {
  const { url, init, credentials } = options;
  const operation = options.context.operation;
  const streamed = init.duplex === 'half';
  const first = new Request(url, init);
  let fetched = false;
  let sending = false;
  let settled = false;
  /**
   * What the send itself threw (a refused connection, an answer past its cap): classified by the
   * transport as it is. Anything else thrown once the request left is the middleware's own.
   */
  const sendErrors = new WeakSet<object>();
  /**
   * An error answer (4xx, 5xx) as the transport reads it, a copy kept before any middleware reads
   * it: its status is the service's verdict, so an attempt that ends (its timeout) while the body or
   * the middleware is still on its way ends with that answer, never as "no answer".
   */
  let refusal: Promise<Response> | undefined;
  const last = async (request: Request): Promise<Response> => {
    // A `next` kept and called after the attempt ended would send, credentials added, a request
    // that no retry rule, report or abort accounts for.
    if (settled) throw new PushError(`middleware called next after the ${operation} request had settled; not sent`);
    // One send per attempt: the first may have been taken by the service already (a finance POST's
    // batch stored), and a second would duplicate it outside the retry rules that decide when a
    // request may go again. The SDK's own retries run the middleware afresh, numbered by `attempt`.
    if (sending) throw new PushError(`middleware called next twice for one ${operation} attempt; not sent again`);
    const target = new URL(request.url);
    if (target.origin !== url.origin) {
      throw new PushError(`middleware sent the ${operation} request to another origin; not sent`);
    }
    if (options.keepUrl && target.href !== url.href) {
      throw new PushError(
        `middleware changed the ${operation} request's URL, which carries the client secret; not sent`,
      );
    }
    if (request.method !== init.method) {
      throw new PushError(`middleware changed the ${operation} request's method; not sent`);
    }
    const owned = changedOwnedHeader(request.headers, init.headers);
    if (owned !== undefined) {
      throw new PushError(
        `middleware set the ${owned} header of the ${operation} request, which the transport owns; not sent`,
      );
    }
    // Set before the first await, so that two calls made together cannot both pass.
    sending = true;
    const headers = new Headers(request.headers);
    options.onHeaders(Object.fromEntries(headers));
    for (const [name, value] of Object.entries(credentials.headers)) headers.set(name, value);
    let body: RequestInit['body'] = null;
    if (Object.keys(credentials.form).length > 0) body = withForm(await request.text(), credentials.form);
    else if (request.body !== null) body = streamed ? request.body : await request.arrayBuffer();
    const sent: RequestInit & { duplex?: 'half' } = { ...init, headers, body };
    if (body instanceof ReadableStream) sent.duplex = 'half';
    else delete sent.duplex;
    fetched = true;
    try {
      const response = await options.fetch(target, sent);
      const reading = options.answer(response);
      // Registered before the middleware's own reaction: the copy is taken before it reads the body.
      if (response.status >= 400) refusal = reading.then((answer) => answer.clone());
      const answer = await reading;
      return options.conceal === undefined ? answer : await options.conceal.conceal(answer);
    } catch (error) {
      if (error instanceof Object) sendErrors.add(error);
      throw error;
    }
  };
  const run = (index: number, request: Request): Promise<Response> => {
    const middleware = options.middleware[index];
    if (middleware === undefined) return last(request);
    return Promise.resolve(middleware(request, (next) => run(index + 1, next), options.context)).then((response) => {
      if (!(response instanceof Response)) {
        throw new PushError(`a middleware of the ${operation} request returned no Response`);
      }
      return response;
    });
  };
  // A middleware that throws before anything was sent leaves nothing for the service to have taken:
  // its error is final, never a network failure that a retry or an "outcome unknown" would follow.
  const chain = async (): Promise<Response> => {
    try {
      const response = await run(0, first);
      return options.conceal === undefined ? response : await options.conceal.restore(response);
    } catch (error) {
      const detail = error instanceof Error ? `: ${error.message}` : '';
      // An error of the middleware's own (a second `next` refused, one it built, its audit call
      // refused, one quoting the answer) after the request left says nothing of whether the
      // service took it, whatever code or words it carries: that is unknown, never "failed", or a
      // finance batch stored once would be reported failed and published again.
      if (fetched && !sendErrors.has(error as object) && !init.signal?.aborted) {
        throw new ConnectionError(
          `a middleware of the ${operation} request failed after sending it, so the service may have taken it${detail}`,
          { requestMaybeSent: true, cause: error },
        );
      }
      if (fetched || error instanceof PushError || init.signal?.aborted) throw error;
      throw new PushError(`a middleware of the ${operation} request failed before sending it${detail}`, {
        cause: error,
      });
    } finally {
      settled = true;
    }
  };
  // A middleware that never settles still ends with the attempt's timeout or the caller's abort,
  // rejected with the signal's reason as fetch would be, so that the error is mapped the same way.
  const signal = init.signal;
  if (!signal) return chain();
  if (signal.aborted) throw signal.reason;
  return new Promise<Response>((resolve, reject) => {
    const stop = onAbort(signal, () => {
      settled = true;
      // The read of an error answer ends with the abort, with what came of it (or, for the
      // caller's abort, with the abort).
      if (refusal === undefined) reject(signal.reason);
      else refusal.then(resolve, () => reject(signal.reason));
    });
    chain().then(
      (response) => {
        stop();
        resolve(response);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}

// The token endpoint's answer as middleware sees it: the tokens it hands out replaced by markers,
// so that a middleware that logs answers never writes down a live access token. The transport
// puts the real values back in whatever the middleware returns: the answer it was given, a clone,
// or a new Response built from its body.

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
    const init = answerHead(response, response.headers);
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
    const shown = new Response(scrubSecrets(JSON.stringify(body), values), answerHead(response, headers));
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
    return new Response(text, answerHead(response, response.headers));
  }
}
