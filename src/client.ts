import type { Dispatcher } from 'undici';
import {
  bearerSourceOf,
  type ClientSecretSource,
  type TokenAuthMethod,
  TokenManager,
  type TokenStore,
} from './auth/token-manager.js';
import { refuseMiscasedOptions } from './client-option-names.js';
import { type PushClientOverrides, withOverrides } from './client-overrides.js';
import type { ClientContext } from './context.js';
import { DEFAULTS, ENV_VARS } from './defaults.js';
import { ConfigurationError } from './errors.js';
import { FinancePublisher } from './finance/publisher.js';
import type { Middleware } from './http/attempt.js';
import { assertSecureUrl, isSecureUrl, parseUrlOption, safeHooks } from './http/fetch.js';
import {
  type BearerTokenSource,
  checkHeaders,
  checkNumber,
  checkRetryTiming,
  FetchHttpClient,
  MAX_TIMEOUT_MS,
  ResponsePromise,
} from './http/http-client.js';
import { loadOpenTelemetry } from './http/otel-loader.js';
import type { FetchLike, Logger, LogLevel, PushClientHooks, RetryBackoff } from './http/public-types.js';
import { DEFAULT_RETRY_TIMING, type RetryTiming, retryTimingWith } from './http/retry.js';
import { Tracing } from './http/tracing.js';
import { consoleLogger, filterLogger, LOG_LEVELS, safeLogger, silentLogger } from './internal/logger.js';
import { trimTrailingSlashes } from './internal/text.js';
import { type RawRequestOptions, rawRequest } from './raw-request.js';
import { WindowMemory } from './run/engine.js';
import { runtimeProduct } from './runtime.js';
import { Uploader } from './uploads/uploader.js';
import { VERSION } from './version.js';

/**
 * Options of {@link PushClient}. Every one is optional: the credential and addresses default to the
 * `PUSH_*` environment variables, so the same code runs against each environment unchanged. A
 * missing or invalid value throws `ConfigurationError` from the constructor, naming the option.
 */
