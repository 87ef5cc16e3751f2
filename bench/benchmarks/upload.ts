/**
 * 3. Upload: `client.uploads.upload` in a child process (its peak RSS is the SDK's) against
 * `curl -T` (one big file) and `curl --parallel` (many small ones), to the same sink in a third
 * process, which checks Content-Length and counts the bytes without keeping them. Beside them, a
 * hand-written script on Node's `fetch` (the transport the SDK uses), in a child process too.
 */
import path from 'node:path';
import { alternate } from '../lib/alternate.js';
import { connectionEnv } from '../lib/client.js';
import { runChildOk } from '../lib/measured-child.js';
import { childScript } from '../lib/paths.js';
import { makeRow, type Row } from '../lib/row.js';
import { type ServerProcess, withServer } from '../lib/server-process.js';
import { median, ratio, toMB } from '../lib/stats.js';
import { ensureUploadFile, ensureUploadFiles, MiB } from '../lib/upload-files.js';
import type { BenchContext, Benchmark } from './types.js';

const CURL = '/usr/bin/curl';
/** Files in flight at once, for the SDK and for curl --parallel-max alike. */
const CONCURRENCY = 8;

interface Sample {
  ms: number;
  rssMB: number;
}

function storageUrl(server: ServerProcess, file: string): string {
  return `${server.url}/storage/${encodeURIComponent(path.basename(file))}?signature=bench`;
}

async function checked(
  server: ServerProcess,
  bytes: number,
  what: string,
  run: () => Promise<Sample>,
): Promise<Sample> {
  await server.reset();
  const sample = await run();
  const stats = await server.stats();
  if (stats.uploadBytes !== bytes || stats.uploadErrors > 0) {
    throw new Error(`${what}: the sink received ${stats.uploadBytes} of ${bytes} bytes, ${stats.uploadErrors} refused`);
  }
  return sample;
}

/** `client.uploads.upload` (upload-sdk) or the hand-written fetch script (upload-fetch), in a child process. */
async function viaChild(
  script: 'upload-sdk' | 'upload-fetch',
  server: ServerProcess,
  files: string[],
): Promise<Sample> {
  const run = await runChildOk({
    command: process.execPath,
    args: [childScript(script), String(CONCURRENCY), ...files],
    env: connectionEnv(server),
    measureRss: true,
  });
  const { ms } = JSON.parse(run.stdout) as { ms: number };
  return { ms, rssMB: toMB(run.maxRssBytes ?? Number.NaN) };
}

async function viaCurl(server: ServerProcess, files: string[]): Promise<Sample> {
  // `Expect:` off: no 100-continue round trip, as fetch does not send one either.
  const args = ['-sS', '--fail', '-H', 'Expect:'];
  if (files.length > 1) args.push('--parallel', '--parallel-max', String(CONCURRENCY));
  for (const file of files) args.push('-T', file, storageUrl(server, file));
  const run = await runChildOk({ command: CURL, args });
  return { ms: run.wallMs, rssMB: Number.NaN };
}

async function compare(
  ctx: BenchContext,
  server: ServerProcess,
  label: string,
  files: string[],
  bytes: number,
  rounds: number,
): Promise<Row[]> {
  ctx.log(`upload: ${rounds} rounds of ${label}`);
  const samples = await alternate(rounds, [
    { name: 'sdk', run: () => checked(server, bytes, 'SDK', () => viaChild('upload-sdk', server, files)) },
    { name: 'curl', run: () => checked(server, bytes, 'curl', () => viaCurl(server, files)) },
    { name: 'fetch', run: () => checked(server, bytes, 'fetch script', () => viaChild('upload-fetch', server, files)) },
  ]);
  const sdk = samples.get('sdk') ?? [];
  const curl = samples.get('curl') ?? [];
  const script = samples.get('fetch') ?? [];
  const throughput = (list: Sample[]) => list.map((sample) => toMB(bytes) / (sample.ms / 1000));
  const rss = sdk.map((sample) => sample.rssMB);
  const scriptRss = script.map((sample) => sample.rssMB);
  const curlName = files.length > 1 ? `curl --parallel (${CONCURRENCY})` : 'curl -T';
  return [
    makeRow({
      benchmark: '3 upload',
      metric: `peak RSS, SDK, ${label}`,
      unit: 'MB',
      ours: median(rss),
      baselineName: 'fetch script',
      baseline: median(scriptRss),
      ratio: ratio(median(rss), median(scriptRss)),
      target: { of: 'value', op: '<=', limit: 120 },
      samples: { ours: rss, baseline: scriptRss },
    }),
    makeRow({
      benchmark: '3 upload',
      metric: `throughput, ${label}`,
      unit: 'MB/s',
      ours: median(throughput(sdk)),
      baselineName: curlName,
      baseline: median(throughput(curl)),
      ratio: ratio(median(throughput(sdk)), median(throughput(curl))),
      // One big file is bound by the transport; many small ones also by the work per file.
      target: { of: 'ratio', op: '>=', limit: files.length > 1 ? 0.6 : 0.85 },
      samples: { ours: throughput(sdk), baseline: throughput(curl) },
      note: `SDK concurrency ${CONCURRENCY}; SDK time is the upload() call, curl time its process`,
    }),
    makeRow({
      benchmark: '3 upload',
      metric: `throughput vs a fetch script, ${label}`,
      unit: 'MB/s',
      ours: median(throughput(sdk)),
      baselineName: 'fetch script',
      baseline: median(throughput(script)),
      ratio: ratio(median(throughput(sdk)), median(throughput(script))),
      samples: { ours: throughput(sdk), baseline: throughput(script) },
      note: 'the script: token, addresses, then fetch PUTs of 1 MiB disk reads, no checks or retries',
    }),
  ];
}

export const upload: Benchmark = {
  name: 'upload',
  title: '3 upload',
  async run(ctx) {
    const bigSize = ctx.quick ? 64 * MiB : 1024 * MiB;
    const smallCount = ctx.quick ? 50 : 200;
    const rounds = ctx.quick ? 1 : 3;
    ctx.log(`upload: writing ${bigSize / MiB} MiB and ${smallCount} × 1 MiB under ${ctx.temp.dir}`);
    const big = await ensureUploadFile(ctx.temp, 'big.bin', bigSize);
    const small = await ensureUploadFiles(ctx.temp, smallCount, MiB);
    return withServer({ kind: 'sink' }, async (server) => [
      ...(await compare(
        ctx,
        server,
        bigSize >= 1024 * MiB ? '1 GiB file' : `${bigSize / MiB} MiB file`,
        [big],
        bigSize,
        rounds,
      )),
      ...(await compare(ctx, server, `${smallCount} × 1 MiB files`, small, smallCount * MiB, rounds)),
    ]);
  },
};
