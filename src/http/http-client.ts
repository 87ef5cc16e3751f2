import pRetry, { AbortError as StopRetrying } from 'p-retry';
import type { Dispatcher } from 'undici';
import { DEFAULTS } from '../defaults.js';
import { AbortError, PushError } from '../errors.js';
import { sendAttempt } from './attempt.js';
import type { TokenCallOptions } from './call-options.js';
import { abortErrorFrom, delay } from './delay.js';
import { createFetch, type FetchLike } from './fetch.js';
import { noHooks, redactedUrl, requestIdOf, type SafeHooks } from './hooks.js';
import {
  type BackoffOptions,
  DEFAULT_BACKOFF,
  DEFAULT_RETRY_TIMING,
  type RetryTiming,
  retryDelayUnder,
  retryTimingWith,
  shouldRetry,
  statusOf,
} from './retry.js';
import type { HttpClient, Logger, RequestSpec } from './types.js';

/** Where bearer requests get their token; implemented by TokenManager. */
export interface BearerTokenSource {
  getToken(options: TokenCallOptions & { signal?: AbortSignal }): Promise<{ accessToken: string }>;
  /** Drops the token if it is still the cached one, so that concurrent 401s cause one refresh. */
  invalidate(accessToken?: string): void | Promise<void>;
  /** The client secret's forms known so far, scrubbed from data answers too. */
  clientSecretForms?(): readonly string[];
}

export interface FetchHttpClientOptions {
  fetch?: FetchLike;
  dispatcher?: Dispatcher;
  timeoutMs: number;
  maxRetries: number;
  retryAmbiguous: boolean;
  allowInsecureHttp: boolean;
  userAgent: string;
  logger: Logger;
  /** Told of each attempt and retry. @default no hooks */
  hooks?: SafeHooks;
  maxRedirects?: number;
  backoff?: Partial<BackoffOptions>;
  /** Cap on a server's `Retry-After`. @default DEFAULTS.maxRetryAfterMs */
  maxRetryAfterMs?: number;
  /** Looked up per request, which lets the token manager and this client be built in either order. */
  tokens?: () => BearerTokenSource;
}

function isUnauthorized(error: unknown): boolean {
  return error instanceof PushError && statusOf(error) === 401;
}

/**
 * The transport: `send(spec)` turns one logical request into attempts with timeout, redirects,
 * retry with backoff and Retry-After, and the one-time token refresh on 401.
 */
export class FetchHttpClient implements HttpClient {
  readonly #fetch: FetchLike;
  readonly #options: FetchHttpClientOptions;
  readonly #backoff: BackoffOptions;
  readonly #timing: RetryTiming;
  readonly #hooks: SafeHooks;
  /** Numbers the logical requests, so that hooks can tell their attempts apart. */
  #calls = 0;

