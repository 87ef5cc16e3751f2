/**
 * 9. Real exports: the built CLI on a CSV written as a European bank exports it, read with
 * `--date-format`, `--decimal` and `--thousands`, against the same records in the forms it reads
 * without options (ISO 8601 date-times, plain amounts). Both in their own process, against the
 * minimal sink, alternating rounds. The reading options must cost little, and memory stay flat.
 */
import { alternate } from '../lib/alternate.js';
import { cliPublishArgs } from '../lib/cli-publish.js';
import { connectionEnv } from '../lib/client.js';
import { EUROPEAN_OPTIONS, ensureExportCsv } from '../lib/export-csv.js';
import { type ChildRun, runChildOk } from '../lib/measured-child.js';
import { makeRow } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median, ratio, toMB } from '../lib/stats.js';
import type { Benchmark } from './types.js';

const CONCURRENCY = 8;

async function counted(server: ServerProcess, rows: number, run: () => Promise<ChildRun>): Promise<ChildRun> {
  await server.reset();
  const result = await run();
  const { financeRecords } = await server.stats();
  if (financeRecords !== rows) throw new Error(`the sink counted ${financeRecords} of ${rows} records`);
  return result;
}

export const realExports: Benchmark = {
  name: 'real-exports',
  title: '9 real exports',
  async run(ctx) {
    const rows = ctx.quick ? 100_000 : 1_000_000;
    const rounds = ctx.quick ? 1 : 3;
    const plain = await ensureExportCsv(ctx.temp, rows, 'plain');
    const european = await ensureExportCsv(ctx.temp, rows, 'european');
    return withServer({ kind: 'sink', countRecords: true }, async (server) => {
      const env = connectionEnv(server);
      const cli = (csv: string, extra: string[]) => () =>
        counted(server, rows, () =>
          runChildOk({
            command: process.execPath,
            args: [...cliPublishArgs(csv, server.appId, CONCURRENCY), ...extra],
            env,
            measureRss: true,
          }),
        );
      ctx.log(`real exports: ${rounds} rounds at ${rows.toLocaleString('en-US')} rows`);
      const samples = await alternate(rounds, [
        { name: 'options', run: cli(european, EUROPEAN_OPTIONS) },
        { name: 'plain', run: cli(plain, []) },
      ]);
      const withOptions = samples.get('options') ?? [];
      const without = samples.get('plain') ?? [];
      const seconds = (runs: ChildRun[]) => runs.map((run) => run.wallMs / 1000);
      const rss = (runs: ChildRun[]) => runs.map((run) => toMB(run.maxRssBytes ?? Number.NaN));
      const label = `${rows.toLocaleString('en-US')} rows`;
      return [
        makeRow({
          benchmark: this.title,
          metric: `CLI time, --date-format --decimal --thousands, ${label}`,
          unit: 's',
          ours: median(seconds(withOptions)),
          baselineName: 'same records, ISO dates and plain amounts, no options',
          baseline: median(seconds(without)),
          ratio: ratio(median(seconds(withOptions)), median(seconds(without))),
          target: { of: 'ratio', op: '<=', limit: 1.2 },
          samples: { ours: seconds(withOptions), baseline: seconds(without) },
          note: 'process wall time, startup included',
        }),
        makeRow({
          benchmark: this.title,
          metric: `peak RSS, CLI, --date-format --decimal --thousands, ${label}`,
          unit: 'MB',
          ours: median(rss(withOptions)),
          baselineName: 'same records, no options',
          baseline: median(rss(without)),
          ratio: ratio(median(rss(withOptions)), median(rss(without))),
          target: { of: 'value', op: '<=', limit: 150 },
          samples: { ours: rss(withOptions), baseline: rss(without) },
        }),
      ];
    });
  },
};
