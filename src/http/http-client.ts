/**
 * The transport's top layer: what a call is, and the loop that sees it through. In this order:
 * - the request lifecycle (`FetchHttpClient`): `exchange()` runs one attempt after another
 *   (attempt.ts) until `nextStep` (retry.ts) says it is done, with the bearer token
 *   (auth/token-manager.ts) added and, after a 401, refreshed once; what leaves it records whether
 *   the body was sent;
 * - what a call returns: the answer's metadata a caller may read, and the promise with
 *   `.withResponse()` (`ResponsePromise`);
 * - the call's settings as one value (`callSettings`: timeout, retries, headers, signal), checked
 *   before any request;
 * - the address of an app's resource (`appResourceUrl`).
 */

import type { Context } from '@opentelemetry/api';
import type { Dispatcher } from 'undici';
import { DEFAULTS } from '../defaults.js';
import { AbortError, ConfigurationError, MAX_RETRY_AFTER_MS, PushError, requestIdFrom, TokenError } from '../errors.js';
import { scrubSecrets, secretInName } from '../internal/text.js';
import { abortErrorFrom, delay, eitherSignal, nextTurn } from '../internal/waits.js';
import { type AttemptOptions, DirectAnswers, type Middleware, sendAttempt } from './attempt.js';
import { createFetch, isReservedHeader, noHooks, redactedUrl, requestIdOf, type SafeHooks } from './fetch.js';
import type {
  FetchLike,
  Logger,
  RequestOptions,
  ResponseMetadata,
  RetryBackoff,
  WithResponse,
} from './public-types.js';
import {
  type BackoffOptions,
  backoffUnder,
  cappedRetryAfterOf,
  DEFAULT_BACKOFF,
  DEFAULT_RETRY_TIMING,
  isBackPressure,
  type LifecycleState,
  nextStep,
  pushBackOf,
  type RetryTiming,
  retryTimingWith,
  statusOf,
  type WaitClass,
} from './retry.js';
import type { Tracing } from './tracing.js';
import type { Exchange, HttpClient, RecoveryStep, RequestSpec } from './types.js';

// ── The request lifecycle ────────────────────────────────────────────────────────────────────────
// `exchange()` and `send()`: attempts, waits and recovery steps until the request is done.

/** Where bearer requests get their token; implemented by TokenManager. */
export interface BearerTokenSource {
  getToken(options: TokenRequestOptions): Promise<{ accessToken: string }>;
  /** Drops the token if it is still the cached one, so that concurrent 401s cause one refresh. */
  invalidate(accessToken?: string): void | Promise<void>;
  /** The client secret's forms known so far, scrubbed from data answers too. */
  clientSecretForms?(): readonly string[];
  /** Like `getToken`, for a caller that may give the token up: a request nobody else waits for is then aborted. */
  prefetch?(options: TokenRequestOptions): { ready: Promise<unknown>; release(): void };
  /** The token `getToken` would answer with at once, asking nobody; undefined if it would have to ask. */
  freshToken?(options: TokenRequestOptions): string | undefined;
  /** Whether a token taken earlier is still the current one: not refused, not replaced (its lifetime may have run out). */
  stillCurrent?(options: TokenRequestOptions, accessToken: string): boolean;
}

/** The token a `ReadyBearer` holds: readable in this module only, for the first send of its request. */
let heldToken: (ready: ReadyBearer) => string;

/**
 * A bearer token a caller waited for before it announced its request (`bearerReady`). The
 * request's first send uses it while it is still the current token: asked for again at send time,
 * the token manager could be in the middle of a refresh begun meanwhile, and the announced request
 * would wait after all. The token sits in a `#` field, which `util.inspect`, `JSON.stringify` and
 * object spreads do not see.
 */
export class ReadyBearer {
  readonly #token: string;

  constructor(token: string) {
    this.#token = token;
  }

  static {
    heldToken = (ready) => ready.#token;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'ReadyBearer {}';
  }

