/**
 * Options of the emulated push service and every default, in one place.
 */
import { trimTrailingSlashes } from '../internal/text.js';

/** The scopes named in the spec's scope table, without the `{scope_base}/` prefix. */
export const SCOPE_NAMES = [
  'connector.write',
  'report.read',
  'apps.read',
  'apps.write',
  'elm.policy.read',
  'elm.results.read',
] as const;

/** The scope the upload-address and finance operations require (spec, "Scopes"). */
export const CONNECTOR_WRITE = 'connector.write';

/** Client id of the demo credential that exists unless `credentials` is given. */
export const DEMO_CLIENT_ID = 'demo-client';
/** Client secret of the demo credential. Only for the emulator: never a real secret. */
export const DEMO_CLIENT_SECRET = 'demo-secret-do-not-use-in-production';
/** The application that exists unless `apps` is given. */
export const DEMO_APP_ID = 'demo-app';
/** Default `{scope_base}`. */
export const DEMO_SCOPE_BASE = 'https://api.push.test';

/** Every default value of {@link EmulatorOptions}. */
export const EMULATOR_DEFAULTS = {
  authUrl: 'https://auth.push.test',
  baseUrl: 'https://api.push.test',
  uploadUrl: 'https://uploads.push.test',
  scopeBase: DEMO_SCOPE_BASE,
  tokenTtlSeconds: 3600,
  signedUrlTtlSeconds: 900,
  maxBodyBytes: 10 * 1024 * 1024,
  // S3's limit for a single PUT. Uploads stream through a hash, so only maxStoredUploadBytes is held.
  maxUploadBytes: 5 * 1024 * 1024 * 1024,
  maxStoredUploadBytes: 64 * 1024 * 1024,
  maxRequestLog: 100_000,
  maxRequestLogBytes: 128 * 1024 * 1024,
  lenientScope: false,
} as const;

/** A client credential, as created in the product's organization settings. */
export interface CredentialInput {
  clientId: string;
  clientSecret: string;
  /** Full scope names, such as `https://api.push.test/connector.write`. */
  scopes: readonly string[];
}

/** Requests allowed per window on the data API. */
export interface RateLimit {
  /** Requests allowed in one window; the next one answers 429 with `Retry-After`. */
  requests: number;
  /** Length of the window, in milliseconds of the emulator clock. */
  windowMs: number;
}

/**
 * How the emulated service is set up. Every option has a default (see {@link EMULATOR_DEFAULTS}),
 * so `createPushApiMock()` with no options serves one demo app to one demo credential.
 */
export interface EmulatorOptions {
  /** Address of the token service, `{auth_url}`. @default 'https://auth.push.test' */
  authUrl?: string | undefined;
  /** Address of the data API, `{base_url}`. @default 'https://api.push.test' */
  baseUrl?: string | undefined;
  /** Address of the storage host inside signed upload addresses. @default 'https://uploads.push.test' */
  uploadUrl?: string | undefined;
  /** Common prefix of every scope name, `{scope_base}`. @default 'https://api.push.test' */
  scopeBase?: string | undefined;
  /** Credentials that can obtain tokens. @default one demo credential holding every scope of the spec */
  credentials?: readonly CredentialInput[] | undefined;
  /** Applications that exist. @default [DEMO_APP_ID] */
  apps?: readonly string[] | undefined;
  /** Lifetime of issued access tokens, in seconds. @default 3600 */
  tokenTtlSeconds?: number | undefined;
  /** Lifetime of signed upload addresses, in seconds. @default 900 */
  signedUrlTtlSeconds?: number | undefined;
  /**
   * Clock in milliseconds; `advanceTime()` moves it forward. The default reads `Date.now()` at each
   * call, so it follows a test's fake clock (`vi.setSystemTime`) as the client does.
   * @default () => Date.now()
   */
  now?: (() => number) | undefined;
  /** Data API rate limit (upload addresses and finance). @default none */
  rateLimit?: RateLimit | undefined;
  /** Largest accepted body for the token and data operations; bigger answers 413. @default 10 MiB */
  maxBodyBytes?: number | undefined;
  /** Largest accepted PUT to a signed address; bigger answers 400 EntityTooLarge. @default 5 GiB */
  maxUploadBytes?: number | undefined;
  /**
   * How many bytes of uploaded content the emulator holds in memory, across every file. Each file's
   * size and SHA-256 are always kept; its bytes (`state.file(...).bytes`) only while they fit under
   * this total, and are undefined past it (`state.uploadStorage` counts such files). @default 64 MiB
   */
  maxStoredUploadBytes?: number | undefined;
  /**
   * Keep each finance record. When false only counts are kept, which is what a benchmark pushing
   * millions of records wants. @default true
   */
  keepRecords?: boolean | undefined;
  /**
   * The storage host's `Content-Length` rule for PUTs that did not come over a socket (msw,
   * `emulator.fetch`); over real HTTP it always holds (411 without it, 501 when chunked).
   * - `'auto'`: a body that the runtime would send chunked (a `ReadableStream` without a
   *   `Content-Length` header; on Deno, any `ReadableStream`) answers 501 NotImplemented, as object
   *   stores do. Bytes, strings and Blobs have a length the runtime sends, and pass. Detected on
   *   Node's fetch (undici) and Deno; elsewhere such a body passes.
   * - `true`: also every PUT without a `Content-Length` header answers 411 MissingContentLength.
   * - `false`: no check.
   * @default 'auto'
   */
  requireContentLength?: boolean | 'auto' | undefined;
  /** Oldest request-log entries are dropped beyond this many. @default 100000 */
  maxRequestLog?: number | undefined;
  /**
   * Oldest request-log entries are dropped once the log's estimated size passes this many bytes;
   * the newest entry is always kept. Each entry also keeps at most a bounded part of its request
   * (see `RequestLogEntry.truncated`), so that a flood of large requests cannot exhaust memory.
   * The SDK's requests are estimated at about 1.5 KB each, so the default holds about 90,000.
   * @default 128 MiB
   */
  maxRequestLogBytes?: number | undefined;
  /**
   * Grant every scope of the credential to a token request without `scope`, instead of refusing it
   * with 400 `invalid_scope` as the spec requires. For clients written against an older, lenient
   * emulator. @default false
   */
  lenientScope?: boolean | undefined;
}

