/**
 * Hooks: typed callbacks the client calls as its requests go, for metrics and tracing. Events say
 * what happened (operation, method, address without its query, attempt, status, duration, the
 * server's request id, the retry delay) and never carry a header value or a body, so nothing a
 * hook does can leak a token, a secret or a record.
 */

import { ignoreRejection } from '../internal/ignore-rejection.js';

/** What every request event carries. */
export interface HookRequestInfo {
  /**
   * Identifies one logical request across its attempts: every `request`, `response` and `retry`
   * event of that request has the same `callId` (unique within the client).
   */
  callId: number;
  /** `token`, `upload-urls`, `upload` or `finance`. */
  operation: string;
  method: string;
  /** Origin and path; the query (which holds signed addresses' signatures) is left out. */
  url: string;
  /** Starts at 1; a re-send after a refused token stays in its attempt. */
  attempt: number;
}

/** An attempt is about to be sent. */
export type RequestHookEvent = HookRequestInfo;

/** An attempt ended: answered (any status), or failed without an answer. */
export interface ResponseHookEvent extends HookRequestInfo {
  /** HTTP status of the answer; undefined when none came (connection failed, timeout, abort). */
  status: number | undefined;
  /** From the start of the attempt to the end of its response body, in milliseconds. */
  durationMs: number;
  /** The server's `x-request-id`, when it sent one. */
  requestId: string | undefined;
  /** Name of the error the attempt ended with (`RateLimitError`, `TimeoutError`...); undefined on success. */
  error: string | undefined;
}

/** A failed attempt is sent again after `delayMs`. */
export interface RetryHookEvent extends HookRequestInfo {
  /** The failed attempt's status; undefined when no answer came. */
  status: number | undefined;
  requestId: string | undefined;
  error: string;
  /** How long the client waits before the next attempt (backoff or `Retry-After`). */
  delayMs: number;
}

/** A new access token was requested from the token endpoint (not one served from the cache or store). */
export interface TokenRefreshHookEvent {
  operation: 'token';
  /**
   * Why: `initial` (none cached yet), `expiring` (the cached one reached its refresh point),
   * `rejected` (the service refused it with a 401), or `forced` (`getToken({ forceRefresh: true })`).
   */
  reason: 'initial' | 'expiring' | 'rejected' | 'forced';
  scopes: string[];
  durationMs: number;
  /** When the new token expires; undefined when the refresh failed. */
  expiresAt: Date | undefined;
  /** Name of the error the refresh failed with; undefined on success. */
  error: string | undefined;
}

/**
 * Callbacks for the client's request lifecycle. Each is called synchronously, in the async
 * context of the call that caused it, with an event object of its own (changing it changes no
 * other hook's event). One that throws, or returns a promise that rejects, is logged as a warning
 * and ignored; the client does not wait for a returned promise.
 *
 * @example
 * ```ts
 * const client = new PushClient({
 *   hooks: {
 *     response: (event) => console.log(event.operation, event.status, event.durationMs, event.requestId),
 *     retry: (event) => console.warn(`${event.operation} retried in ${event.delayMs} ms (${event.error})`),
 *   },
 * });
 * ```
 */
export interface PushClientHooks {
  /** Before each attempt is sent (token, upload addresses, upload PUT, finance batch). */
  request?: ((event: RequestHookEvent) => void) | undefined;
  /** When an attempt ends: with the status the service answered, or the error when none came. */
  response?: ((event: ResponseHookEvent) => void) | undefined;
  /** When a failed attempt will be sent again, with the delay before it. */
  retry?: ((event: RetryHookEvent) => void) | undefined;
  /** When the client asks for a new access token, and why. */
  tokenRefresh?: ((event: TokenRefreshHookEvent) => void) | undefined;
}

/** Hooks with every callback present and guarded: a hook can never fail a request. */
export type SafeHooks = Required<PushClientHooks>;

const noop = () => {};

/** No hooks: what internal parts get when the client was built without any. */
export const noHooks: SafeHooks = { request: noop, response: noop, retry: noop, tokenRefresh: noop };

/** Guards each given hook; `warn` hears of one that threw or rejected. */
export function safeHooks(
  hooks: PushClientHooks | undefined,
  warn: (message: string, fields: Record<string, unknown>) => void,
): SafeHooks {
  if (!hooks) return noHooks;
  const guard = <E extends object>(name: keyof PushClientHooks): ((event: E) => void) => {
    const hook = hooks[name] as ((event: E) => unknown) | undefined;
    if (typeof hook !== 'function') return noop;
    const ignored = (error: unknown) =>
      warn(`push-api-client ${name} hook threw; ignored`, {
        error: error instanceof Error ? error.message : String(error),
      });
    return (event) => {
      try {
        // A copy: the client builds later events from this one, and a hook may write to it.
        ignoreRejection(hook.call(hooks, { ...event }), ignored);
      } catch (error) {
        ignored(error);
      }
    };
  };
  return {
    request: guard('request'),
    response: guard('response'),
    retry: guard('retry'),
    tokenRefresh: guard('tokenRefresh'),
  };
}

/** The address as hooks and log lines show it: origin and path, never the query or credentials. */
export function redactedUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The server's request id an error carries, when the service answered. */
export function requestIdOf(error: unknown): string | undefined {
  const id = (error as { requestId?: unknown } | null)?.requestId;
  return typeof id === 'string' ? id : undefined;
}