  toJSON(): string {
    return 'ReadyBearer';
  }
}

type TokenRequestOptions = TokenCallOptions & { signal?: AbortSignal; scopes?: readonly string[] };

/** Asks about the token of the token manager's own scopes. */
const DEFAULT_SCOPES: TokenRequestOptions = {};

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
  /** Spans per request and per attempt, when `tracing: true`. @default none */
  tracing?: Tracing;
  /** Run on each attempt's first request, before credentials are added. @default none */
  middleware?: readonly Middleware[];
  /** Looked up per request, which lets the token manager and this client be built in either order. */
  tokens?: () => BearerTokenSource;
}

const NO_CALL: CallSettings = { headers: {} };

/** A failure to get the bearer token: final for the data request, whose token request had its own retries. */
class TokenUnavailable {
  constructor(readonly error: unknown) {}
}

/**
 * The request's run stopped while it waited for a token (`RequestSpec.runStopped`): it is not sent
 * (again). `refusal`: the 401 whose refresh the stop cut short, which stands as the answer.
 */
class StoppedWaitingForToken {
  constructor(readonly refusal?: unknown) {}
}

/** Whether the body of the attempt under way may have reached the service (see `Exchange`). */
interface BodyTrack {
  sent: boolean;
}

/** A token endpoint's refusal (a 4xx other than 408 and 429): asking again gets the same answer. */
function isRefusal(error: unknown): boolean {
  const status = error instanceof TokenError ? error.status : undefined;
  return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

function isUnauthorized(error: unknown): boolean {
  return error instanceof PushError && statusOf(error) === 401;
}

function asPushError(error: unknown, operation: string): PushError {
  if (error instanceof PushError) return error;
  return new PushError(`${operation} request failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

/**
 * The transport, and the only place a request is sent again. `exchange(spec)` runs one request's
 * lifecycle, in layers:
 *
 * ```
 * lifecycle loop   attempt → nextStep (retry.ts): give up | recover | wait (retry, ambiguous, rate-limited)
 *   pacing         the rate budget's turn, given back for a rate limit's wait
 *   auth           bearer token; a 401 refreshes it and re-sends once, inside the attempt
 *   attempt        timeout, redirects (attempt.ts); bounded body, error mapping (fetch.ts)
 * ```
 *
 * Every wait is announced once, by `#announce`: one log line and one `retry` hook event.
 */
export class FetchHttpClient implements HttpClient {
  readonly #fetch: FetchLike;
  readonly #options: FetchHttpClientOptions;
  readonly #backoff: BackoffOptions;
  readonly #timing: RetryTiming;
  readonly #hooks: SafeHooks;
  /** Numbers the logical requests, so that hooks can tell their attempts apart. */
  #calls = 0;
  /**
   * Where a POST may go without a replay copy of its body (attempt.ts): only through the runtime's
   * own fetch (or undici's, for a dispatcher). A fetch the caller passes may not know
   * `redirect: 'error'`, or may follow a redirect whatever the mode, so it always gets `'manual'`.
   */
  readonly #directAnswers: DirectAnswers | undefined;

  constructor(options: FetchHttpClientOptions) {
    this.#fetch = createFetch({ fetch: options.fetch, dispatcher: options.dispatcher });
    this.#directAnswers = options.fetch === undefined ? new DirectAnswers() : undefined;
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
    const result = await this.exchange(spec);
    if (result.ok) return result.response;
    throw result.error;
  }

  exchange(spec: RequestSpec): Promise<Exchange> {
    const tracing = this.#options.tracing;
    if (tracing === undefined) return this.#exchange(spec, undefined);
    return tracing.operation(
      spec,
      (parent) => this.#exchange(spec, parent),
      (result) => (result.ok ? undefined : result.error),
    );
  }

  async #exchange(spec: RequestSpec, parent: Context | undefined): Promise<Exchange> {
    const call = spec.call ?? NO_CALL;
    const { signal } = call;
    const pacing = spec.pacing;
    // The client's backoff and Retry-After cap, with the parts the call sets replaced.
    const timing = retryTimingWith(this.#timing, call);
    const state: LifecycleState & { recovered: Set<RecoveryStep> } = {
      policy: spec.retryPolicy,
      retryAmbiguous: this.#options.retryAmbiguous,
      maxRetries: call.maxRetries ?? this.#options.maxRetries,
      retriesLeft: call.maxRetries ?? this.#options.maxRetries,
      waits: 0,
      tokenFailure: false,
      recover: spec.recover ?? [],
      recovered: new Set(),
      pacing,
      backoff: backoffUnder(timing, this.#backoff),
      maxRetryAfterMs: timing.maxRetryAfterMs,
    };
    const body: BodyTrack = { sent: false };
    // Every HTTP request of this call, a 401's re-send included, for the attempt spans' resend count.
    const sends = { count: 0 };
    let earlierAmbiguous: PushError | undefined;
    /** `nextAttemptCut`: the run stopped before the attempt this answer called for (see `Exchange`). */
    const failed = (error: unknown, nextAttemptCut?: true): Exchange => ({
      ok: false,
      error: asPushError(error, spec.operation),
      bodySent: body.sent,
      earlierAmbiguous,
      ...(nextAttemptCut && { nextAttemptCut }),
    });
    if (signal?.aborted) return failed(abortErrorFrom(signal));
    this.#calls += 1;
    const callId = this.#calls;
    // The call's headers go under the operation's own, once for every attempt.
    let current: RequestSpec = { ...spec, headers: { ...call.headers, ...spec.headers } };

    /** The last attempt's failure: what a request given up at its run's stop ends with. */
    let lastError: unknown;
    for (let attempt = 1; ; attempt++) {
      body.sent = false;
      let error: unknown;
      try {
        const response = await this.#attempt(current, call, attempt, callId, body, { parent, sends });
        return { ok: true, response, earlierAmbiguous };
      } catch (caught) {
        if (caught instanceof StoppedWaitingForToken) {
          const answer = caught.refusal ?? lastError;
          if (answer !== undefined) return failed(answer, true);
          const error = new PushError(
            `${spec.operation} request not sent: its run stopped while it waited for its token`,
          );
          return { ok: false, error, bodySent: false, earlierAmbiguous, notStarted: true };
        }
        state.tokenFailure = caught instanceof TokenUnavailable;
        error = caught instanceof TokenUnavailable ? caught.error : caught;
      }
      lastError = error;
      const step = nextStep(error, state);
      if (spec.onBackPressure !== undefined && !state.tokenFailure) {
        const pushBack = pushBackOf(error, timing);
        if (pushBack !== undefined) spec.onBackPressure(pushBack);
      }
      if (pacing !== undefined && isBackPressure(error)) {
        const willRetry = step.kind === 'wait' && step.waitClass !== 'rate-limited';
        pacing.rateLimited(
          willRetry && step.kind === 'wait' ? step.delayMs : cappedRetryAfterOf(error as PushError, timing),
          willRetry,
        );
      }
      if (step.kind === 'give-up') return failed(error);
      // The run stopped: nothing of it is sent again, and the last answer is this request's outcome,
      // though not a verdict on the next request when a re-send would have had its say.
      if (spec.runStopped?.aborted) return failed(error, step.kind === 'wait' || undefined);
      if (step.kind === 'recover') {
        state.recovered.add(step.step);
        let replacement: Awaited<ReturnType<RecoveryStep['next']>>;
        try {
          replacement = await step.step.next();
        } catch (recoveryError) {
          // The refused request was not sent again. A step given up at the run's stop (its request
          // aborted) leaves the refusal as the request's answer.
          body.sent = false;
          return failed(spec.runStopped?.aborted && !signal?.aborted ? error : recoveryError);
        }
        if (replacement === undefined || spec.runStopped?.aborted) return failed(error);
        this.#options.logger.info(`push-api-client request refused; ${step.step.name}, re-sending once`, {
          operation: spec.operation,
          path: spec.url.pathname,
          attempt,
        });
        current = { ...current, ...replacement };
        if (replacement.headers !== undefined) current.headers = { ...call.headers, ...replacement.headers };
        continue;
      }
      if (step.waitClass === 'ambiguous') earlierAmbiguous ??= error as PushError;
      if (step.waitClass !== 'rate-limited') state.retriesLeft -= 1;
      state.waits += 1;
      this.#announce(spec, callId, attempt, error as PushError, step.delayMs, step.waitClass);
      try {
        let waited: boolean;
        if (step.waitClass === 'rate-limited' && pacing !== undefined) {
          pacing.release();
          waited = (await this.#wait(step.delayMs, signal, spec.runStopped)) && (await pacing.acquire(signal));
        } else {
          waited = await this.#wait(step.delayMs, signal, spec.runStopped);
        }
        if (!waited) {
          // The retry announced above never comes: say so, or the log reads as a re-send.
          this.#options.logger.info('push-api-client retry not sent: its run stopped', {
            operation: spec.operation,
            path: spec.url.pathname,
            attempt,
          });
          return failed(error, true);
        }
      } catch (waitError) {
        // Nothing was in flight during the wait: the abort ends a request whose last attempt the
        // service did not take (or an earlier ambiguous one, which `earlierAmbiguous` records).
        body.sent = false;
        return failed(waitError);
      }
    }
  }

  /**
   * The wait before a re-send: false when the request's run stopped during it (a `Retry-After` of a
   * minute must not hold a stopped run, nor its end re-send what the run no longer sends).
   */
  async #wait(ms: number, signal: AbortSignal | undefined, runStopped: AbortSignal | undefined): Promise<boolean> {
    const waiting = runStopped === undefined ? undefined : eitherSignal(signal, runStopped);
    try {
      await delay(ms, waiting?.signal ?? signal);
      return true;
    } catch (error) {
      if (signal?.aborted || !runStopped?.aborted) throw error;
      return false;
    } finally {
      waiting?.release();
    }
  }

  /** The one log line and the one hook event of a wait before a re-send. */
  #announce(
    spec: RequestSpec,
    callId: number,
    attempt: number,
    error: PushError,
    delayMs: number,
    waitClass: WaitClass,
  ): void {
    const status = statusOf(error);
    this.#options.logger.warn('push-api-client retrying', {
      operation: spec.operation,
      method: spec.method,
      path: spec.url.pathname,
      attempt,
      status,
      error: error.name,
      delayMs,
      ...(waitClass === 'rate-limited' && { rateLimited: true }),
    });
    this.#hooks.retry({
      callId,
      operation: spec.operation,
      method: spec.method,
      url: redactedUrl(spec.url),
      attempt,
      status,
      requestId: requestIdOf(error),
      error: error.name,
      delayMs,
      ...(waitClass === 'rate-limited' && { rateLimited: true as const }),
    });
  }

  /**
   * One attempt, with at most one 401 refresh. The refresh is per attempt, not per request: a
   * request that refreshed and then met a retryable failure may, after its backoff, meet a token
   * that was revoked or expired meanwhile, and that token needs its own refresh. A request refused
   * with a token that is no longer the current one (another request refreshed meanwhile) first
   * re-sends with the current token, without a refresh; only a refusal of the current token
   * refreshes. A 401 right after a refresh is final, and a 401 is never retried, so each attempt
   * sends at most three times and causes at most one token request. A 401 says the service did not
   * take the body: until a re-send leaves, the attempt's body counts as not sent.
   */
  async #attempt(
    spec: RequestSpec,
    call: CallSettings,
    attempt: number,
    callId: number,
    body: BodyTrack,
    trace: { parent: Context | undefined; sends: { count: number } },
  ): Promise<Response> {
    const tracing = this.#options.tracing;
    const sendOne = (one: RequestSpec, options: AttemptOptions): Promise<Response> => {
      const resend = trace.sends.count++;
      return tracing === undefined
        ? sendAttempt(one, options)
        : tracing.attempt(trace.parent, one, resend, (traced) => sendAttempt(traced, options));
    };
    if (call.signal?.aborted) throw abortErrorFrom(call.signal);
    const base: AttemptOptions = {
      fetch: this.#fetch,
      timeoutMs: call.timeoutMs ?? this.#options.timeoutMs,
      userAgent: this.#options.userAgent,
      allowInsecureHttp: this.#options.allowInsecureHttp,
      maxRedirects: this.#options.maxRedirects ?? DEFAULTS.maxRedirects,
      logger: this.#options.logger,
      hooks: this.#hooks,
      callId,
      attempt,
      ...(call.signal !== undefined && { signal: call.signal }),
      ...(this.#options.middleware !== undefined && { middleware: this.#options.middleware }),
      ...(this.#directAnswers !== undefined && { directAnswers: this.#directAnswers }),
    };
    const factory = spec.body;
    const tracked: RequestSpec =
      factory === undefined
        ? spec
        : {
            ...spec,
            body: (control) => {
              body.sent = true;
              return factory(control);
            },
          };
    if (spec.auth !== 'bearer') return sendOne(tracked, base);
    const tokens = this.#options.tokens?.();
    if (!tokens) throw new PushError(`${spec.operation}: bearer auth requested but no token source is configured`);
    const send = (token: string) =>
      sendOne(tracked, {
        ...base,
        authorization: `Bearer ${token}`,
        credentials: tokens.clientSecretForms?.() ?? [],
      });
    // The first attempt of a request announced once its token was at hand leaves with that token
    // while it is still the current one, even if its lifetime ran out during the announcement:
    // asked again, a refresh begun in between would hold back a request said to be leaving (a
    // checkpoint has reserved its records), and a kill then would leave them unknown, never sent.
    const held = attempt === 1 && spec.bearer !== undefined ? heldToken(spec.bearer) : undefined;
    let token =
      held !== undefined && spec.scopes === undefined && tokens.stillCurrent?.(DEFAULT_SCOPES, held)
        ? held
        : await this.#token(tokens, call, spec.scopes, spec.runStopped);
    let refused: unknown;
    try {
      return await send(token);
    } catch (error) {
      if (!isUnauthorized(error)) throw error;
      body.sent = false;
      refused = error;
    }
    // A run that stopped meanwhile sends nothing more: the 401 is this attempt's answer.
    const tokenAfter401 = async (): Promise<string> => {
      try {
        return await this.#token(tokens, call, spec.scopes, spec.runStopped);
      } catch (error) {
        throw error instanceof StoppedWaitingForToken ? new StoppedWaitingForToken(refused) : error;
      }
    };
    const current = await tokenAfter401();
    if (current !== token) {
      // Another request already replaced the refused token: no refresh needed for this one.
      token = current;
      try {
        return await send(token);
      } catch (error) {
        if (!isUnauthorized(error)) throw error;
        body.sent = false;
        refused = error;
      }
    }
    // A 401 means the token was revoked or expired early: refresh once and re-send, outside the retry budget.
    this.#options.logger.info('push-api-client access token rejected; refreshing and re-sending once', {
      operation: spec.operation,
      path: spec.url.pathname,
      attempt,
    });
    await tokens.invalidate(token);
    return send(await tokenAfter401());
  }

  async prepareBearer(call: CallSettings = NO_CALL): Promise<CallSettings> {
    const tokens = this.#options.tokens?.();
    if (!tokens) return call;
    const request = this.#tokenRequest(call, undefined);
    // A token at hand: nothing to ask for, and no turn to give (the common case of a warm client).
    if (tokens.freshToken?.(request) !== undefined) return call;
    const early = tokens.prefetch?.(request) ?? { ready: tokens.getToken(request), release: () => {} };
    const earlyBearer: EarlyBearer = { release: early.release };
    const ready = early.ready.then(
      () => undefined,
      (error: unknown) => {
        // Only a refusal is kept: the requests would meet it again. A failure that may pass (no
        // connection, a timeout, a 5xx, a 429, a secret provider that failed) is theirs to meet
        // afresh, with their own retries.
        if (isRefusal(error)) earlyBearer.failure = new TokenUnavailable(error);
      },
    );
    // A cached token settles in microtasks and wins; otherwise the turn lets the token request reach
    // the socket before the caller's synchronous work, so that its round trip overlaps that work.
    const turn = nextTurn();
    if (turn) await Promise.race([ready, turn]);
    return { ...call, earlyBearer };
  }

  async bearerReady(call: CallSettings = NO_CALL, runStopped?: AbortSignal): Promise<ReadyBearer | undefined> {
    const tokens = this.#options.tokens?.();
    if (!tokens) return undefined;
    if (call.signal?.aborted) throw abortErrorFrom(call.signal);
    // The common case, a token at hand: no waiting, and nothing to link to the run's stop.
    const fresh = call.earlyBearer?.failure === undefined ? tokens.freshToken?.(DEFAULT_SCOPES) : undefined;
    if (fresh !== undefined) return new ReadyBearer(fresh);
    try {
      return new ReadyBearer(await this.#token(tokens, call, undefined, runStopped));
    } catch (error) {
      if (error instanceof StoppedWaitingForToken) throw new AbortError('the run stopped while waiting for a token');
      throw asPushError(error instanceof TokenUnavailable ? error.error : error, 'token');
    }
  }

  /**
   * The token for a data request, with the call's timeout, retries and headers; a failure is final
   * (`TokenUnavailable`). A stop of the request's run ends the wait (`StoppedWaitingForToken`), and
   * a token request it alone waited for is given up, as for the caller's abort.
   */
  async #token(
    tokens: BearerTokenSource,
    call: CallSettings,
    scopes: readonly string[] | undefined,
    runStopped: AbortSignal | undefined,
  ): Promise<string> {
    const request = this.#tokenRequest(call, scopes);
    const early = call.earlyBearer;
    if (scopes === undefined && early?.failure !== undefined) {
      // The refusal stands until a token came by other means (another caller's request): then it is stale.
      if (tokens.freshToken?.(request) === undefined) throw early.failure;
      early.failure = undefined;
    }
    const waiting = runStopped === undefined ? undefined : eitherSignal(call.signal, runStopped);
    try {
      return (await tokens.getToken(waiting ? { ...request, signal: waiting.signal } : request)).accessToken;
    } catch (error) {
      if (runStopped?.aborted && !call.signal?.aborted) throw new StoppedWaitingForToken();
      throw new TokenUnavailable(error);
    } finally {
      waiting?.release();
    }
  }

  /**
   * What the token manager is asked with. This client's own settings go under the call's: a client
   * made by `withOptions` shares its token manager with the original, and its token requests
   * follow its settings all the same.
   */
  #tokenRequest(call: CallSettings, scopes: readonly string[] | undefined): TokenRequestOptions {
    const settings = {
      timeoutMs: this.#options.timeoutMs,
      maxRetries: this.#options.maxRetries,
      backoff: { initialDelayMs: this.#timing.initialDelayMs, maxDelayMs: this.#timing.maxDelayMs },
      maxRetryAfterMs: this.#timing.maxRetryAfterMs,
    };
    const own = tokenOptionsOf(call);
    const backoff = { ...settings.backoff, ...own.backoff };
    return { ...settings, ...own, backoff, signal: call.signal, ...(scopes !== undefined && { scopes }) };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return 'FetchHttpClient {}';
  }

  toJSON(): Record<string, unknown> {
    return { timeoutMs: this.#options.timeoutMs, maxRetries: this.#options.maxRetries };
  }
}

