/**
 * 1. Publish throughput: `client.finance.publish` (validation on, batch 1000, concurrency 8)
 * against JSON.stringify + fetch, raw undici.request, and a fetch script that validates each
 * record with the zod schema, to the minimal sink in another process.
 */
import { financeUrl } from '../../src/finance/publisher.js';
import { alternate, timed } from '../lib/alternate.js';
import { clientFor } from '../lib/client.js';
import { financeRecords } from '../lib/records.js';
import { makeRow, type Row } from '../lib/row.js';
import { withServer } from '../lib/server-process.js';
import { median, ratio } from '../lib/stats.js';
import { type PlainPublish, publishWithFetch, publishWithUndici, publishWithZodAndFetch } from './publish-baselines.js';
import type { Benchmark } from './types.js';

const BATCH_SIZE = 1000;
const CONCURRENCY = 8;

export const publishThroughput: Benchmark = {
  name: 'publish',
  title: '1 publish throughput',
  async run(ctx) {
    const count = ctx.quick ? 50_000 : 200_000;
    const rounds = ctx.quick ? 1 : 7;
    const records = financeRecords(count);
    return withServer({ kind: 'sink' }, async (server) => {
      const client = clientFor(server);
      const token = (await client.tokens.getToken()).accessToken;
      const url = financeUrl(new URL(server.url), server.appId).href;
      const plain = (slice: number): PlainPublish => ({
        url,
        token,
        records: records.slice(0, slice),
        batchSize: BATCH_SIZE,
        concurrency: CONCURRENCY,
      });
      const sdk = async (input: typeof records) => {
        const report = await client.finance.publish(server.appId, input, {
          batchSize: BATCH_SIZE,
          concurrency: CONCURRENCY,
        });
        if (report.recordsSent !== input.length) throw new Error(`SDK sent ${report.recordsSent} of ${input.length}`);
      };
      // Warm-up, untimed: lets the JIT compile every path before the rounds.
      const warm = Math.min(count, 20_000);
      await sdk(records.slice(0, warm));
      await publishWithFetch(plain(warm));
      await publishWithUndici(plain(warm));
      await publishWithZodAndFetch(plain(warm));
      ctx.log(`publish: ${rounds} rounds of ${count} records`);
      const samples = await alternate(rounds, [
        { name: 'sdk', run: () => timed(() => sdk(records)) },
        { name: 'fetch', run: () => timed(() => publishWithFetch(plain(count))) },
        { name: 'undici', run: () => timed(() => publishWithUndici(plain(count))) },
        { name: 'zod', run: () => timed(() => publishWithZodAndFetch(plain(count))) },
      ]);
      const ours = samples.get('sdk') ?? [];
      const viaFetch = samples.get('fetch') ?? [];
      const viaUndici = samples.get('undici') ?? [];
      const viaZod = samples.get('zod') ?? [];
      const sdkMs = median(ours);
      const note = `${count.toLocaleString('en-US')} records, ${Math.round(count / (sdkMs / 1000)).toLocaleString('en-US')} records/s (SDK)`;
      const rows: Row[] = [
        makeRow({
          benchmark: this.title,
          metric: `time, ${count / 1000}k records (SDK vs fetch script)`,
          unit: 'ms',
          ours: sdkMs,
          baselineName: 'stringify+fetch',
          baseline: median(viaFetch),
          ratio: ratio(sdkMs, median(viaFetch)),
          target: { of: 'ratio', op: '<=', limit: 1.0 },
          samples: { ours, baseline: viaFetch },
          note,
        }),
        makeRow({
          benchmark: this.title,
          metric: 'time vs raw undici.request (ceiling)',
          unit: 'ms',
          ours: sdkMs,
          baselineName: 'undici.request',
          baseline: median(viaUndici),
          ratio: ratio(sdkMs, median(viaUndici)),
          samples: { ours, baseline: viaUndici },
        }),
        makeRow({
          benchmark: this.title,
          metric: 'time vs a fetch script that validates each record with zod',
          unit: 'ms',
          ours: sdkMs,
          baselineName: 'zod parse+stringify+fetch',
          baseline: median(viaZod),
          ratio: ratio(sdkMs, median(viaZod)),
          samples: { ours, baseline: viaZod },
          note: 'the script parses each record with push-api-client/schema, as a user who validates would',
        }),
      ];
      return rows;
    });
  },
};
