/**
 * Network row: publish 200,000 records through the delay proxy, the SDK with its defaults against
 * `JSON.stringify` + `fetch` scripts at fixed concurrency 4, 8, 16 and 32, alternating rounds, in
 * this process (warm code, a cached token). Every run starts with no open connection, as a job
 * that publishes once would. The SDK's window over its median run is kept for the plot. One more
 * row, for information: a long-lived client's later publishes, which start their window where its
 * previous publish left it.
 */
import { MemoryTokenStore } from '../../src/auth/token-manager.js';
import { financeUrl } from '../../src/finance/publisher.js';
import { alternate, timed } from '../lib/alternate.js';
import { clientFor } from '../lib/client.js';
import type { FarServer } from '../lib/far-server.js';
import { financeRecords } from '../lib/records.js';
import { makeRow, type Row } from '../lib/row.js';
import { median, ratio } from '../lib/stats.js';
import { versusBest } from '../lib/versus-best.js';
import { WindowRecorder, type WindowTrace } from '../lib/window-trace.js';
import { publishWithFetch } from './publish-baselines.js';
import type { BenchContext } from './types.js';

export const SCRIPT_CONCURRENCIES = [4, 8, 16, 32] as const;
const BATCH_SIZE = 1000;

export async function networkPublishRows(ctx: BenchContext, far: FarServer, benchmark: string): Promise<Row[]> {
  const count = ctx.quick ? 20_000 : 200_000;
  const rounds = ctx.quick ? 1 : 3;
  const records = financeRecords(count);
  const { server } = far;
  const tokenStore = new MemoryTokenStore();
  const token = (await clientFor(server, { tokenStore }).tokens.getToken()).accessToken;
  const url = financeUrl(new URL(server.url), server.appId).href;
  const recorder = new WindowRecorder('finance');
  const traces: WindowTrace[] = [];
  const peaks: number[] = [];
  const batches = Math.ceil(count / BATCH_SIZE);

  /** One run from no open connection and a cached token; the sink must answer one request per batch. */
  const run = async (what: string, publish: () => Promise<void>): Promise<number> => {
    await far.fresh();
    const ms = await timed(publish);
    const { sink } = await far.counts();
    if (sink.financeRequests !== batches) {
      throw new Error(`${what}: ${sink.financeRequests} requests for ${batches} batches`);
    }
    // Every side starts with its token: the SDK from the shared store, the scripts from the harness.
    if (sink.tokenRequests !== 0) throw new Error(`${what}: asked for ${sink.tokenRequests} token(s) during the run`);
    return ms;
  };
  const sdk = async (input: typeof records) => {
    // A new client per run, so that no run inherits the window an earlier one learnt; the token
    // store is shared, as the scripts share one token.
    const client = clientFor(server, { tokenStore, hooks: recorder.hooks() });
    recorder.start();
    const report = await client.finance.publish(server.appId, input);
    if (report.recordsSent !== input.length) throw new Error(`SDK sent ${report.recordsSent} of ${input.length}`);
  };
  // One client for every run: a service that publishes every few minutes with one client.
  const residentStarts: number[] = [];
  const resident = clientFor(server, {
    tokenStore,
    hooks: { concurrency: (event) => void (event.reason === 'start' && residentStarts.push(event.limit)) },
  });
  const residentPublish = async (input: typeof records) => {
    const report = await resident.finance.publish(server.appId, input);
    if (report.recordsSent !== input.length) throw new Error(`SDK sent ${report.recordsSent} of ${input.length}`);
  };
  const script = (concurrency: number, slice = count) =>
    publishWithFetch({ url, token, records: records.slice(0, slice), batchSize: BATCH_SIZE, concurrency });

  // Warm-up, untimed: lets the JIT compile every path before the rounds.
  const warm = Math.min(count, 20_000);
  await sdk(records.slice(0, warm));
  await script(16, warm);
  // The long-lived client's earlier publish, whose window its timed ones start from.
  await far.fresh();
  await residentPublish(records);
  ctx.log(`network publish: ${rounds} rounds of ${count} records, SDK and 4 scripts`);
  const samples = await alternate(rounds, [
    {
      name: 'sdk',
      run: async () => {
        const ms = await run('SDK', () => sdk(records));
        traces.push(recorder.trace());
        peaks.push(recorder.peakInFlight);
        return ms;
      },
    },
    ...SCRIPT_CONCURRENCIES.map((concurrency) => ({
      name: `fetch ×${concurrency}`,
      run: () => run(`fetch ×${concurrency}`, () => script(concurrency)),
    })),
    { name: 'sdk, long-lived client', run: () => run('SDK, long-lived client', () => residentPublish(records)) },
  ]);
  const sdkMs = samples.get('sdk') ?? [];
  const middle = sdkMs.indexOf(median(sdkMs.length % 2 === 1 ? sdkMs : sdkMs.slice(1)));
  const trace = traces[middle] ?? traces[0];
  const limitEvents = traces.reduce((sum, each) => sum + each.limit.length, 0);
  const residentMs = samples.get('sdk, long-lived client') ?? [];
  const bestScript = SCRIPT_CONCURRENCIES.map((c) => samples.get(`fetch ×${c}`) ?? []).reduce((best, each) =>
    median(each) < median(best) ? each : best,
  );
  const longLived = makeRow({
    benchmark,
    metric: `publish ${count.toLocaleString('en-US')} records: a long-lived client's next publish vs the best script`,
    unit: 'ms',
    ours: median(residentMs),
    baselineName: 'best fixed-concurrency script',
    baseline: median(bestScript),
    ratio: ratio(median(residentMs), median(bestScript)),
    samples: { ours: residentMs, baseline: bestScript },
    note: `the same client for every run: its window starts where its previous publish left it (timed runs started at ${residentStarts.slice(1).join(', ')})`,
  });
  const rows = versusBest({
    benchmark,
    work: `publish ${count.toLocaleString('en-US')} records`,
    unit: 'ms',
    higherIsBetter: false,
    sdk: sdkMs,
    scripts: new Map(SCRIPT_CONCURRENCIES.map((c) => [`fetch ×${c}`, samples.get(`fetch ×${c}`) ?? []])),
    target: { of: 'ratio', op: '<=', limit: 1.0 },
    note: `SDK peak in flight ${Math.min(...peaks)}–${Math.max(...peaks)}, ${limitEvents} concurrency events`,
    ...(trace && { trace }),
  });
  return [...rows, longLived];
}