// ── What a call returns ──────────────────────────────────────────────────────────────────────────
// The answer's metadata a caller may read, and the promise that hands it over on `.withResponse()`.

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

// ── The call's settings ──────────────────────────────────────────────────────────────────────────
// What one operation may set over the client's settings, checked before any request, and the
// headers the client adds to every request to the service (`defaultHeaders`).

/** RFC 9110 token characters, for header names. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks caller headers and returns them with lower-case names. */
export function checkHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  option: string,
): Record<string, string> {
  if (headers === undefined) return {};
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    throw new ConfigurationError(`${option} must be an object of header names and string values`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new ConfigurationError(`${option}: "${name}" is not a valid header name`);
    if (isReservedHeader(lower)) {
      throw new ConfigurationError(
        `${option}: ${name} cannot be set; the client sets it (credentials and body length are never overridden)`,
      );
    }
    // The value is not quoted: it may be a credential for a gateway.
    if (typeof value !== 'string' || /[\r\n\0]/.test(value) || /[^\x20-\x7e\t\x80-\xff]/.test(value)) {
      throw new ConfigurationError(`${option}: the value of ${name} must be a string without line breaks or NUL`);
    }
    out[lower] = value;
  }
  return out;
}

/**
 * The longest timeout timers take: 2^31 - 1 ms, about 24.8 days. Past it, `setTimeout` fires at
 * once (Node warns with TimeoutOverflowWarning), so every attempt would time out immediately.
 */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Checks a numeric option: a finite number (an integer when asked) from `min` to `max`. */
