/** docs/performance.md quotes the benchmark run in bench/results/latest.json, figure for figure. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResults } from '../../bench/lib/results.js';
import { BENCH_RESULTS, PERFORMANCE_DOC, renderBenchBlock, withBenchBlock } from '../../scripts/performance-doc.js';
import { REPO_ROOT, readDoc } from '../support/doc-files.js';

const results = JSON.parse(readFileSync(join(REPO_ROOT, BENCH_RESULTS), 'utf8')) as RunResults;

describe('docs/performance.md', () => {
  it('holds the table generated from the full run in bench/results/latest.json', () => {
    expect(results.mode).toBe('full');
    const page = readDoc(PERFORMANCE_DOC);
    // On failure: npx tsx scripts/performance-doc.ts
    expect(withBenchBlock(page, results)).toBe(page);
    expect(page).toContain(renderBenchBlock(results));
  });

  it('renders every row of the run, with its verdict', () => {
    const block = renderBenchBlock(results);
    const tableLines = block.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| benchmark'));
    expect(tableLines).toHaveLength(results.rows.length);
    const failing = results.rows.filter((row) => row.pass === false).length;
    expect(tableLines.filter((line) => line.endsWith('| **FAIL** |'))).toHaveLength(failing);
  });
});
