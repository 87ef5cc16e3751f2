/**
 * Many chaos seeds: `npm run chaos -- --seeds 200 [--first 1] [--parallel 4] [--full] [--verbose]`.
 *
 * Each seed runs test/chaos/run-seed.ts with the many-seeds workload (5,000 records, 8 files up to
 * 1 MB; `--full` uses the full workload: 100,000 records and 50 files up to 20 MB), every odd seed with
 * `retryAmbiguous` on. Seeds run `--parallel` at a time: a seed spends most of its time waiting
 * out backoff and Retry-After, not computing. Prints one row per seed and totals, and exits 1 if
 * any seed violated an invariant (its violations are printed under the table).
 */
import { parseArgs } from 'node:util';
import { runSeed, type SeedResult } from '../test/chaos/run-seed.js';
import { formatTotals, tableHeader, tableRow, totals } from '../test/chaos/table.js';
import { FULL_WORKLOAD, MANY_SEEDS_WORKLOAD } from '../test/chaos/workload.js';

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${value}`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seeds: { type: 'string' },
      first: { type: 'string' },
      parallel: { type: 'string' },
      full: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
    },
  });
  const count = positiveInt(values.seeds, 'seeds', 20);
  const first = positiveInt(values.first, 'first', 1);
  const parallel = positiveInt(values.parallel, 'parallel', values.full ? 1 : 4);
  const size = values.full ? FULL_WORKLOAD : MANY_SEEDS_WORKLOAD;
  const seeds = Array.from({ length: count }, (_, i) => first + i);
  console.log(
    `chaos: ${count} seeds from ${first}, ${size.records} records and ${size.files} files (≤ ${size.maxFileBytes} B) per seed, ${parallel} at a time`,
  );
  console.log(tableHeader());
  const started = performance.now();
  const results: SeedResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < seeds.length) {
      const seed = seeds[next++] as number;
      const result = await runSeed({
        seed,
        size,
        retryAmbiguous: seed % 2 === 1,
        ...(values.verbose && { onLog: (line: string) => console.error(`[${seed}] ${line}`) }),
      });
      results.push(result);
      console.log(tableRow(result));
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, seeds.length) }, worker));
  const wallMs = performance.now() - started;
  results.sort((a, b) => a.seed - b.seed);
  const failed = results.filter((r) => r.violations.length > 0);
  for (const r of failed) console.log(`seed ${r.seed} violations:\n  ${r.violations.join('\n  ')}`);
  console.log(formatTotals(totals(results), wallMs));
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
