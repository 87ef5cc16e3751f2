/**
 * The names of `PushClientOptions`, for one check a JavaScript caller has no compiler for: an
 * option spelled in another case (`baseURL`, as axios and openai-node spell it; `clientID`) would
 * otherwise be ignored, and the client would quietly take that setting from the environment.
 * Other unknown keys are let through, so that a wider settings object can be spread in.
 */
import type { PushClientOptions } from './client.js';
import { ConfigurationError } from './errors.js';

export const OPTION_NAMES = [
  'clientId',
  'clientSecret',
  'authUrl',
  'baseUrl',
  'scopeBase',
  'scopes',
  'tokenAuthMethod',
  'refreshMarginMs',
  'timeoutMs',
  'maxRetries',
  'backoff',
  'maxRetryAfterMs',
  'retryAmbiguous',
  'fetch',
  'dispatcher',
  'logger',
  'logLevel',
  'defaultHeaders',
  'hooks',
  'middleware',
  'tracing',
  'userAgent',
  'tokenStore',
  'allowInsecureHttp',
  'dangerouslyAllowBrowser',
  'env',
] as const satisfies readonly (keyof PushClientOptions)[];

type Unlisted = Exclude<keyof PushClientOptions, (typeof OPTION_NAMES)[number]>;
// A type error names any option of PushClientOptions missing from OPTION_NAMES.
const everyOptionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyOptionListed;

const BY_LOWER_CASE = new Map<string, string>(OPTION_NAMES.map((name) => [name.toLowerCase(), name]));

/** How many prototypes are looked through: a settings class's chain is short, a Proxy's may not end. */
const MAX_PROTOTYPES = 16;

/**
 * Throws a ConfigurationError for a key that is an option's name in another case. Options are
 * read as properties, inherited ones included, so the keys looked at are too: a settings class
 * whose `get baseURL()` sits on its prototype (not enumerable, not an own key) is refused as well.
 */
export function refuseMiscasedOptions(options: object, prefix: string): void {
  let current: object | null = options;
  for (let depth = 0; current !== null && current !== Object.prototype && depth < MAX_PROTOTYPES; depth++) {
    for (const key of Object.getOwnPropertyNames(current)) {
      const meant = BY_LOWER_CASE.get(key.toLowerCase());
      if (meant !== undefined && meant !== key) {
        throw new ConfigurationError(`${prefix}unknown option ${key}; did you mean ${meant}?`);
      }
    }
    current = Object.getPrototypeOf(current);
  }
}
