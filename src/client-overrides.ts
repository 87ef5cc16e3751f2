/**
 * What `PushClient.withOptions` may change, and how the overrides merge with the original's
 * options. A derived client shares the original's token manager, so everything that decides which
 * token it holds or where that token may go stays the original's.
 */
import type { PushClientOptions } from './client.js';
import { refuseMiscasedOptions } from './client-option-names.js';
import { ConfigurationError } from './errors.js';
import { checkHeaders } from './http/http-client.js';

/**
 * Options of `client.withOptions(overrides)`: every `PushClientOptions` option except the
 * credential, the token cache and the addresses (`clientId`, `clientSecret`, `authUrl`, `baseUrl`,
 * `scopeBase`, `scopes`, `tokenAuthMethod`, `tokenStore`, `refreshMarginMs`, `allowInsecureHttp`,
 * `dangerouslyAllowBrowser`, `env`). Each one given replaces the original's; `defaultHeaders` and
 * `backoff` merge key by key with the original's. An option left out (or `undefined`) is the
 * original's.
 */
export type PushClientOverrides = Omit<
  PushClientOptions,
  | 'clientId'
  | 'clientSecret'
  | 'authUrl'
  | 'baseUrl'
  | 'scopeBase'
  | 'scopes'
  | 'tokenAuthMethod'
  | 'tokenStore'
  | 'refreshMarginMs'
  | 'allowInsecureHttp'
  | 'dangerouslyAllowBrowser'
  | 'env'
>;

/**
 * The options that make the token and say where it goes: a derived client keeps the original's,
 * since it uses the same token cache. Refused at run time too, for callers without types.
 */
type KeptOption = Exclude<keyof PushClientOptions, keyof PushClientOverrides>;
const KEPT_OPTIONS = [
  'clientId',
  'clientSecret',
  'authUrl',
  'baseUrl',
  'scopeBase',
  'scopes',
  'tokenAuthMethod',
  'tokenStore',
  'refreshMarginMs',
  'allowInsecureHttp',
  'dangerouslyAllowBrowser',
  'env',
] as const satisfies readonly KeptOption[];
// A type error here names a kept option missing from KEPT_OPTIONS.
const everyKeptOptionListed: [Exclude<KeptOption, (typeof KEPT_OPTIONS)[number]>] extends [never] ? true : false = true;
void everyKeptOptionListed;

/** The original's options with `overrides` applied; throws ConfigurationError for a kept option. */
export function withOverrides(original: PushClientOptions, overrides: PushClientOverrides): PushClientOptions {
  if (overrides === null || typeof overrides !== 'object' || Array.isArray(overrides)) {
    throw new ConfigurationError('withOptions: overrides must be an object of PushClient options');
  }
  refuseMiscasedOptions(overrides, 'withOptions: ');
  const kept = KEPT_OPTIONS.filter((name) => (overrides as PushClientOptions)[name] !== undefined);
  if (kept.length > 0) {
    throw new ConfigurationError(
      `withOptions: ${kept.join(', ')} cannot be changed: a derived client shares the original's credential, token cache and addresses; create a new PushClient instead`,
    );
  }
  const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));
  const merged: PushClientOptions = { ...original, ...given };
  if (overrides.defaultHeaders !== undefined) {
    merged.defaultHeaders = {
      ...checkHeaders(original.defaultHeaders, 'PushClient: defaultHeaders'),
      ...checkHeaders(overrides.defaultHeaders, 'withOptions: defaultHeaders'),
    };
  }
  if (overrides.backoff !== undefined && overrides.backoff !== null && typeof overrides.backoff === 'object') {
    const parts = Object.entries(overrides.backoff).filter(([, value]) => value !== undefined);
    merged.backoff = { ...original.backoff, ...Object.fromEntries(parts) };
  }
  return merged;
}