export function checkNumber(
  value: number | undefined,
  option: string,
  integer: boolean,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): void {
  if (value === undefined) return;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new ConfigurationError(`${option} must be ${integer ? 'an integer' : 'a number'} ${range}`);
  }
}

/** Checks `backoff` and `maxRetryAfterMs` (client-wide or per call); `prefix` starts each message. */
export function checkRetryTiming(options: Pick<RequestOptions, 'backoff' | 'maxRetryAfterMs'>, prefix: string): void {
  const { backoff } = options;
  if (backoff !== undefined && (backoff === null || typeof backoff !== 'object' || Array.isArray(backoff))) {
    throw new ConfigurationError(
      `${prefix}backoff must be an object such as { initialDelayMs: 500, maxDelayMs: 8000 }`,
    );
  }
  checkNumber(backoff?.initialDelayMs, `${prefix}backoff.initialDelayMs`, false, 0, MAX_TIMEOUT_MS);
  checkNumber(backoff?.maxDelayMs, `${prefix}backoff.maxDelayMs`, false, 0, MAX_TIMEOUT_MS);
  checkNumber(options.maxRetryAfterMs, `${prefix}maxRetryAfterMs`, false, 0, MAX_RETRY_AFTER_MS);
}

/** What a call's options add to each of its request specs. */
export interface CallSettings {
  timeoutMs?: number;
  maxRetries?: number;
  backoff?: RetryBackoff;
  maxRetryAfterMs?: number;
  /** The client's default headers under the call's, ready to go under the operation's own. */
  headers: Record<string, string>;
  signal?: AbortSignal;
  /**
   * The token asked for as the operation started (`HttpClient.prepareBearer`). Once the token
   * endpoint has refused that request, the operation's requests meet the same refusal instead of
   * asking it (and a secret provider) all over again, unless a token came by other means since.
   */
  earlyBearer?: EarlyBearer;
}

