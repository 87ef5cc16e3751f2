/**
 * Network rows: uploads through the delay proxy, each side in its own process. Many 1 MiB files:
 * `client.uploads.upload` with its defaults against the hand-written `fetch` PUT pool of
 * bench/children/upload-fetch.ts at fixed concurrency 4, 8, 16 and 32. One large file: the SDK
 * against the same script (one file has one PUT, whatever the concurrency).
 */
import { stat } from 'node:fs/promises';
import { alternate } from '../lib/alternate.js';
import { connectionEnv } from '../lib/client.js';
import type { FarServer } from '../lib/far-server.js';
import { runChildOk } from '../lib/measured-child.js';
import { childScript } from '../lib/paths.js';
import type { Row } from '../lib/row.js';
import { toMB } from '../lib/stats.js';
import { ensureUploadFile, ensureUploadFiles, MiB } from '../lib/upload-files.js';
import { versusBest } from '../lib/versus-best.js';
import { SCRIPT_CONCURRENCIES } from './network-publish.js';
import type { BenchContext } from './types.js';

interface SdkOutput {
  ms: number;
  peakInFlight: number;
  limitEvents: number;
  maxLimit: number | null;
}

async function uploadRow(
  ctx: BenchContext,
  far: FarServer,
  benchmark: string,
  work: string,
  files: string[],
  concurrencies: readonly number[],
  rounds: number,
): Promise<Row[]> {
  const bytes = await totalBytes(files);
  const env = connectionEnv(far.server);
  const sdkOutputs: SdkOutput[] = [];
  /** The proxy's CPU time as a share of each run's wall time, by variant: how near it came to a core. */
  const proxyBusy = new Map<string, number[]>();
  /** One run from no open connection; the sink must have received every byte. */
  const checked = async (what: string, run: () => Promise<number>): Promise<number> => {
    await far.fresh();
    const started = performance.now();
    const ms = await run();
    const wallMs = performance.now() - started;
    const { sink, proxy } = await far.counts();
    proxyBusy.set(what, [...(proxyBusy.get(what) ?? []), proxy.cpuMs / wallMs]);
    if (sink.uploadBytes !== bytes || sink.uploadErrors > 0) {
      throw new Error(`${what}: the sink received ${sink.uploadBytes} of ${bytes} bytes, ${sink.uploadErrors} refused`);
    }
    return toMB(bytes) / (ms / 1000);
  };
  const sdk = () =>
    checked('SDK', async () => {
      const run = await runChildOk({ command: process.execPath, args: [childScript('net-upload-sdk'), ...files], env });
      const output = JSON.parse(run.stdout) as SdkOutput;
      sdkOutputs.push(output);
      return output.ms;
    });
  const script = (concurrency: number) =>
    checked(`fetch ×${concurrency}`, async () => {
      const args = [childScript('upload-fetch'), String(concurrency), ...files];
      const run = await runChildOk({ command: process.execPath, args, env });
      return (JSON.parse(run.stdout) as { ms: number }).ms;
    });
  const name = (concurrency: number) => (concurrencies.length === 1 ? 'fetch script' : `fetch ×${concurrency}`);
  ctx.log(`network upload: ${rounds} rounds of ${work}`);
  const samples = await alternate(rounds, [
    { name: 'sdk', run: sdk },
    ...concurrencies.map((concurrency) => ({ name: name(concurrency), run: () => script(concurrency) })),
  ]);
  const peaks = sdkOutputs.map((output) => output.peakInFlight);
  const limits = sdkOutputs.map((output) => output.maxLimit).filter((limit) => limit !== null);
  const events = sdkOutputs.reduce((sum, output) => sum + output.limitEvents, 0);
  const busiest = Math.max(...[...proxyBusy.values()].flat());
  return versusBest({
    benchmark,
    work,
    unit: 'MB/s',
    higherIsBetter: true,
    sdk: samples.get('sdk') ?? [],
    scripts: new Map(concurrencies.map((c) => [name(c), samples.get(name(c)) ?? []])),
    target: { of: 'ratio', op: '>=', limit: 0.9 },
    note:
      `SDK peak in flight ${Math.min(...peaks)}–${Math.max(...peaks)}, ${events} concurrency events` +
      (limits.length > 0 ? `, largest window ${Math.max(...limits)}` : '') +
      `; the proxy's CPU time was at most ${(100 * busiest).toFixed(0)}% of a run's wall time`,
  });
}

async function totalBytes(files: string[]): Promise<number> {
  let sum = 0;
  for (const file of files) sum += (await stat(file)).size;
  return sum;
}

export async function networkUploadRows(ctx: BenchContext, far: FarServer, benchmark: string): Promise<Row[]> {
  const smallCount = ctx.quick ? 20 : 200;
  const bigSize = (ctx.quick ? 16 : 512) * MiB;
  const rounds = ctx.quick ? 1 : 3;
  ctx.log(`network upload: writing ${smallCount} × 1 MiB and ${bigSize / MiB} MiB under ${ctx.temp.dir}`);
  const small = await ensureUploadFiles(ctx.temp, smallCount, MiB);
  const big = await ensureUploadFile(ctx.temp, `net-big-${bigSize / MiB}.bin`, bigSize);
  return [
    ...(await uploadRow(ctx, far, benchmark, `upload ${smallCount} × 1 MiB`, small, SCRIPT_CONCURRENCIES, rounds)),
    ...(await uploadRow(ctx, far, benchmark, `upload 1 × ${bigSize / MiB} MiB`, [big], [1], rounds)),
  ];
}
