/**
 * Stands apart from the runner: a 3,000-row `finance publish` resuming from a checkpoint whose
 * `delivered` list holds a million disjoint ranges (valid, and well under the file's size bound),
 * against the same run from a checkpoint with none. Prints wall time and peak RSS of each CLI process.
 *
 *   npx tsx bench/checkpoint-ranges.ts [ranges=1000000]
 *
 * Everything runs on loopback against the emulator.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_APP_ID, startEmulator } from '../src/testing/index.js';
import { buildCli } from '../test/support/cli/build.js';
import { CSV_HEADER, csvRows, emulatorEnv } from '../test/support/cli/run.js';

const RANGES = Number(process.argv[2] ?? 1_000_000);
const ROWS = 3000;

const cli = await buildCli();
const emulator = await startEmulator({ port: 0 });
const dir = mkdtempSync(join(tmpdir(), 'push-api-bench-ranges-'));
try {
  const input = join(dir, 'in.csv');
  writeFileSync(input, `${CSV_HEADER}\n${csvRows(ROWS)}\n`);
  const env = { PATH: process.env.PATH ?? '', ...emulatorEnv(emulator), PUSH_APP_ID: DEMO_APP_ID };
  /** One CLI run under /usr/bin/time: wall time, peak RSS and exit code. */
  // Not spawnSync: the emulator answers from this process's event loop.
  const run = async (checkpoint: string, extra: Record<string, string> = {}) => {
    const args = ['-f', '%M', process.execPath, cli, 'finance', 'publish', input, '--checkpoint', checkpoint];
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', [...args, '--batch-size', '100', '--quiet'], {
      env: { ...env, ...extra },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const rssKiB = Number(stderr.trim().split('\n').at(-1));
    return { ms, rssKiB, code };
  };
  const measure = async (label: string, ranges: number) => {
    const checkpoint = join(dir, `${label}.json`);
    // A run refused by the service leaves a checkpoint with this input's fingerprint and nothing delivered.
    await run(checkpoint, { PUSH_CLIENT_SECRET: 'wrong' });
    const file = JSON.parse(readFileSync(checkpoint, 'utf8'));
    const base = ROWS + 10_000;
    file.delivered = Array.from({ length: ranges }, (_, i) => [base + 2 * i, base + 2 * i + 1]);
    writeFileSync(checkpoint, JSON.stringify(file));
    emulator.mock.reset();
    const { ms, rssKiB, code } = await run(checkpoint);
    const stored = emulator.mock.state.recordCount(DEMO_APP_ID);
    console.log(
      `${label.padEnd(5)} ranges=${String(ranges).padStart(8)}  ${ms.toFixed(0).padStart(6)} ms  ` +
        `peak RSS ${(rssKiB / 1024).toFixed(0).padStart(5)} MiB  exit ${code}  stored ${stored}`,
    );
  };
  await measure('none', 0);
  await measure('many', RANGES);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await emulator.close();
}
