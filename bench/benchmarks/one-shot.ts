/**
 * 6. One-shot processes: publish as a cron job or a CI step does it. Each sample is a whole
 * process, from its start to its exit: the built package imported, one publish, exit. The SDK
 * and a JSON.stringify + fetch script take turns against the same sink, on records whose optional
 * fields vary (a quarter carry them, or all), from an array and from an async iterable. Beside
 * them, the CLI on a CSV against a csv-parse + fetch script, and the cold start of
 * `import('push-api-client')` followed by one publish.
 */
import { alternate } from '../lib/alternate.js';
import { cliPublishArgs } from '../lib/cli-publish.js';
import { connectionEnv } from '../lib/client.js';
import { ensureCsv } from '../lib/csv-file.js';
import { type ChildRun, runChildOk } from '../lib/measured-child.js';
import { type InputKind, type OneShotArgs, oneShotArgv } from '../lib/one-shot-args.js';
import { childScript } from '../lib/paths.js';
import type { OptionalFields } from '../lib/records.js';
import { makeRow, type Row, type Target } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median, ratio } from '../lib/stats.js';
import type { BenchContext, Benchmark } from './types.js';

const CONCURRENCY = 8;
const TITLE = '6 one-shot processes';

interface Output {
  sent: number;
  importMs?: number;
  doneMs: number;
}

async function runOnce(server: ServerProcess, script: string, args: OneShotArgs): Promise<ChildRun & Output> {
  const run = await runChildOk({
    command: process.execPath,
    args: [childScript(script), ...oneShotArgv(args)],
    env: connectionEnv(server),
  });
  const output = JSON.parse(run.stdout) as Output;
  if (output.sent !== args.count) throw new Error(`${script}: sent ${output.sent} of ${args.count}`);
  return { ...run, ...output };
}

async function compare(server: ServerProcess, args: OneShotArgs, rounds: number) {
  const samples = await alternate(rounds, [
    { name: 'sdk', run: () => runOnce(server, 'publish-once', args) },
    { name: 'fetch', run: () => runOnce(server, 'publish-once-fetch', args) },
  ]);
  return { sdk: samples.get('sdk') ?? [], fetch: samples.get('fetch') ?? [] };
}

const wall = (runs: ChildRun[]) => runs.map((run) => run.wallMs);
const inputName = (input: InputKind) => (input === 'array' ? 'array' : 'async iterable');
const optionalName = (optional: OptionalFields) => (optional === 'all' ? 'all' : 'a quarter');

async function publishRows(ctx: BenchContext, server: ServerProcess): Promise<Row[]> {
  const sizes = ctx.quick
    ? [{ count: 10_000, rounds: 2, limit: 1.25 }]
    : [
        { count: 200_000, rounds: 7, limit: 1.05 },
        { count: 10_000, rounds: 11, limit: 1.25 },
      ];
  const optionals: OptionalFields[] = ctx.quick ? ['quarter'] : ['quarter', 'all'];
  const rows: Row[] = [];
  for (const { count, rounds, limit } of sizes) {
    for (const optional of optionals) {
      for (const input of ['array', 'async'] as const) {
        const args = { count, input, optional, concurrency: CONCURRENCY };
        ctx.log(`one-shot: ${rounds} rounds of ${count} records, ${inputName(input)}, ${optional}`);
        const { sdk, fetch } = await compare(server, args, rounds);
        const target: Target = { of: 'ratio', op: '<=', limit };
        rows.push(
          makeRow({
            benchmark: TITLE,
            metric: `publish ${count / 1000}k records, ${inputName(input)}, ${optionalName(optional)} with optional fields`,
            unit: 'ms',
            ours: median(wall(sdk)),
            baselineName: 'stringify+fetch script',
            baseline: median(wall(fetch)),
            ratio: ratio(median(wall(sdk)), median(wall(fetch))),
            target,
            samples: { ours: wall(sdk), baseline: wall(fetch) },
            note: `whole process, start to exit; ${rounds} alternating runs, medians`,
          }),
        );
      }
    }
  }
  return rows;
}

/** `import('push-api-client')` and one publish of one batch, from the process's start. */
async function coldStartRow(ctx: BenchContext, server: ServerProcess): Promise<Row> {
  const rounds = ctx.quick ? 1 : 15;
  const args: OneShotArgs = { count: 1000, input: 'array', optional: 'quarter', concurrency: CONCURRENCY };
  ctx.log(`one-shot: ${rounds} rounds of the cold start`);
  const { sdk, fetch } = await compare(server, args, rounds);
  const done = (runs: Output[]) => runs.map((run) => run.doneMs);
  const imports = sdk.map((run) => run.importMs ?? Number.NaN);
  return makeRow({
    benchmark: TITLE,
    metric: "cold start: import('push-api-client') + one publish of 1000 records",
    unit: 'ms',
    ours: median(done(sdk)),
    baselineName: 'stringify+fetch script',
    baseline: median(done(fetch)),
    ratio: ratio(median(done(sdk)), median(done(fetch))),
    samples: { ours: done(sdk), baseline: done(fetch) },
    note: `from process start to the publish's end; the import alone takes ${median(imports).toFixed(1)} ms`,
  });
}

async function cliRow(ctx: BenchContext, server: ServerProcess): Promise<Row> {
  const rows = ctx.quick ? 10_000 : 100_000;
  const rounds = ctx.quick ? 1 : 5;
  const csv = await ensureCsv(ctx.temp, rows);
  const env = connectionEnv(server);
  const cli = () =>
    runChildOk({ command: process.execPath, args: cliPublishArgs(csv, server.appId, CONCURRENCY), env });
  const script = () =>
    runChildOk({ command: process.execPath, args: [childScript('stream-publish'), csv, String(CONCURRENCY)], env });
  ctx.log(`one-shot: ${rounds} rounds of the CLI on ${rows} rows`);
  const samples = await alternate(rounds, [
    { name: 'cli', run: cli },
    { name: 'script', run: script },
  ]);
  const ours = wall(samples.get('cli') ?? []);
  const baseline = wall(samples.get('script') ?? []);
  return makeRow({
    benchmark: TITLE,
    metric: `CLI on a ${rows / 1000}k-row CSV`,
    unit: 'ms',
    ours: median(ours),
    baselineName: 'csv-parse + fetch script',
    baseline: median(baseline),
    ratio: ratio(median(ours), median(baseline)),
    samples: { ours, baseline },
    note: 'whole process; the CLI also validates, tracks lines and writes its report',
  });
}

export const oneShot: Benchmark = {
  name: 'oneshot',
  title: TITLE,
  async run(ctx) {
    return withServer({ kind: 'sink' }, async (server) => [
      ...(await publishRows(ctx, server)),
      await coldStartRow(ctx, server),
      await cliRow(ctx, server),
    ]);
  },
};
