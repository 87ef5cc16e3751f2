/**
 * docs/configuration.md lists every `PushClientOptions` option, with the environment variable the
 * client reads for it. A new option that is not listed below fails `tsc`; one that the page's table
 * does not show fails here.
 */

import type { PushClientOptions } from 'push-api-client';
import { describe, expect, it } from 'vitest';
import { ENV_VARS } from '../../src/defaults.js';
import { readDoc } from '../support/doc-files.js';

const OPTIONS = [
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

type Unlisted = Exclude<keyof PushClientOptions, (typeof OPTIONS)[number]>;
// A type error names any option of PushClientOptions missing from OPTIONS.
const everyOptionListed: [Unlisted] extends [never] ? true : Unlisted = true;

/** Rows of the page's options table: option name → environment variable ('' when none). */
function optionsTable(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readDoc('docs/configuration.md').split('\n')) {
    const cells = /^\| `(\w+)` \| (`PUSH_\w+`)? *\|/.exec(line);
    if (cells?.[1]) rows.set(cells[1], cells[2]?.replaceAll('`', '') ?? '');
  }
  return rows;
}

describe('docs/configuration.md options table', () => {
  it('has one row per option of PushClientOptions', () => {
    expect(everyOptionListed).toBe(true);
    expect([...optionsTable().keys()].sort()).toEqual([...OPTIONS].sort());
  });

  it('names the environment variable the client reads for each option', () => {
    const table = optionsTable();
    const documented = Object.fromEntries([...table].filter(([, variable]) => variable !== ''));
    expect(documented).toEqual(ENV_VARS);
  });
});
