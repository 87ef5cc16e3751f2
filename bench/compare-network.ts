/**
 * Two builds of the SDK side by side over the emulated network of benchmark 10 (the delay proxy in
 * front of the sink), publishing 200,000 records with their defaults, beside the fetch script at
 * 32 in flight: the before/after check for a change to the adaptive window, which loopback cannot
 * show. Each build is a checkout with `dist/` built (see compare-builds.ts for making one):
 *
 *   npx tsx bench/compare-network.ts /tmp/before [after-dir, default this checkout] [--rounds 5] [--verbose]
 *
 * The path comes from the same variables as benchmark 10 (BENCH_NET_ONE_WAY_MS,
 * BENCH_NET_HANDSHAKE_RTTS, BENCH_NET_MBPS, BENCH_NET_SERVER_MS, BENCH_NET_SERVER_MS_PER_RECORD).
 * Every run starts with no open connection and a new client (a token from a store of its build,
 * as the script has its token); the three sides alternate in one process, so that the machine's
 * load weighs on all of them alike. `--verbose` prints each SDK run's window changes
 * (`s8 g32 l28`: start, grow, latency, with the window after each).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { financeUrl } from '../src/finance/publisher.js';
import { publishWithFetch } from './benchmarks/publish-baselines.js';
import { timed } from './lib/alternate.js';
import { connectionOptions } from './lib/client.js';
import { withFarServer } from './lib/far-server.js';
import { describeNetwork, networkSettings } from './lib/network-settings.js';
import { financeRecords } from './lib/records.js';
import type { ServerProcess } from './lib/server-process.js';
import { median } from './lib/stats.js';

/** What this script needs of a build. */
interface WindowEvent {
  reason: string;
  limit: number;
}
interface SdkClient {
  finance: { publish(appId: string, records: unknown[]): Promise<{ recordsSent: number }> };
  tokens: { getToken(): Promise<{ accessToken: string }> };
}
interface SdkModule {
  PushClient: new (options: Record<string, unknown>) => SdkClient;
  MemoryTokenStore: new () => object;
}

const RECORDS = 200_000;
const SCRIPT_CONCURRENCY = 32;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '5' }, verbose: { type: 'boolean', default: false } },
});
const [beforeDir, afterDir = '.'] = positionals;
if (beforeDir === undefined) {
  console.error('usage: tsx bench/compare-network.ts <before-dir> [after-dir] [--rounds 5] [--verbose]');
  process.exit(2);
}
const rounds = Number(values.rounds);
const load = async (dir: string) => (await import(path.join(path.resolve(dir), 'dist/index.js'))) as SdkModule;
const builds = { before: await load(beforeDir), after: await load(afterDir) };
const records = financeRecords(RECORDS);
const settings = networkSettings();
console.log(`${describeNetwork(settings)}; ${rounds} alternating rounds of ${RECORDS.toLocaleString('en-US')} records`);

/** A publish with a new client of `sdk` (its token from `tokenStore`), its window's changes kept in `log`. */
function sdkRun(sdk: SdkModule, server: ServerProcess, tokenStore: object, name: string) {
  const client = (hooks?: object) =>
    new sdk.PushClient({ ...connectionOptions(server), tokenStore, ...(hooks && { hooks }) });
  return {
    warm: () => client().tokens.getToken(),
    run: async () => {
      const changes: string[] = [];
      const hooks = { concurrency: (event: WindowEvent) => void changes.push(`${event.reason[0]}${event.limit}`) };
      const report = await client(hooks).finance.publish(server.appId, records);
      if (report.recordsSent !== RECORDS) throw new Error(`${name}: sent ${report.recordsSent} of ${RECORDS}`);
      if (values.verbose) console.log(`  ${name.padEnd(6)} window ${changes.join(' ')}`);
    },
  };
}

await withFarServer(settings, async (far) => {
  const { server } = far;
  const before = sdkRun(builds.before, server, new builds.before.MemoryTokenStore(), 'before');
  const after = sdkRun(builds.after, server, new builds.after.MemoryTokenStore(), 'after');
  await before.warm();
  const token = (await after.warm()).accessToken;
  const url = financeUrl(new URL(server.url), server.appId).href;
  const sides: Record<string, () => Promise<unknown>> = {
    [`script ×${SCRIPT_CONCURRENCY}`]: () =>
      publishWithFetch({ url, token, records, batchSize: 1000, concurrency: SCRIPT_CONCURRENCY }),
    before: before.run,
    after: after.run,
  };
  // One untimed run of each: compiled code, and no side the first to open connections.
  for (const run of Object.values(sides)) {
    await far.fresh();
    await run();
  }
  const times = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(sides)) {
      await far.fresh();
      times.set(name, [...(times.get(name) ?? []), await timed(run)]);
    }
  }
  const script = median(times.get(`script ×${SCRIPT_CONCURRENCY}`) ?? []);
  for (const [name, samples] of times) {
    const ms = median(samples);
    const ratio = (ms / script).toFixed(2);
    console.log(
      `${name.padEnd(10)} ${ms.toFixed(0).padStart(6)} ms  ${ratio}× the script  (${samples.map((each) => each.toFixed(0)).join(' ')})`,
    );
  }
});