/** The token asked for as an operation started. */
interface EarlyBearer {
  /** Its refusal, once refused (a 4xx other than 408 and 429). */
  failure?: unknown;
  /** The operation is over: a token request still on its way that nobody else waits for is aborted. */
  release(): void;
}

/** What a call's options say for the token request one of its requests may have to make first. */
type TokenCallOptions = Pick<RequestOptions, 'timeoutMs' | 'maxRetries' | 'headers' | 'backoff' | 'maxRetryAfterMs'>;

/** The call's timeout, retries and headers, for the token request it causes (its signal goes with each request). */
function tokenOptionsOf(call: CallSettings): TokenCallOptions {
  return {
    headers: call.headers,
    ...(call.timeoutMs !== undefined && { timeoutMs: call.timeoutMs }),
    ...(call.maxRetries !== undefined && { maxRetries: call.maxRetries }),
    ...retryTimingOf(call),
  };
}

/** The call's retry timing, for each request spec of the call (`RequestSpec.retryTiming`). */
function retryTimingOf(call: CallSettings): Pick<CallSettings, 'backoff' | 'maxRetryAfterMs'> {
  return {
    ...(call.backoff !== undefined && { backoff: call.backoff }),
    ...(call.maxRetryAfterMs !== undefined && { maxRetryAfterMs: call.maxRetryAfterMs }),
  };
}

