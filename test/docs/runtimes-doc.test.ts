/** docs/runtimes.md and the README quote the runtime matrix's results, row for row. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  RUNTIME_PAGES,
  RUNTIME_RESULTS,
  type RuntimeResults,
  renderRuntimesBlock,
  withRuntimesBlock,
} from '../../scripts/runtimes-doc.js';
import { REPO_ROOT, readDoc } from '../support/doc-files.js';

const results = JSON.parse(readFileSync(join(REPO_ROOT, RUNTIME_RESULTS), 'utf8')) as RuntimeResults;

describe('the Runtimes tables', () => {
  it.each(RUNTIME_PAGES)('%s holds the table generated from the matrix results', (name) => {
    const page = readDoc(name);
    // On failure: npx tsx scripts/runtimes-doc.ts
    expect(withRuntimesBlock(page, results, name)).toBe(page);
    expect(page).toContain(renderRuntimesBlock(results));
  });

  it('has one row per runtime the matrix ran, workerd without nodejs_compat among them', () => {
    const rows = renderRuntimesBlock(results)
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| runtime'));
    expect(rows).toHaveLength(results.runtimes.length);
    expect(results.runtimes.map((result) => result.runtime)).toEqual(
      expect.arrayContaining([
        'Node 20',
        'Node 22',
        'Node 24',
        'Bun',
        'Deno',
        'workerd (no nodejs_compat)',
        'edge-runtime',
      ]),
    );
  });
});
