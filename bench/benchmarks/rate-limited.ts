/**
 * 4. Rate-limited goodput: 300 batches at concurrency 16 against the emulator (real HTTP, another
 * process) limited to 50 requests/s. The publisher's adaptive window (the default) against the
 * same run with `adaptive: false`. 429s are counted from the emulator's request log.
 */
import { alternate } from '../lib/alternate.js';
import { clientFor } from '../lib/client.js';
import { financeRecords } from '../lib/records.js';
import { makeRow } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median, ratio } from '../lib/stats.js';
import type { Benchmark } from './types.js';

const LIMIT = { requests: 50, windowMs: 1000 };
const CONCURRENCY = 16;
const BATCH_SIZE = 10;

interface Sample {
  goodput: number;
  share429: number;
  failed: number;
}

async function publishRun(server: ServerProcess, batches: number, adaptive: boolean): Promise<Sample> {
  await server.reset();
  const client = clientFor(server);
  await client.tokens.getToken(); // the token service is not rate limited; keep it out of the timing
  const records = financeRecords(batches * BATCH_SIZE);
  const started = performance.now();
  const report = await client.finance.publish(server.appId, records, {
    batchSize: BATCH_SIZE,
    concurrency: CONCURRENCY,
    adaptive,
  });
  const seconds = (performance.now() - started) / 1000;
  const stats = await server.stats();
  return {
    goodput: report.batchesSent / seconds,
    share429: stats.financeRequests === 0 ? Number.NaN : (100 * stats.financeRateLimited) / stats.financeRequests,
    failed: report.batchesFailed + report.batchesUnknown,
  };
}

export const rateLimited: Benchmark = {
  name: 'rate-limit',
  title: '4 rate-limited goodput',
  async run(ctx) {
    const batches = ctx.quick ? 100 : 300;
    const rounds = ctx.quick ? 1 : 3;
    return withServer({ kind: 'emulator', rateLimit: LIMIT }, async (server) => {
      ctx.log(`rate-limit: ${rounds} rounds of ${batches} batches, limit ${LIMIT.requests}/s`);
      const samples = await alternate(rounds, [
        { name: 'adaptive', run: () => publishRun(server, batches, true) },
        { name: 'fixed', run: () => publishRun(server, batches, false) },
      ]);
      const ours = samples.get('adaptive') ?? [];
      const fixed = samples.get('fixed') ?? [];
      const pick = (list: Sample[], key: keyof Sample) => list.map((sample) => sample[key]);
      const failed = (list: Sample[]) => pick(list, 'failed').reduce((a, b) => a + b, 0);
      const note = `${batches} batches of ${BATCH_SIZE}; failed batches: adaptive ${failed(ours)}, fixed ${failed(fixed)} (all rounds)`;
      return [
        makeRow({
          benchmark: this.title,
          metric: `accepted batches/s (limit ${LIMIT.requests}/s)`,
          unit: '/s',
          ours: median(pick(ours, 'goodput')),
          baselineName: 'adaptive: false',
          baseline: median(pick(fixed, 'goodput')),
          ratio: ratio(median(pick(ours, 'goodput')), median(pick(fixed, 'goodput'))),
          target: { of: 'value', op: '>=', limit: 0.9 * LIMIT.requests },
          samples: { ours: pick(ours, 'goodput'), baseline: pick(fixed, 'goodput') },
          note,
        }),
        makeRow({
          benchmark: this.title,
          metric: 'requests answered 429',
          unit: '%',
          ours: median(pick(ours, 'share429')),
          baselineName: 'adaptive: false',
          baseline: median(pick(fixed, 'share429')),
          target: { of: 'value', op: '<=', limit: 10 },
          samples: { ours: pick(ours, 'share429'), baseline: pick(fixed, 'share429') },
        }),
      ];
    });
  },
};