/**
 * The call's timeout and retries alone: for a request that is not the service's (the PUT to a
 * signed address, where the caller's headers must not go) and keeps the call's signal.
 */
export function limitsOnly(call: CallSettings): CallSettings {
  return {
    headers: {},
    ...(call.timeoutMs !== undefined && { timeoutMs: call.timeoutMs }),
    ...(call.maxRetries !== undefined && { maxRetries: call.maxRetries }),
    ...retryTimingOf(call),
    ...(call.signal !== undefined && { signal: call.signal }),
  };
}

/** The call without its signal: for a request shared by several callers (a token refresh), which no single one may abort. */
export function unsignalled(call: CallSettings): CallSettings {
  const { signal: _signal, ...rest } = call;
  return rest;
}

/** Checks one call's options; throws ConfigurationError before any request. */
export function callSettings(options: RequestOptions, defaultHeaders: Readonly<Record<string, string>>): CallSettings {
  checkNumber(options.timeoutMs, 'timeoutMs', false, 1, MAX_TIMEOUT_MS);
  checkNumber(options.maxRetries, 'maxRetries', true, 0);
  checkRetryTiming(options, '');
  return {
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
    ...(options.backoff !== undefined && { backoff: { ...options.backoff } }),
    ...(options.maxRetryAfterMs !== undefined && { maxRetryAfterMs: options.maxRetryAfterMs }),
    headers: { ...defaultHeaders, ...checkHeaders(options.headers, 'headers') },
    ...(options.signal !== undefined && { signal: options.signal }),
  };
}

