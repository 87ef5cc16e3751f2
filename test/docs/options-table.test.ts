/**
 * docs/configuration.md lists every `PushClientOptions` option, with the environment variable the
 * client reads for it. A new option missing from the client's list of names fails `tsc`; one that
 * the page's table does not show fails here.
 */

import { describe, expect, it } from 'vitest';
import { OPTION_NAMES } from '../../src/client-option-names.js';
import { ENV_VARS } from '../../src/defaults.js';
import { readDoc } from '../support/doc-files.js';

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
    expect([...optionsTable().keys()].sort()).toEqual([...OPTION_NAMES].sort());
  });

  it('names the environment variable the client reads for each option', () => {
    const table = optionsTable();
    const documented = Object.fromEntries([...table].filter(([, variable]) => variable !== ''));
    expect(documented).toEqual(ENV_VARS);
  });
});
