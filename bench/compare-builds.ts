/**
 * Two builds of the SDK, side by side, on the throughput of publish and upload: the same-run
 * before/after comparison a refactoring owes. Each build is a checkout with `dist/` built and its
 * dependencies installed (a symlinked node_modules will do):
 *
 *   git worktree add /tmp/before <commit> && (cd /tmp/before && ln -s "$PWD/node_modules" . && npx tsup)
 *   npx tsx bench/compare-builds.ts /tmp/before [after-dir, default this checkout] [--rounds 9]
 *
 * Every sample is a process of its own (this script again, with `--child`): two builds loaded
 * into one process share its heap, and one build's allocations change how V8 collects for the
 * other. A child warms up (a publish of 20,000 records, or the 200 uploads), then times three runs
 * and reports the median's wall time and CPU time (user + system of the child, which runs only the
 * client: the steadier measure on a loaded machine). Rounds alternate between the two builds, the
 * order rotating, against the loopback sink in another process. Both rows run with up to 8
 * requests in flight.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { alternate } from './lib/alternate.js';
import { connectionEnv } from './lib/client.js';
import { REPO_ROOT } from './lib/paths.js';
import { financeRecords } from './lib/records.js';
import { withServer } from './lib/server-process.js';
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

interface Sample {
  ms: number;
  cpuMs: number;
}

type RowName = 'publish' | 'upload';

const PUBLISH_RECORDS = 200_000;
const UPLOAD_FILES = 200;
const CONCURRENCY = 8;
const TIMED_RUNS = 3;
const run = promisify(execFile);

/** In a child: one build, one row; prints the median timed run as JSON. */
async function child(dir: string, row: RowName, filesList: string): Promise<void> {
  const sdk = (await import(path.join(path.resolve(dir), 'dist/index.js'))) as SdkModule;
  const env = process.env;
  const client = new sdk.PushClient({
    clientId: env.PUSH_CLIENT_ID,
    clientSecret: env.PUSH_CLIENT_SECRET,
    authUrl: env.PUSH_AUTH_URL,
    baseUrl: env.PUSH_BASE_URL,
    scopeBase: env.PUSH_SCOPE_BASE,
    env: {},
  });
  const appId = env.BENCH_APP_ID ?? '';
  await client.tokens.getToken();
  const records = financeRecords(PUBLISH_RECORDS);
  const files = (await readFile(filesList, 'utf8')).split('\n').filter((line) => line.length > 0);
  const once = async (warm: boolean) => {
    if (row === 'publish') {
      const input = warm ? records.slice(0, 20_000) : records;
      const result = await client.finance.publish(appId, input, { batchSize: 1000, concurrency: CONCURRENCY });
      if (result.recordsSent !== input.length) throw new Error(`sent ${result.recordsSent} of ${input.length}`);
    } else {
      const result = await client.uploads.upload(appId, files, { concurrency: CONCURRENCY });
      if (result.filesFailed > 0) throw new Error(`${result.filesFailed} uploads failed`);
    }
  };
  await once(true);
  const samples: Sample[] = [];
  for (let i = 0; i < TIMED_RUNS; i++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await once(false);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    samples.push({ ms, cpuMs: (used.user + used.system) / 1000 });
  }
  samples.sort((a, b) => a.ms - b.ms);
  process.stdout.write(JSON.stringify(samples[Math.floor(TIMED_RUNS / 2)]));
}

function report(row: string, samples: Map<string, Sample[]>): void {
  const of = (name: string, key: keyof Sample) => median((samples.get(name) ?? []).map((sample) => sample[key]));
  const wall = of('after', 'ms') / of('before', 'ms');
  const cpu = of('after', 'cpuMs') / of('before', 'cpuMs');
  console.log(
    `${row}: before ${of('before', 'ms').toFixed(0)} ms (cpu ${of('before', 'cpuMs').toFixed(0)}), ` +
      `after ${of('after', 'ms').toFixed(0)} ms (cpu ${of('after', 'cpuMs').toFixed(0)}); ` +
      `after ÷ before: time ${wall.toFixed(3)}, cpu ${cpu.toFixed(3)}`,
  );
  const list = (name: string) => (samples.get(name) ?? []).map((sample) => sample.ms.toFixed(0)).join(' ');
  console.log(`  samples (ms): before ${list('before')}; after ${list('after')}`);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rounds: { type: 'string', default: '9' },
      child: { type: 'string' },
      row: { type: 'string' },
      files: { type: 'string' },
    },
  });
  if (values.child !== undefined) {
    await child(values.child, values.row === 'upload' ? 'upload' : 'publish', values.files ?? '');
    return;
  }
  const [beforeDir, afterDir = REPO_ROOT] = positionals;
  if (beforeDir === undefined) throw new Error('usage: compare-builds.ts <before-dir> [after-dir] [--rounds N]');
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a positive integer');
  const temp = new TempFiles();
  try {
    await withServer({ kind: 'sink' }, async (server) => {
      const files = await ensureUploadFiles(temp, UPLOAD_FILES, MiB);
      const filesList = temp.path('compare-builds-files.txt');
      await writeFile(filesList, files.join('\n'));
      const sample = async (dir: string, row: RowName): Promise<Sample> => {
        const script = path.join(REPO_ROOT, 'bench/compare-builds.ts');
        const args = ['--import', 'tsx', script, '--child', dir, '--row', row, '--files', filesList];
        const { stdout } = await run(process.execPath, args, {
          cwd: REPO_ROOT,
          env: { ...process.env, ...connectionEnv(server) },
          maxBuffer: 1 << 20,
        });
        return JSON.parse(stdout) as Sample;
      };
      console.log(`${rounds} alternating rounds per row, a process per sample; before ${beforeDir}, after ${afterDir}`);
      for (const row of ['publish', 'upload'] as const) {
        const samples = await alternate(rounds, [
          { name: 'before', run: () => sample(beforeDir, row) },
          { name: 'after', run: () => sample(afterDir, row) },
        ]);
        const title =
          row === 'publish'
            ? `publish ${PUBLISH_RECORDS.toLocaleString('en')} records`
            : `upload ${UPLOAD_FILES} × 1 MiB`;
        report(title, samples);
      }
    });
  } finally {
    await temp.removeAll();
  }
}

await main();