// ── An app's resource address ────────────────────────────────────────────────────────────────────
// Where an app's upload addresses and finance records are, with the app id unable to change the path.

/** The per-application resources of the data API (SPEC.md): upload addresses and finance records. */
type AppResource = 'upload' | 'finance';

/**
 * `{base_url}/services/push/v1/customer/apps/{appId}/{resource}`. The app id is one percent-encoded
 * path segment, so `../x` or `a/b?c` can never change the path; `.` and `..` are refused because URL
 * parsers resolve them (even encoded as `%2E`) as dot segments. A base path is kept; its query and
 * fragment are dropped, since they would otherwise end up before the app path.
 */
export function appResourceUrl(baseUrl: URL, appId: string, resource: AppResource): URL {
  if (typeof appId !== 'string' || appId === '' || appId === '.' || appId === '..') {
    throw new ConfigurationError(`appId must be a non-empty application id, got ${JSON.stringify(appId)}`);
  }
  let segment: string;
  try {
    segment = encodeURIComponent(appId);
  } catch (cause) {
    throw new ConfigurationError('appId must be well-formed Unicode (it contains an unpaired surrogate)', { cause });
  }
  const base = new URL(baseUrl.href);
  base.search = '';
  base.hash = '';
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL(`services/push/v1/customer/apps/${segment}/${resource}`, base);
}