export interface PushClientOptions {
  /** Client ID of the API credential. @default process.env.PUSH_CLIENT_ID */
  clientId?: string | undefined;
  /**
   * Client secret of the API credential; kept in a private field, never logged. Or a function that
   * returns it (a vault, a secret manager): called each time a token is requested, and once more
   * after an `invalid_client` answer, so that a rotated secret is picked up without a restart.
   * @default process.env.PUSH_CLIENT_SECRET
   */
  clientSecret?: ClientSecretSource | undefined;
  /** `{auth_url}`: the token service; tokens come from `{authUrl}/oauth2/token`. @default process.env.PUSH_AUTH_URL */
  authUrl?: string | URL | undefined;
  /** `{base_url}`: the data API. @default process.env.PUSH_BASE_URL */
  baseUrl?: string | URL | undefined;
  /** `{scope_base}`: prefix of scope names; needed only when `scopes` is not given. @default process.env.PUSH_SCOPE_BASE */
  scopeBase?: string | undefined;
  /** Scopes to request. @default [`${scopeBase}/connector.write`] */
  scopes?: readonly string[] | undefined;
  /** How the credentials travel to the token endpoint. @default 'client_secret_post' (form body, as the spec shows) */
  tokenAuthMethod?: TokenAuthMethod | undefined;
  /**
   * How long before expiry a token is refreshed; capped at half the token's lifetime. A refresh
   * that fails within it leaves the current token in use until it expires.
   * @default min(60000, 10% of the token's lifetime)
   */
  refreshMarginMs?: number | undefined;
  /** Time allowed for one attempt, response body included, in milliseconds (at most 2^31 - 1). @default 30000 */
  timeoutMs?: number | undefined;
  /** Re-sends after the first attempt of a request; a 401 refresh is not counted. @default 3 */
  maxRetries?: number | undefined;
  /**
   * Waits between attempts when the server sends no `Retry-After`: `initialDelayMs` before the
   * first re-send, doubling up to `maxDelayMs`, each cut by up to 25 % of jitter. The publisher's
   * waits on a 429 follow it too. `{ initialDelayMs: 0, maxDelayMs: 0 }` makes retries instant in tests.
   * @default { initialDelayMs: 500, maxDelayMs: 8000 }
   */
  backoff?: RetryBackoff | undefined;
  /**
   * Longest wait, in milliseconds, that a server's `Retry-After` (on a 429 or 503) can ask for
   * before a re-send; a longer one is waited this long. From 0 (re-send at once, for tests) to 60000.
   * @default 60000
   */
  maxRetryAfterMs?: number | undefined;
  /** Also re-send finance batches whose outcome is unknown (500/502/504, reset or timeout after sending); may duplicate records. @default false */
  retryAmbiguous?: boolean | undefined;
  /** A fetch implementation to use instead of `globalThis.fetch`. @default globalThis.fetch, looked up per request */
  fetch?: FetchLike | undefined;
  /** An undici dispatcher (Agent, Pool, ProxyAgent, EnvHttpProxyAgent); requests then go through undici's own fetch. @default undefined */
  dispatcher?: Dispatcher | undefined;
  /** Receives one debug line per attempt (method, path, status, attempt, duration) and warnings on retries. console and pino fit. @default no logging, unless `logLevel` or PUSH_LOG is set */
  logger?: Logger | undefined;
  /**
   * How much to log: `debug` (one line per attempt), `info`, `warn` (retries), `error`, or `off`.
   * With a `logger`, lines below the level are dropped; without one, the client logs to stderr
   * through a built-in console logger, so `PUSH_LOG=debug node app.js` shows every attempt
   * without a code change. The lines never hold a secret, a token, a header or a query string.
   * @default process.env.PUSH_LOG, else every line when a `logger` is given and none otherwise
   */
  logLevel?: LogLevel | undefined;
  /**
   * Headers sent with every request to the service (token endpoint and data API; never to the
   * storage host of signed upload addresses), such as a tracing or tenant header. An operation's
   * `headers` go over these. `Authorization`, `Content-Length`, `Host` and the other headers the
   * transport owns are refused with a `ConfigurationError`; `Content-Type` is always the spec's.
   * @default none
   */
  defaultHeaders?: Readonly<Record<string, string>> | undefined;
  /**
   * Callbacks for metrics and tracing: `request` and `response` for each attempt, `retry` before
   * each re-send, `tokenRefresh` for each token requested. Events carry the operation, method,
   * address without its query, attempt, status, duration, request id and retry delay; never a
   * header value or a body. A hook that throws is logged as a warning and ignored.
   * @default no hooks
   */
  hooks?: PushClientHooks | undefined;
  /**
   * Functions run on each attempt's first request, in order, each handing it (or a replacement) to
   * `next`: `(request, next, { operation, attempt }) => Promise<Response>`. They run before the
   * credentials are added (the client secret, the Basic header, the bearer token), so none of them
   * sees one; the request must keep its origin and method.
   * @default []
   */
  middleware?: readonly Middleware[] | undefined;
  /**
   * Spans through OpenTelemetry: one per request the client makes and one per HTTP attempt, with
   * the stable HTTP client semantic conventions, and the trace context (`traceparent` with the
   * W3C propagator) on requests to the data API, never to signed upload addresses. Needs the
   * optional peer dependency `@opentelemetry/api`; without it, a `ConfigurationError`.
   * @default false
   */
  tracing?: boolean | undefined;
  /** Prepended to the User-Agent, such as `my-app/1.2`. @default undefined (`push-api-client/<version> <runtime>/<version>`: node, bun, deno; `workerd` or `edge` alone) */
  userAgent?: string | undefined;
  /** Where tokens are cached; share one between processes to share tokens. @default a new MemoryTokenStore */
  tokenStore?: TokenStore | undefined;
  /**
   * Allow plain http to hosts other than 127.0.0.1, localhost and [::1], such as an emulator in
   * another container. Credentials would travel unencrypted, so the client then emits one process
   * warning naming the host. `PUSH_ALLOW_INSECURE_HTTP=1` sets it from the environment.
   * @default process.env.PUSH_ALLOW_INSECURE_HTTP === '1', else false
   */
  allowInsecureHttp?: boolean | undefined;
  /** Allow a client secret in a browser-like environment, where any user could read it. @default false */
  dangerouslyAllowBrowser?: boolean | undefined;
  /** Environment read for the defaults above; for tests. @default process.env */
  env?: Record<string, string | undefined> | undefined;
}

/**
 * Carries the original's token manager into a client made by `withOptions`. The symbol is not
 * exported, so no caller can hand a client someone else's tokens.
 */
