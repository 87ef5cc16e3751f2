/**
 * Two builds of the SDK, side by side in one process, on the throughput of publish and upload:
 * the same-run before/after comparison a refactoring owes. Each build is a checkout with `dist/`
 * built and its dependencies installed (a symlinked node_modules will do):
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && ln -s "$PWD/node_modules" . && npx tsup)
 *   npx tsx bench/compare-builds.ts /tmp/before [after-dir, default this checkout] [--rounds 9]
 *
 * Both rows run with up to 8 requests in flight. Rounds alternate between the two builds (the order rotating), against the loopback sink in
 * another process, after an untimed warm-up of each. It prints the median wall time of each build
 * per row, the ratio after ÷ before, and each build's CPU time in its rounds (user + system of
 * this process, which runs only the client: the steadier measure on a loaded machine).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { alternate } from './lib/alternate.js';
import { authUrlOf } from './lib/client.js';
import { REPO_ROOT } from './lib/paths.js';
import { financeRecords } from './lib/records.js';
import { type ServerProcess, withServer } from './lib/server-process.js';
import { median } from './lib/stats.js';
import { TempFiles } from './lib/temp-files.js';
import { ensureUploadFiles, MiB } from './lib/upload-files.js';

/** What this script needs of a build: the constructor and the two operations, as every version since 0.1 has them. */
interface SdkClient {
  finance: {
    publish(appId: string, records: unknown[], options: Record<string, unknown>): Promise<{ recordsSent: number }>;
  };
  uploads: {
    upload(appId: string, files: string[], options: Record<string, unknown>): Promise<{ filesFailed: number }>;
  };
  tokens: { getToken(): Promise<unknown> };
}
type SdkModule = { PushClient: new (options: Record<string, unknown>) => SdkClient };

interface Build {
  name: string;
  client: SdkClient;
}

interface Sample {
  ms: number;
  cpuMs: number;
}

const PUBLISH_RECORDS = 200_000;
const UPLOAD_FILES = 200;
const CONCURRENCY = 8;

async function load(name: string, dir: string, server: ServerProcess): Promise<Build> {
  const sdk = (await import(path.join(path.resolve(dir), 'dist/index.js'))) as SdkModule;
  const client = new sdk.PushClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    authUrl: authUrlOf(server),
    baseUrl: server.url,
    scopeBase: server.scopeBase,
    env: {},
  });
  await client.tokens.getToken();
  return { name, client };
}

async function measured(run: () => Promise<void>): Promise<Sample> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

function report(row: string, samples: Map<string, Sample[]>, before: string, after: string): void {
  const of = (name: string, key: keyof Sample) => median((samples.get(name) ?? []).map((sample) => sample[key]));
  const wall = of(after, 'ms') / of(before, 'ms');
  const cpu = of(after, 'cpuMs') / of(before, 'cpuMs');
  console.log(
    `${row}: before ${of(before, 'ms').toFixed(0)} ms (cpu ${of(before, 'cpuMs').toFixed(0)}), ` +
      `after ${of(after, 'ms').toFixed(0)} ms (cpu ${of(after, 'cpuMs').toFixed(0)}); ` +
      `after ÷ before: time ${wall.toFixed(3)}, cpu ${cpu.toFixed(3)}`,
  );
  const list = (name: string) => (samples.get(name) ?? []).map((sample) => sample.ms.toFixed(0)).join(' ');
  console.log(`  samples (ms): before ${list(before)}; after ${list(after)}`);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { rounds: { type: 'string', default: '9' } },
  });
  const [beforeDir, afterDir = REPO_ROOT] = positionals;
  if (beforeDir === undefined) throw new Error('usage: compare-builds.ts <before-dir> [after-dir] [--rounds N]');
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a positive integer');
  const temp = new TempFiles();
  try {
    await withServer({ kind: 'sink' }, async (server) => {
      const builds = [await load('before', beforeDir, server), await load('after', afterDir, server)];
      const records = financeRecords(PUBLISH_RECORDS);
      const files = await ensureUploadFiles(temp, UPLOAD_FILES, MiB);
      const publish = (build: Build, input: unknown[]) => async () => {
        const result = await build.client.finance.publish(server.appId, input, {
          batchSize: 1000,
          concurrency: CONCURRENCY,
        });
        if (result.recordsSent !== input.length) throw new Error(`${build.name} sent ${result.recordsSent}`);
      };
      const upload = (build: Build) => async () => {
        const result = await build.client.uploads.upload(server.appId, files, { concurrency: CONCURRENCY });
        if (result.filesFailed > 0) throw new Error(`${build.name}: ${result.filesFailed} uploads failed`);
      };
      for (const build of builds) {
        await publish(build, records.slice(0, 20_000))();
        await upload(build)();
      }
      console.log(`${rounds} alternating rounds per row; before ${beforeDir}, after ${afterDir}`);
      const published = await alternate(
        rounds,
        builds.map((build) => ({ name: build.name, run: () => measured(publish(build, records)) })),
      );
      report(`publish ${PUBLISH_RECORDS.toLocaleString('en')} records`, published, 'before', 'after');
      const uploaded = await alternate(
        rounds,
        builds.map((build) => ({ name: build.name, run: () => measured(upload(build)) })),
      );
      report(`upload ${UPLOAD_FILES} × 1 MiB`, uploaded, 'before', 'after');
    });
  } finally {
    await temp.removeAll();
  }
}

await main();
