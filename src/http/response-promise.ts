import { requestIdFrom } from '../errors.js';
import { scrubSecrets, secretInName } from '../internal/redact.js';
import type { ResponseMetadata, WithResponse } from './public-types.js';

/**
 * What a caller may read of an answer: its status, a copy of its headers, and its request id. A
 * hostile service may echo the client secret in any header: `secrets` are scrubbed from each value,
 * and a header whose name holds one is left out.
 */
export function responseMetadataOf(response: Response, secrets: readonly string[] = []): ResponseMetadata {
  const headers = new Headers();
  const holdsSecret = secretInName(secrets);
  for (const [name, value] of response.headers) {
    if (secrets.length === 0) headers.append(name, value);
    else if (!holdsSecret(name)) headers.append(name, scrubSecrets(value, secrets));
  }
  return { status: response.status, headers, requestId: requestIdFrom(response.headers, secrets) };
}

/**
 * The promise of a single-request method: awaiting it gives the data, and `.withResponse()` gives
 * the data with the answer that carried it. Both come from the same call, which sends once. The
 * data is derived only when the promise itself is awaited (or `then`ned), so that a caller who only
 * uses `.withResponse()` leaves no second rejection unhandled.
 */
export class ResponsePromise<T, R extends ResponseMetadata | null = ResponseMetadata> extends Promise<T> {
  readonly #source: Promise<WithResponse<T, R>>;
  #data: Promise<T> | undefined;

  // `then` on a ResponsePromise makes a plain Promise: a derived promise has no response of its own.
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  constructor(source: Promise<WithResponse<T, R>>) {
    super((resolve) => resolve(undefined as T));
    this.#source = source;
  }

  /** The data and the answer that carried it (`response` is `null` when no request was sent). Never sends again. */
  withResponse(): Promise<WithResponse<T, R>> {
    return this.#source;
  }

  #dataPromise(): Promise<T> {
    this.#data ??= this.#source.then((result) => result.data);
    return this.#data;
  }

  // biome-ignore lint/suspicious/noThenProperty: this class is a promise; `then` derives the data lazily.
  override then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#dataPromise().then(onfulfilled, onrejected);
  }

  override catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#dataPromise().catch(onrejected);
  }

  override finally(onfinally?: (() => void) | null): Promise<T> {
    return this.#dataPromise().finally(onfinally);
  }
}