const SHARED_TOKENS = Symbol('push-api-client shared token manager');
interface DerivedClientOptions extends PushClientOptions {
  [SHARED_TOKENS]?: TokenManager;
}

interface ResolvedOptions {
  clientId: string;
  logger: Logger;
  authUrl: URL;
  baseUrl: URL;
  scopes: string[];
  timeoutMs: number;
  maxRetries: number;
  retryTiming: RetryTiming;
  refreshMarginMs: number | undefined;
  retryAmbiguous: boolean;
  allowInsecureHttp: boolean;
  userAgent: string;
}

function fromEnv(
  options: PushClientOptions,
  env: Record<string, string | undefined>,
  name: keyof typeof ENV_VARS,
): string | undefined {
  const given = options[name];
  if (typeof given === 'function') return undefined; // a secret provider, handled by the caller
  if (given !== undefined && given !== null && String(given) !== '') return String(given);
  const value = env[ENV_VARS[name]];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function required(value: string | undefined, name: keyof typeof ENV_VARS): string {
  if (value === undefined) {
    throw new ConfigurationError(`PushClient: ${name} is required; pass the ${name} option or set ${ENV_VARS[name]}`);
  }
  return value;
}

function positiveNumber(
  value: number | undefined,
  name: string,
  fallback: number,
  integer: boolean,
  min: number,
  max?: number,
): number {
  if (value === undefined) return fallback;
  checkNumber(value, `PushClient: ${name}`, integer, min, max);
  return value;
}

function logLevelOption(value: string | undefined): LogLevel | undefined {
  if (value === undefined) return undefined;
  const level = value.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigurationError(`PushClient: logLevel (${ENV_VARS.logLevel}) must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return level;
}

/** The user's logger, or the console one when only a level is asked for; filtered to the level. */
function resolveLogger(options: PushClientOptions, env: Record<string, string | undefined>): Logger {
  const level = logLevelOption(fromEnv(options, env, 'logLevel'));
  if (options.logger) {
    const logger = safeLogger(options.logger);
    return level === undefined ? logger : filterLogger(logger, level);
  }
  return level === undefined || level === 'off' ? silentLogger : filterLogger(consoleLogger(), level);
}

function insecureHttpOption(given: boolean | undefined, env: Record<string, string | undefined>): boolean {
  if (given !== undefined) return given;
  const value = env[ENV_VARS.allowInsecureHttp]?.trim();
  if (value === undefined || value === '' || value === '0') return DEFAULTS.allowInsecureHttp;
  if (value === '1') return true;
  throw new ConfigurationError(`PushClient: ${ENV_VARS.allowInsecureHttp} must be 1 (or 0 or unset)`);
}

/**
 * The switch is for a test emulator in another container; anywhere else it sends a secret in clear
 * text, so using it is said out loud, once per client, on stderr.
 */
function warnInsecureHosts(urls: URL[]): void {
  const hosts = [...new Set(urls.filter((url) => !isSecureUrl(url)).map((url) => url.host))];
  if (hosts.length === 0 || typeof process === 'undefined' || typeof process.emitWarning !== 'function') return;
  process.emitWarning(
    `PushClient: plain http to ${hosts.join(', ')} allowed by allowInsecureHttp (${ENV_VARS.allowInsecureHttp}): ` +
      'the client secret, tokens and data travel unencrypted. Use it only for a test emulator.',
    { type: 'SecurityWarning', code: 'PUSH_API_INSECURE_HTTP' },
  );
}

function isBrowserLike(): boolean {
  return typeof globalThis.window !== 'undefined' && typeof globalThis.document !== 'undefined';
}

/**
 * The userAgent option goes into every request's User-Agent header. fetch refuses CR, LF, NUL and
 * characters above U+00FF only when sending, and each request would then fail; printable ASCII
 * (RFC 9110 product tokens and comments) is checked here instead.
 */
function userAgentOption(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^[\x20-\x7e]+$/.test(value) || value.trim() === '') {
    throw new ConfigurationError(
      'PushClient: userAgent must be printable ASCII without line breaks or control characters, such as my-app/1.2',
    );
  }
  return value.trim();
}

function urlOption(value: string, name: 'authUrl' | 'baseUrl', allowInsecureHttp: boolean): URL {
  const what = `PushClient: ${name} (${ENV_VARS[name]})`;
  const url = parseUrlOption(value, what);
  // `localhost:4010/auth` parses, with `localhost:` as its scheme. The value is not repeated: it may
  // be a secret pasted in the wrong place.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigurationError(
      `${what} must start with https:// or http:// (what comes before its first ":" was read as a scheme)`,
    );
  }
  url.search = '';
  url.hash = '';
  return assertSecureUrl(url, `PushClient: ${name}`, allowInsecureHttp);
}

