/**
 * Whether a token refresh ends with the call that started it. On Cloudflare Workers a fetch and a
 * timer belong to the request whose handler started them, and stop when that request has been
 * answered: a refresh started by one request of a `PushClient` kept in module scope, and given up
 * by it, would never settle for another request waiting for it, which would then wait forever.
 * So in the build for workers and edge runtimes a refresh whose starter leaves before it ends is
 * handed over: the callers still waiting start a new one, in their own request. A starter that
 * leaves without saying so (no signal) cannot be seen: a caller waits for a refresh another call
 * started for at most its own `timeoutMs`, on a timer of its own request, then starts its own.
 */
export const REFRESH_ENDS_WITH_ITS_STARTER = true;
