/**
 * 9. Durable checkpoint: what flushing the checkpoint to the disk costs a whole CLI run. The built
 * CLI publishes a generated CSV with `--checkpoint`, each checkpoint write fsync'd before its
 * rename and its directory after (the default), alternating with the same run with both flushes
 * off (`PUSH_CHECKPOINT_FSYNC=0`, an undocumented switch that exists for this row only). Each run
 * starts a fresh checkpoint, so both write it the same number of times.
 */
import { rm } from 'node:fs/promises';
import { alternate } from '../lib/alternate.js';
import { cliPublishArgs } from '../lib/cli-publish.js';
import { connectionEnv } from '../lib/client.js';
import { ensureCsv } from '../lib/csv-file.js';
import { type ChildRun, runChildOk } from '../lib/measured-child.js';
import { makeRow } from '../lib/row.js';
import { withServer } from '../lib/server-process.js';
import { median, ratio } from '../lib/stats.js';
import type { Benchmark } from './types.js';

const CONCURRENCY = 8;

export const checkpointFsync: Benchmark = {
  name: 'checkpoint-fsync',
  title: '9 durable checkpoint',
  async run(ctx) {
    const rows = ctx.quick ? 20_000 : 1_000_000;
    const rounds = ctx.quick ? 1 : 3;
    const csv = await ensureCsv(ctx.temp, rows);
    return withServer({ kind: 'sink' }, async (server) => {
      const run = async (fsync: boolean): Promise<ChildRun> => {
        const checkpoint = ctx.temp.path(`checkpoint-${fsync ? 'fsync' : 'nofsync'}.json`);
        await rm(checkpoint, { force: true });
        const args = [...cliPublishArgs(csv, server.appId, CONCURRENCY), '--checkpoint', checkpoint];
        const env = { ...connectionEnv(server), ...(fsync ? {} : { PUSH_CHECKPOINT_FSYNC: '0' }) };
        const result = await runChildOk({ command: process.execPath, args, env });
        const report = JSON.parse(result.stdout) as { recordsSent: number };
        if (report.recordsSent !== rows) throw new Error(`the CLI sent ${report.recordsSent} of ${rows}`);
        return result;
      };
      ctx.log(`checkpoint-fsync: ${rounds} rounds of the CLI on ${rows} rows, with and without fsync`);
      const samples = await alternate(rounds, [
        { name: 'fsync', run: () => run(true) },
        { name: 'no-fsync', run: () => run(false) },
      ]);
      const wall = (name: string) => (samples.get(name) ?? []).map((sample) => sample.wallMs);
      const ours = wall('fsync');
      const baseline = wall('no-fsync');
      return [
        makeRow({
          benchmark: this.title,
          metric: `CLI with --checkpoint on a ${rows / 1000}k-row CSV, checkpoint fsync'd`,
          unit: 'ms',
          ours: median(ours),
          baselineName: 'same run, no fsync',
          baseline: median(baseline),
          ratio: ratio(median(ours), median(baseline)),
          samples: { ours, baseline },
          note: `whole process; ${rounds} alternating runs, medians; the checkpoint is written durably before each batch leaves (concurrent reservations share a write) and in the background after it settles`,
        }),
      ];
    });
  },
};