/** Resolves options and environment into validated settings; throws ConfigurationError naming the option. */
function resolveOptions(
  options: PushClientOptions,
  warnInsecure = true,
): ResolvedOptions & { clientSecret: ClientSecretSource } {
  refuseMiscasedOptions(options, 'PushClient: ');
  const env = options.env ?? (typeof process !== 'undefined' ? process.env : {});
  const allowInsecureHttp = insecureHttpOption(options.allowInsecureHttp, env);
  const clientId = required(fromEnv(options, env, 'clientId'), 'clientId');
  const clientSecret =
    typeof options.clientSecret === 'function'
      ? options.clientSecret
      : required(fromEnv(options, env, 'clientSecret'), 'clientSecret');
  if (isBrowserLike() && !(options.dangerouslyAllowBrowser ?? DEFAULTS.dangerouslyAllowBrowser)) {
    throw new ConfigurationError(
      'PushClient: a client secret must not be used in a browser, where any user can read it. ' +
        'Call the API from a server, or set dangerouslyAllowBrowser: true if this environment is trusted.',
    );
  }
  const authUrl = urlOption(required(fromEnv(options, env, 'authUrl'), 'authUrl'), 'authUrl', allowInsecureHttp);
  const baseUrl = urlOption(required(fromEnv(options, env, 'baseUrl'), 'baseUrl'), 'baseUrl', allowInsecureHttp);
  // A derived client has the original's addresses, which were warned about already.
  if (allowInsecureHttp && warnInsecure) warnInsecureHosts([authUrl, baseUrl]);
  // Relative paths resolve under the base only when it ends with a slash; one slash, as for the
  // token address: `https://api.example.com//` (a templated value) would put `//services` in the path.
  baseUrl.pathname = `${trimTrailingSlashes(baseUrl.pathname)}/`;
  let scopes: string[];
  if (options.scopes !== undefined) {
    if (
      !Array.isArray(options.scopes) ||
      options.scopes.length === 0 ||
      options.scopes.some((s) => typeof s !== 'string' || s.trim() === '')
    ) {
      throw new ConfigurationError('PushClient: scopes must be a non-empty array of scope names');
    }
    scopes = [...options.scopes];
  } else {
    const scopeBase = fromEnv(options, env, 'scopeBase');
    if (scopeBase === undefined) {
      throw new ConfigurationError(
        `PushClient: scopeBase is required when scopes is not given; pass the scopeBase option, set ${ENV_VARS.scopeBase}, or pass scopes`,
      );
    }
    scopes = [trimTrailingSlashes(scopeBase) + DEFAULTS.scopeSuffix];
  }
  const method = options.tokenAuthMethod ?? DEFAULTS.tokenAuthMethod;
  if (method !== 'client_secret_post' && method !== 'client_secret_basic') {
    throw new ConfigurationError("PushClient: tokenAuthMethod must be 'client_secret_post' or 'client_secret_basic'");
  }
  checkRetryTiming(options, 'PushClient: ');
  const product = `push-api-client/${VERSION} ${runtimeProduct()}`;
  const userAgent = userAgentOption(options.userAgent);
  return {
    clientId,
    logger: resolveLogger(options, env),
    clientSecret,
    authUrl,
    baseUrl,
    scopes,
    timeoutMs: positiveNumber(options.timeoutMs, 'timeoutMs', DEFAULTS.timeoutMs, false, 1, MAX_TIMEOUT_MS),
    maxRetries: positiveNumber(options.maxRetries, 'maxRetries', DEFAULTS.maxRetries, true, 0),
    retryTiming: retryTimingWith(DEFAULT_RETRY_TIMING, options),
    refreshMarginMs:
      options.refreshMarginMs === undefined
        ? undefined
        : positiveNumber(options.refreshMarginMs, 'refreshMarginMs', 0, false, 0),
    retryAmbiguous: options.retryAmbiguous ?? DEFAULTS.retryAmbiguous,
    allowInsecureHttp,
    userAgent: userAgent ? `${userAgent} ${product}` : product,
  };
}

