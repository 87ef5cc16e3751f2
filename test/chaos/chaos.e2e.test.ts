/**
 * Chaos over real HTTP: several seeds, each reproducible from its number. Two seeds run
 * the full workload (100,000 records, 50 files from 0 B to 20 MB), with `retryAmbiguous` off
 * and on; four more run a tenth of it, two at a time. `npm run chaos -- --seeds 200` runs many more.
 * A failing seed prints its row and violations; re-run it alone with `npm run chaos -- --first <seed> --seeds 1`.
 */
import { describe, expect, it } from 'vitest';
import { runSeed, type SeedResult } from './run-seed.js';
import { tableHeader, tableRow } from './table.js';
import { FULL_WORKLOAD, SMALL_WORKLOAD } from './workload.js';

function expectPassed(result: SeedResult): void {
  const summary = `${tableHeader()}\n${tableRow(result)}\n${result.violations.join('\n')}`;
  expect(result.violations, summary).toEqual([]);
  // The run was really chaotic: faults fired and the mid-run events happened.
  expect(
    Object.values(result.faults).reduce((a, b) => a + b, 0),
    summary,
  ).toBeGreaterThan(0);
  expect(result.disruptions.signedUrlExpiries, summary).toBe(1);
  expect(result.disruptions.tokenExpiries + result.disruptions.tokenRevocations, summary).toBeGreaterThan(0);
  if (!result.retryAmbiguous) expect(result.duplicates, summary).toBe(0);
}

describe('chaos: every record accounted for, nothing duplicated unless allowed, no secret leaked', () => {
  it('full workload, seed 101, retryAmbiguous off', { timeout: 120_000 }, async () => {
    const result = await runSeed({ seed: 101, size: FULL_WORKLOAD, retryAmbiguous: false });
    expectPassed(result);
    expect(result.buckets.sent + result.buckets.invalid + result.buckets.failed + result.buckets.unknown).toBe(
      FULL_WORKLOAD.records,
    );
  });

  it('full workload, seed 102, retryAmbiguous on', { timeout: 120_000 }, async () => {
    expectPassed(await runSeed({ seed: 102, size: FULL_WORKLOAD, retryAmbiguous: true }));
  });

  it('small workload, seeds 1 to 4, retryAmbiguous off and on', { timeout: 120_000 }, async () => {
    for (const pair of [
      [1, 2],
      [3, 4],
    ]) {
      const results = await Promise.all(
        pair.map((seed) => runSeed({ seed, size: SMALL_WORKLOAD, retryAmbiguous: seed % 2 === 0 })),
      );
      for (const result of results) expectPassed(result);
    }
  });
});
