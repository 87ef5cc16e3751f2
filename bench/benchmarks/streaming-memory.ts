/**
 * 2. Streaming memory: the built CLI (`push-api finance publish`) on a generated CSV, in its own
 * process, against the minimal sink in another (it parses each body only to count the records;
 * it validates nothing). Beside it, a naive read-everything-then-send script, and a hand-written
 * streaming script (csv-parse + fetch), the floor of a Node program doing the job. Two sizes show
 * that time grows with the input and memory does not.
 */
import { alternate } from '../lib/alternate.js';
import { cliPublishArgs } from '../lib/cli-publish.js';
import { connectionEnv } from '../lib/client.js';
import { ensureCsv } from '../lib/csv-file.js';
import { type ChildRun, runChildOk } from '../lib/measured-child.js';
import { childScript } from '../lib/paths.js';
import { makeRow, type Row } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median, ratio, toMB } from '../lib/stats.js';
import type { BenchContext, Benchmark } from './types.js';

const CONCURRENCY = 8;

async function counted(
  server: ServerProcess,
  rows: number,
  what: string,
  run: () => Promise<ChildRun>,
): Promise<ChildRun> {
  await server.reset();
  const result = await run();
  const { financeRecords } = await server.stats();
  if (financeRecords !== rows) throw new Error(`${what}: the sink counted ${financeRecords} of ${rows} records`);
  return result;
}

interface SizeResult {
  rows: number;
  cli: ChildRun[];
  naive: ChildRun[];
  streaming: ChildRun[];
}

async function measureSize(
  ctx: BenchContext,
  server: ServerProcess,
  rows: number,
  rounds: number,
): Promise<SizeResult> {
  const csv = await ensureCsv(ctx.temp, rows);
  const env = connectionEnv(server);
  const cli = () =>
    runChildOk({
      command: process.execPath,
      args: cliPublishArgs(csv, server.appId, CONCURRENCY),
      env,
      measureRss: true,
    });
  const naive = () =>
    runChildOk({
      command: process.execPath,
      args: [childScript('naive-publish'), csv, String(CONCURRENCY)],
      env,
      measureRss: true,
    });
  const streaming = () =>
    runChildOk({
      command: process.execPath,
      args: [childScript('stream-publish'), csv, String(CONCURRENCY)],
      env,
      measureRss: true,
    });
  ctx.log(`streaming: ${rounds} rounds at ${rows.toLocaleString('en-US')} rows`);
  const samples = await alternate(rounds, [
    { name: 'cli', run: () => counted(server, rows, 'CLI', cli) },
    { name: 'naive', run: () => counted(server, rows, 'naive script', naive) },
    { name: 'streaming', run: () => counted(server, rows, 'streaming script', streaming) },
  ]);
  return {
    rows,
    cli: samples.get('cli') ?? [],
    naive: samples.get('naive') ?? [],
    streaming: samples.get('streaming') ?? [],
  };
}

const rss = (runs: ChildRun[]) => runs.map((run) => toMB(run.maxRssBytes ?? Number.NaN));
const rate = (rows: number, runs: ChildRun[]) => runs.map((run) => rows / (run.wallMs / 1000));

export const streamingMemory: Benchmark = {
  name: 'streaming',
  title: '2 streaming memory',
  async run(ctx) {
    const [small, large] = ctx.quick ? [10_000, 100_000] : [100_000, 1_000_000];
    return withServer({ kind: 'sink', countRecords: true }, async (server) => {
      const a = await measureSize(ctx, server, small, ctx.quick ? 1 : 3);
      const b = await measureSize(ctx, server, large, ctx.quick ? 1 : 3);
      const rows: Row[] = [];
      for (const size of [b, a]) {
        const label = `${size.rows.toLocaleString('en-US')} rows`;
        const cliRss = rss(size.cli);
        const naiveRss = rss(size.naive);
        rows.push(
          makeRow({
            benchmark: this.title,
            metric: `peak RSS, CLI, ${label}`,
            unit: 'MB',
            ours: median(cliRss),
            baselineName: 'read-all script',
            baseline: median(naiveRss),
            ratio: ratio(median(cliRss), median(naiveRss)),
            target: { of: 'value', op: '<=', limit: 150 },
            samples: { ours: cliRss, baseline: naiveRss },
          }),
          makeRow({
            benchmark: this.title,
            metric: `peak RSS, CLI vs a streaming script, ${label}`,
            unit: 'MB',
            ours: median(cliRss),
            baselineName: 'csv-parse + fetch script',
            baseline: median(rss(size.streaming)),
            ratio: ratio(median(cliRss), median(rss(size.streaming))),
            samples: { ours: cliRss, baseline: rss(size.streaming) },
            note: 'the least a Node program needs to stream the file: no validation, line tracking or checkpoint',
          }),
        );
        const cliRate = rate(size.rows, size.cli);
        const naiveRate = rate(size.rows, size.naive);
        rows.push(
          makeRow({
            benchmark: this.title,
            metric: `records/s, CLI, ${label} (validated)`,
            unit: 'rec/s',
            ours: median(cliRate),
            baselineName: 'read-all script',
            baseline: median(naiveRate),
            ratio: ratio(median(cliRate), median(naiveRate)),
            samples: { ours: cliRate, baseline: naiveRate },
            note: 'process wall time, startup included; the read-all script does not validate',
          }),
        );
      }
      const time = (size: SizeResult) => median(size.cli.map((run) => run.wallMs));
      rows.push(
        makeRow({
          benchmark: this.title,
          metric: `CLI time ${large / 1000}k ÷ ${small / 1000}k rows (linear = ${large / small})`,
          unit: '',
          ours: ratio(time(b), time(a)),
          samples: { ours: [time(b), time(a)] },
        }),
        makeRow({
          benchmark: this.title,
          metric: `CLI peak RSS ${large / 1000}k ÷ ${small / 1000}k rows (flat = 1)`,
          unit: '',
          ours: ratio(median(rss(b.cli)), median(rss(a.cli))),
          samples: { ours: [median(rss(b.cli)), median(rss(a.cli))] },
        }),
      );
      return rows;
    });
  },
};