/**
 * The Push API client: tokens, uploads and finance records over one transport, which sets the
 * bearer token, retries what is safe to retry, and maps error answers to typed errors. Create one
 * per credential and share it: each instance has its own token cache.
 *
 * @example
 * With the credential and addresses in the environment:
 * ```ts
 * import { PushClient } from 'push-api-client';
 *
 * const client = new PushClient(); // reads PUSH_CLIENT_ID, PUSH_CLIENT_SECRET, PUSH_AUTH_URL, PUSH_BASE_URL, PUSH_SCOPE_BASE
 * const report = await client.finance.publish(appId, records);
 * console.log(`${report.recordsSent} sent, ${report.recordsInvalid} invalid`);
 * ```
 *
 * @example
 * With explicit options:
 * ```ts
 * import { PushClient } from 'push-api-client';
 *
 * const client = new PushClient({
 *   clientId: 'my-client-id',
 *   clientSecret: process.env.PUSH_CLIENT_SECRET,
 *   authUrl: 'https://auth.example.com',
 *   baseUrl: 'https://api.example.com',
 *   scopeBase: 'https://api.example.com',
 *   timeoutMs: 10_000,
 *   maxRetries: 5,
 *   logger: console,
 * });
 * ```
 */
export class PushClient {
  /** Access tokens: `getToken({ forceRefresh, signal })`, `invalidate()`. */
  readonly tokens: TokenManager;
  /** Signed upload addresses and file uploads. */
  readonly uploads: Uploader;
  /** Finance records: validation, batching and sending. */
  readonly finance: FinancePublisher;
  readonly #settings: Omit<ResolvedOptions, 'logger'>;
  /** The options as given, with the credential and addresses as resolved: what `withOptions` starts from. */
  readonly #options: PushClientOptions;
  /** The transport and settings the parts share, for `request`. */
  readonly #context: ClientContext;

