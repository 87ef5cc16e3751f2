/** Writes `bench/results/latest.json`: the machine, the mode, and every row with its samples. */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Row } from './row.js';

export interface RunResults {
  date: string;
  mode: 'full' | 'quick';
  node: string;
  cores: number;
  cpu: string;
  platform: string;
  totalMemMiB: number;
  durationMs: number;
  command: string;
  rows: Row[];
  /** Benchmarks that threw instead of producing rows. */
  errors: { benchmark: string; message: string }[];
}

export function describeRun(
  mode: RunResults['mode'],
  command: string,
  durationMs: number,
  rows: Row[],
  errors: RunResults['errors'],
): RunResults {
  return {
    date: new Date().toISOString(),
    mode,
    node: process.version,
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    platform: `${os.platform()} ${os.release()}`,
    totalMemMiB: Math.round(os.totalmem() / 2 ** 20),
    durationMs: Math.round(durationMs),
    command,
    rows,
    errors,
  };
}

export async function writeResults(file: string, results: RunResults): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  // NaN is not JSON: it becomes null.
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}