  constructor(options: FetchHttpClientOptions) {
    this.#fetch = createFetch({ fetch: options.fetch, dispatcher: options.dispatcher });
    this.#options = options;
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#timing = {
      initialDelayMs: this.#backoff.initialDelayMs,
      maxDelayMs: this.#backoff.maxDelayMs,
      maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULT_RETRY_TIMING.maxRetryAfterMs,
    };
    this.#hooks = options.hooks ?? noHooks;
  }

  async send(spec: RequestSpec): Promise<Response> {
    if (spec.signal?.aborted) throw abortErrorFrom(spec.signal);
    const retries = spec.retryPolicy === 'never' ? 0 : (spec.maxRetries ?? this.#options.maxRetries);
    const callId = spec.callId ?? this.nextCallId();
    const timing = retryTimingWith(this.#timing, spec);
    return pRetry((attempt) => this.#attempt(spec, attempt, callId), {
      retries,
      // Delays are ours (Retry-After, jitter, abortable), taken inside shouldRetry; p-retry only counts.
      minTimeout: 0,
      shouldRetry: async ({ error, attemptNumber, retriesConsumed }) => {
        if (error instanceof AbortError) return false;
        if (spec.retryRateLimited === false && statusOf(error) === 429) return false;
        if (!shouldRetry(error, spec.retryPolicy, this.#options.retryAmbiguous)) return false;
        const pushError = error as PushError;
        const delayMs = retryDelayUnder(pushError, retriesConsumed + 1, timing, this.#backoff);
        this.#options.logger.warn('push-api-client retrying', {
          operation: spec.operation,
          method: spec.method,
          path: spec.url.pathname,
          attempt: attemptNumber,
          status: statusOf(pushError),
          error: pushError.name,
          delayMs,
        });
        this.#hooks.retry({
          callId,
          operation: spec.operation,
          method: spec.method,
          url: redactedUrl(spec.url),
          attempt: attemptNumber,
          status: statusOf(pushError),
          requestId: requestIdOf(pushError),
          error: pushError.name,
          delayMs,
        });
        spec.onRetry?.({ attempt: attemptNumber, error: pushError, delayMs });
        await delay(delayMs, spec.signal);
        return true;
      },
    });
  }

  nextCallId(): number {
    this.#calls += 1;
    return this.#calls;
  }

  /**
   * One attempt, with at most one 401 refresh. The refresh is per attempt, not per request: a
   * request that refreshed and then met a retryable failure may, after its backoff, meet a token
   * that was revoked or expired meanwhile, and that token needs its own refresh. A request refused
   * with a token that is no longer the current one (another request refreshed meanwhile) first
   * re-sends with the current token, without a refresh; only a refusal of the current token
   * refreshes. A 401 right after a refresh is final, and a 401 is never retried, so each attempt
   * sends at most three times and causes at most one token request.
   */
  async #attempt(spec: RequestSpec, attempt: number, callId: number): Promise<Response> {
    if (spec.signal?.aborted) throw abortErrorFrom(spec.signal);
    const base = {
      fetch: this.#fetch,
      timeoutMs: spec.timeoutMs ?? this.#options.timeoutMs,
      userAgent: this.#options.userAgent,
      allowInsecureHttp: this.#options.allowInsecureHttp,
      maxRedirects: this.#options.maxRedirects ?? DEFAULTS.maxRedirects,
      logger: this.#options.logger,
      hooks: this.#hooks,
      callId,
      attempt,
    };
    if (spec.auth !== 'bearer') return sendAttempt(spec, base);
    const tokens = this.#options.tokens?.();
    if (!tokens) throw new PushError(`${spec.operation}: bearer auth requested but no token source is configured`);
    const send = (token: string) =>
      sendAttempt(spec, {
        ...base,
        authorization: `Bearer ${token}`,
        credentials: tokens.clientSecretForms?.() ?? [],
      });
    let token = await this.#token(tokens, spec);
    try {
      return await send(token);
    } catch (error) {
      if (!isUnauthorized(error)) throw error;
    }
    const current = await this.#token(tokens, spec);
    if (current !== token) {
      // Another request already replaced the refused token: no refresh needed for this one.
      token = current;
      try {
        return await send(token);
      } catch (error) {
        if (!isUnauthorized(error)) throw error;
      }
    }
    // A 401 means the token was revoked or expired early: refresh once and re-send, outside the retry budget.
    this.#options.logger.info('push-api-client access token rejected; refreshing and re-sending once', {
      operation: spec.operation,
      path: spec.url.pathname,
      attempt,
    });
    await tokens.invalidate(token);
    return send(await this.#token(tokens, spec));
  }

  /**
   * The token for a data request. A failure here is final for the data request: the token request
   * has had its own retries. p-retry stops at its AbortError and rethrows the error it carries
   * unchanged, so the caller sees the TokenError or ConnectionError itself.
   */
  async #token(tokens: BearerTokenSource, spec: RequestSpec): Promise<string> {
    try {
      // This client's own settings go under the call's: a client made by `withOptions` shares its
      // token manager with the original, and its token requests follow its settings all the same.
      const settings = {
        timeoutMs: this.#options.timeoutMs,
        maxRetries: this.#options.maxRetries,
        backoff: { initialDelayMs: this.#timing.initialDelayMs, maxDelayMs: this.#timing.maxDelayMs },
        maxRetryAfterMs: this.#timing.maxRetryAfterMs,
      };
      const backoff = { ...settings.backoff, ...spec.tokenOptions?.backoff };
      return (await tokens.getToken({ ...settings, ...spec.tokenOptions, backoff, signal: spec.signal })).accessToken;
    } catch (error) {
      throw new StopRetrying(error instanceof Error ? error : String(error));
    }
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'FetchHttpClient {}';
  }

  toJSON(): Record<string, unknown> {
    return { timeoutMs: this.#options.timeoutMs, maxRetries: this.#options.maxRetries };
  }
}