  /**
   * Validates the options (and the environment variables they default to) and wires the client.
   * Sends nothing: the first token is fetched by the first request.
   * @throws {ConfigurationError} a required value is missing or an option is invalid (plain http
   *   to a non-loopback host, bad scopes, a secret in a browser...); the message names the option.
   */
  constructor(options: PushClientOptions = {}) {
    const shared = (options as DerivedClientOptions)[SHARED_TOKENS];
    const { clientSecret, logger, ...settings } = resolveOptions(options, shared === undefined);
    const defaultHeaders = checkHeaders(options.defaultHeaders, 'PushClient: defaultHeaders');
    const hooks = safeHooks(options.hooks, (message, fields) => logger.warn(message, fields));
    this.#settings = settings;
    this.#options = {
      ...options,
      clientId: settings.clientId,
      clientSecret,
      authUrl: settings.authUrl.href,
      baseUrl: settings.baseUrl.href,
      scopes: settings.scopes,
      allowInsecureHttp: settings.allowInsecureHttp,
    };
    // Made on first use: the token manager is built after the transport it uses.
    let bearerSource: BearerTokenSource | undefined;
    const http = new FetchHttpClient({
      fetch: options.fetch,
      dispatcher: options.dispatcher,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      backoff: { initialDelayMs: settings.retryTiming.initialDelayMs, maxDelayMs: settings.retryTiming.maxDelayMs },
      maxRetryAfterMs: settings.retryTiming.maxRetryAfterMs,
      retryAmbiguous: settings.retryAmbiguous,
      allowInsecureHttp: settings.allowInsecureHttp,
      userAgent: settings.userAgent,
      logger,
      hooks,
      ...(options.middleware !== undefined && { middleware: checkMiddleware(options.middleware) }),
      ...(checkTracing(options.tracing) && { tracing: new Tracing(loadOpenTelemetry()) }),
      tokens: () => (bearerSource ??= bearerSourceOf(this.tokens)),
    });
    this.tokens =
      shared ??
      new TokenManager({
        http,
        authUrl: settings.authUrl,
        clientId: settings.clientId,
        clientSecret,
        scopes: settings.scopes,
        tokenAuthMethod: options.tokenAuthMethod,
        tokenStore: options.tokenStore,
        refreshMarginMs: settings.refreshMarginMs,
        logger,
        hooks,
        defaultHeaders,
        timeoutMs: settings.timeoutMs,
      });
    const context: ClientContext = {
      http,
      baseUrl: settings.baseUrl,
      logger,
      hooks,
      defaultHeaders,
      retryAmbiguous: settings.retryAmbiguous,
      retryTiming: settings.retryTiming,
      maxRetries: settings.maxRetries,
      timeoutMs: settings.timeoutMs,
      allowInsecureHttp: settings.allowInsecureHttp,
      windows: new WindowMemory(),
    };
    this.#context = context;
    this.uploads = new Uploader(context);
    this.finance = new FinancePublisher(context);
  }

  /**
   * A client with some options changed that shares this one's credential and token cache: its
   * requests use the tokens this client holds, and a token either of them fetches serves both.
   * `defaultHeaders` and `backoff` merge key by key with this client's; `hooks`, `logger` and every
   * other option not given are this client's. The credential, the token cache and the addresses
   * cannot change (a `ConfigurationError` names them): that is a new `PushClient`.
   *
   * The token requests its own calls cause follow its `timeoutMs`, `maxRetries`, `backoff`,
   * `maxRetryAfterMs` and `defaultHeaders`; `tokens.getToken()` called directly, and the
   * `tokenRefresh` hook, are this client's, since the token manager is one object.
   * @throws {ConfigurationError} an invalid override, or one of the options that cannot change.
   *
   * @example
   * ```ts
   * // One client per tenant, one token for all of them.
   * const acme = client.withOptions({ defaultHeaders: { 'x-tenant': 'acme' }, timeoutMs: 5_000 });
   * await acme.finance.publish(appId, records);
   * ```
   */
  withOptions(overrides: PushClientOverrides): PushClient {
    const options: DerivedClientOptions = { ...withOverrides(this.#options, overrides), [SHARED_TOKENS]: this.tokens };
    return new PushClient(options);
  }

  /**
   * A request to any data API path the client does not wrap, with its token, 401 refresh, retries
   * (for POST and PATCH only when the service surely did not take the request), hooks, logging,
   * redaction, bounded reads and typed errors. Resolves to the parsed JSON, or to the text for
   * other content types; `.withResponse()` adds the status, headers and request id.
   * @throws {ConfigurationError} a bad method, path, query, body or scopes (nothing is sent).
   *
   * @example
   * ```ts
   * const report = await client.request<{ rows: unknown[] }>({
   *   method: 'GET',
   *   path: '/services/push/v1/customer/reports',
   *   query: { from: '2025-01-01' },
   *   scopes: ['https://api.push.test/report.read'],
   * });
   * ```
   */
  request<T = unknown>(options: RawRequestOptions): ResponsePromise<T> {
    return new ResponsePromise(rawRequest<T>(this.#context, options));
  }

  /** The settings in use, without the secret: for diagnostics. */
  toJSON(): Record<string, unknown> {
    const s = this.#settings;
    return {
      clientId: s.clientId,
      authUrl: s.authUrl.href,
      baseUrl: s.baseUrl.href,
      scopes: [...s.scopes],
      timeoutMs: s.timeoutMs,
      maxRetries: s.maxRetries,
      backoff: { initialDelayMs: s.retryTiming.initialDelayMs, maxDelayMs: s.retryTiming.maxDelayMs },
      maxRetryAfterMs: s.retryTiming.maxRetryAfterMs,
      retryAmbiguous: s.retryAmbiguous,
      allowInsecureHttp: s.allowInsecureHttp,
      userAgent: s.userAgent,
    };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `PushClient ${JSON.stringify(this.toJSON())}`;
  }
}

function checkTracing(tracing: unknown): boolean {
  if (tracing !== undefined && typeof tracing !== 'boolean') {
    throw new ConfigurationError('PushClient: tracing must be true or false');
  }
  return tracing === true;
}

function checkMiddleware(middleware: readonly Middleware[]): readonly Middleware[] {
  // A plain loop: `some` skips the holes of a sparse array, and a hole would end the chain there.
  let valid = Array.isArray(middleware);
  for (let index = 0; valid && index < middleware.length; index++) valid = typeof middleware[index] === 'function';
  if (!valid) {
    throw new ConfigurationError('PushClient: middleware must be an array of functions');
  }
  return [...middleware];
}
