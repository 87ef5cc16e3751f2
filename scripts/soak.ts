/**
 * The long-lived service soak on every runtime: `tsx scripts/soak.ts [--calls N] [--runtimes a,b]
 * [--max-growth-mb M] [--parallel P]`. Each runtime runs `bench/children/soak-signal.ts` (one
 * client, calls of one record in bursts of 50, all given one shutdown signal, heap measured after
 * forced GC) and the script fails when the heap grew by more than M MB or the runtime printed a
 * warning (MaxListenersExceededWarning). Node 22 and 24, Bun and Deno come from the npm registry.
 * Runtimes run P at a time (default 2): each is a process of its own, measuring its own heap.
 */
import { pathToFileURL } from 'node:url';
import { buildChildren } from '../bench/lib/build-children.js';
import { RUNTIMES, type SoakResult, soakOn } from '../bench/lib/soak.js';

function option(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

async function main(argv: readonly string[]): Promise<number> {
  const calls = Number(option(argv, '--calls') ?? 100_000);
  const maxGrowthMb = Number(option(argv, '--max-growth-mb') ?? 3);
  const runtimes = (option(argv, '--runtimes') ?? Object.keys(RUNTIMES).join(',')).split(',');
  const parallel = Number(option(argv, '--parallel') ?? 2);
  if (!Number.isInteger(parallel) || parallel < 1)
    throw new Error(`--parallel must be a whole number ≥ 1, not ${parallel}`);
  await buildChildren();
  const rows: string[] = [
    '| runtime | calls | heap before (MB) | heap after (MB) | growth (MB) | warnings | time (s) |',
    '|---|---|---|---|---|---|---|',
  ];
  const failures: string[] = [];
  const results: SoakResult[] = [];
  let next = 0;
  const worker = async () => {
    for (let at = next++; at < runtimes.length; at = next++) {
      const runtime = runtimes[at] as string;
      process.stderr.write(`[soak] ${runtime}: ${calls} calls…\n`);
      results[at] = await soakOn(runtime, { calls });
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, runtimes.length) }, worker));
  for (const result of results) {
    rows.push(
      `| ${result.runtime} | ${result.calls} | ${result.heapBeforeMB} | ${result.heapAfterMB} | ${result.growthMB} | ${result.warnings.length} | ${(result.durationMs / 1000).toFixed(1)} |`,
    );
    if (result.growthMB > maxGrowthMb) failures.push(`${result.runtime}: heap grew ${result.growthMB} MB`);
    for (const warning of result.warnings) failures.push(`${result.runtime}: ${warning}`);
  }
  process.stdout.write(`${rows.join('\n')}\n`);
  for (const failure of failures) process.stdout.write(`FAIL ${failure} (limit ${maxGrowthMb} MB, no warnings)\n`);
  return failures.length > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(2);
    },
  );
}
