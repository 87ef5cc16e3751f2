/**
 * The benchmark harness: `tsx bench/run.ts [--quick] [--only <name>] [--skip <name>]`. Runs each
 * benchmark (ours and its baselines alternating, several rounds), prints a markdown table on stdout
 * and writes `bench/results/latest.json`. Progress goes to stderr.
 */
import path from 'node:path';
import { BENCHMARKS } from './benchmarks/index.js';
import type { Benchmark } from './benchmarks/types.js';
import { parseArgs } from './lib/args.js';
import { buildChildren } from './lib/build-children.js';
import { ensureBuiltPackage } from './lib/ensure-dist.js';
import { REPO_ROOT } from './lib/paths.js';
import { describeRun, type RunResults, writeResults } from './lib/results.js';
import type { Row } from './lib/row.js';
import { markdownTable } from './lib/table.js';
import { TempFiles } from './lib/temp-files.js';

function select(only: readonly string[], skip: readonly string[]): Benchmark[] {
  const unknown = [...only, ...skip].filter((name) => !BENCHMARKS.some((benchmark) => benchmark.name === name));
  if (unknown.length > 0) {
    throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  }
  return BENCHMARKS.filter(
    (benchmark) => (only.length === 0 || only.includes(benchmark.name)) && !skip.includes(benchmark.name),
  );
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  const benchmarks = select(args.only, args.skip);
  const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
  const temp = new TempFiles();
  const started = performance.now();
  const rows: Row[] = [];
  const errors: RunResults['errors'] = [];
  const cleanup = () => void temp.removeAll();
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    log('compiling the measured children (bench/.build)');
    await buildChildren();
    // The CLI rows and the one-shot and fleet children run the package as installed: dist/.
    await ensureBuiltPackage(log);
    for (const benchmark of benchmarks) {
      log(`${benchmark.title}…`);
      const benchStarted = performance.now();
      try {
        rows.push(...(await benchmark.run({ quick: args.quick, temp, log })));
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`${benchmark.title} failed: ${message}`);
        errors.push({ benchmark: benchmark.title, message });
      }
      log(`${benchmark.title} took ${((performance.now() - benchStarted) / 1000).toFixed(1)} s`);
    }
  } finally {
    await temp.removeAll();
  }
  const command =
    `npm run bench --${args.quick ? ' --quick' : ''}${args.only.length > 0 ? ` --only ${args.only.join(',')}` : ''}` +
    `${args.skip.length > 0 ? ` --skip ${args.skip.join(',')}` : ''}`;
  const results = describeRun(args.quick ? 'quick' : 'full', command, performance.now() - started, rows, errors);
  const out = path.resolve(REPO_ROOT, args.out);
  await writeResults(out, results);
  process.stdout.write(
    `\n${markdownTable(rows)}\n\n${results.mode} run, ${results.cores} cores (${results.cpu}), Node ${results.node}, ` +
      `${(results.durationMs / 1000).toFixed(0)} s. Results: ${path.relative(REPO_ROOT, out)}\n`,
  );
  for (const error of errors) process.stdout.write(`\n${error.benchmark}: ERROR ${error.message.split('\n')[0]}\n`);
  return errors.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