export interface ResolvedOptions {
  authUrl: string;
  baseUrl: string;
  uploadUrl: string;
  scopeBase: string;
  credentials: CredentialInput[];
  apps: string[];
  tokenTtlSeconds: number;
  signedUrlTtlSeconds: number;
  now: () => number;
  rateLimit: RateLimit | undefined;
  maxBodyBytes: number;
  maxUploadBytes: number;
  maxStoredUploadBytes: number;
  keepRecords: boolean;
  requireContentLength: boolean | 'auto';
  maxRequestLog: number;
  maxRequestLogBytes: number;
  lenientScope: boolean;
}

/** Removes trailing slashes so that `${base}/path` never doubles a slash. */
function trimSlash(url: string): string {
  return trimTrailingSlashes(url);
}

/**
 * An address as fetch sends it: the default port dropped (`https://api.example:443`), the host in
 * lower case, no trailing slash. The msw handlers are built from these strings and match requests
 * as written, so an address spelled otherwise than the client sends it would intercept nothing.
 */
function normalizeAddress(address: string): string {
  const url = new URL(address);
  return trimTrailingSlashes(`${url.origin}${url.pathname}`);
}

export function resolveOptions(options: EmulatorOptions = {}): ResolvedOptions {
  const scopeBase = trimSlash(options.scopeBase ?? EMULATOR_DEFAULTS.scopeBase);
  return {
    authUrl: normalizeAddress(options.authUrl ?? EMULATOR_DEFAULTS.authUrl),
    baseUrl: normalizeAddress(options.baseUrl ?? EMULATOR_DEFAULTS.baseUrl),
    uploadUrl: normalizeAddress(options.uploadUrl ?? EMULATOR_DEFAULTS.uploadUrl),
    scopeBase,
    credentials: options.credentials?.map((credential) => ({ ...credential, scopes: [...credential.scopes] })) ?? [
      {
        clientId: DEMO_CLIENT_ID,
        clientSecret: DEMO_CLIENT_SECRET,
        scopes: SCOPE_NAMES.map((name) => `${scopeBase}/${name}`),
      },
    ],
    apps: [...(options.apps ?? [DEMO_APP_ID])],
    tokenTtlSeconds: options.tokenTtlSeconds ?? EMULATOR_DEFAULTS.tokenTtlSeconds,
    signedUrlTtlSeconds: options.signedUrlTtlSeconds ?? EMULATOR_DEFAULTS.signedUrlTtlSeconds,
    // Read at each call, not kept: a test suite that fakes `Date` after creating the emulator
    // (vi.useFakeTimers, vi.setSystemTime) moves both the client's clock and this one.
    now: options.now ?? (() => Date.now()),
    rateLimit: options.rateLimit ? { ...options.rateLimit } : undefined,
    maxBodyBytes: options.maxBodyBytes ?? EMULATOR_DEFAULTS.maxBodyBytes,
    maxUploadBytes: options.maxUploadBytes ?? EMULATOR_DEFAULTS.maxUploadBytes,
    maxStoredUploadBytes: options.maxStoredUploadBytes ?? EMULATOR_DEFAULTS.maxStoredUploadBytes,
    keepRecords: options.keepRecords ?? true,
    requireContentLength: options.requireContentLength ?? 'auto',
    maxRequestLog: options.maxRequestLog ?? EMULATOR_DEFAULTS.maxRequestLog,
    maxRequestLogBytes: options.maxRequestLogBytes ?? EMULATOR_DEFAULTS.maxRequestLogBytes,
    lenientScope: options.lenientScope ?? EMULATOR_DEFAULTS.lenientScope,
  };
}
