/**
 * Every default value of the SDK core, in one place. docs/configuration.md's options table is
 * built from this file; change both together.
 */

/** Environment variables read when the matching option is not given. */
export const ENV_VARS = {
  clientId: 'PUSH_CLIENT_ID',
  clientSecret: 'PUSH_CLIENT_SECRET',
  authUrl: 'PUSH_AUTH_URL',
  baseUrl: 'PUSH_BASE_URL',
  scopeBase: 'PUSH_SCOPE_BASE',
  logLevel: 'PUSH_LOG',
  allowInsecureHttp: 'PUSH_ALLOW_INSECURE_HTTP',
} as const;

export const DEFAULTS = {
  /** Per attempt, including reading the response body. */
  timeoutMs: 30_000,
  /** Re-sends after the first attempt. A 401 refresh is not counted. */
  maxRetries: 3,
  /** First backoff delay (`backoff.initialDelayMs`); doubles per retry, with jitter, up to `retryMaxDelayMs`. */
  retryInitialDelayMs: 500,
  /** Longest backoff delay (`backoff.maxDelayMs`). */
  retryMaxDelayMs: 8_000,
  /**
   * Longest wait a server's `Retry-After` can ask for before a re-send (`maxRetryAfterMs`); a longer
   * one is waited this long. Also the most the option may be set to: `Retry-After` is parsed with
   * this cap (`MAX_RETRY_AFTER_MS`), so that a hostile or broken service cannot stall a client.
   */
  maxRetryAfterMs: 60_000,
  /** Jitter: each backoff delay is scaled by a random factor in [1 - jitter, 1]. */
  retryJitter: 0.25,
  /** Redirects followed per attempt before giving up. */
  maxRedirects: 5,
  /** The spec puts client_id and client_secret in the form body. */
  tokenAuthMethod: 'client_secret_post',
  /** A token is refreshed min(60 s, 10% of its lifetime) before it expires. */
  earlyRefreshMaxMs: 60_000,
  earlyRefreshFraction: 0.1,
  /** Scope requested when `scopes` is not given: `${scopeBase}/connector.write`. */
  scopeSuffix: '/connector.write',
  /** Path of the token operation under `authUrl` (SPEC.md, endpoint 1). */
  tokenPath: '/oauth2/token',
  retryAmbiguous: false,
  allowInsecureHttp: false,
  dangerouslyAllowBrowser: false,
} as const;

/** Finance publisher defaults (`publish`, `publishBatch`); docs/publishing.md mirrors them. */
export const FINANCE_DEFAULTS = {
  /** SPEC.md, Limits: at most 1000 records per finance request. */
  maxBatchSize: 1000,
  batchSize: 1000,
  /** 5 MiB: gateways in front of APIs commonly cap bodies at 10 MB, so this leaves headroom. */
  maxBatchBytes: 5 * 1024 * 1024,
  /** The bound of the adaptive window (which starts at 8): high enough not to be the limit on an ordinary link. */
  concurrency: 64,
  onInvalid: 'throw',
  adaptive: true,
  /** How long 429s may hold a batch while nothing of its run is accepted: 5 minutes. */
  rateLimitDeadlineMs: 300_000,
} as const;
