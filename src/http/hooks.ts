/**
 * Hooks: typed callbacks the client calls as its requests go, for metrics and tracing. Events say
 * what happened (operation, method, address without its query, attempt, status, duration, the
 * server's request id, the retry delay) and never carry a header value or a body, so nothing a
 * hook does can leak a token, a secret or a record.
 */

import { ignoreRejection } from '../internal/logger.js';
import type { PushClientHooks } from './public-types.js';

/** Hooks with every callback present and guarded: a hook can never fail a request. */
export type SafeHooks = Required<PushClientHooks>;

const noop = () => {};

/** No hooks: what internal parts get when the client was built without any. */
export const noHooks: SafeHooks = {
  request: noop,
  response: noop,
  retry: noop,
  tokenRefresh: noop,
  concurrency: noop,
};

/** Whether a hook listens: an event nobody hears need not be built. */
export function listens(hooks: SafeHooks, name: keyof SafeHooks): boolean {
  return hooks[name] !== noop;
}

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
    concurrency: guard('concurrency'),
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
