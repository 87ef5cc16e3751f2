/** docs/performance.md's network section and its plot quote bench/results/network.json, figure for figure. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResults } from '../../bench/lib/results.js';
import {
  NETWORK_RESULTS,
  PERFORMANCE_DOC,
  renderNetworkBlock,
  renderWindowSvg,
  WINDOW_SVG,
  withNetworkBlock,
} from '../../bench/network-doc.js';
import { REPO_ROOT, readDoc } from '../support/doc-files.js';

const results = JSON.parse(readFileSync(join(REPO_ROOT, NETWORK_RESULTS), 'utf8')) as RunResults;

describe('the network section of docs/performance.md', () => {
  it('holds the table generated from the full run in bench/results/network.json', () => {
    expect(results.mode).toBe('full');
    const page = readDoc(PERFORMANCE_DOC);
    // On failure: npx tsx bench/network-doc.ts
    expect(withNetworkBlock(page, results)).toBe(page);
    expect(page).toContain(renderNetworkBlock(results));
  });

  it('embeds the plot drawn from the same run', () => {
    expect(readDoc(PERFORMANCE_DOC)).toContain(`](${WINDOW_SVG.replace('docs/', '')})`);
    expect(readFileSync(join(REPO_ROOT, WINDOW_SVG), 'utf8')).toBe(renderWindowSvg(results));
  });

  it('renders one line per piece of work, with its verdict', () => {
    const block = renderNetworkBlock(results);
    const lines = block.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| work'));
    const targets = results.rows.filter((row) => row.target !== undefined);
    expect(lines).toHaveLength(targets.length);
    const failing = targets.filter((row) => row.pass === false).length;
    expect(lines.filter((line) => line.endsWith('| **FAIL** |'))).toHaveLength(failing);
  });
});
