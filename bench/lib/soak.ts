/**
 * Runs the long-lived service soak child (`bench/children/soak-signal.ts`, compiled by
 * buildChildren) on one runtime with a forced-GC hook, and reads its JSON line. Used by the
 * benchmark (Node only) and by `scripts/soak.ts` (every runtime).
 */
import { spawn } from 'node:child_process';
import { childScript, REPO_ROOT } from './paths.js';

export interface SoakResult {
  runtime: string;
  calls: number;
  burst: number;
  signal: string;
  heapBeforeMB: number;
  heapAfterMB: number;
  growthMB: number;
  durationMs: number;
  warnings: string[];
}

/** How each runtime is started with a forced-GC hook. */
export const RUNTIMES: Record<string, (script: string) => [string, string[]]> = {
  node: (script) => [process.execPath, ['--expose-gc', script]],
  node22: (script) => ['npx', ['-y', '-p', 'node@22', '--', 'node', '--expose-gc', script]],
  node24: (script) => ['npx', ['-y', '-p', 'node@24', '--', 'node', '--expose-gc', script]],
  bun: (script) => ['npx', ['-y', 'bun@1', script]],
  deno: (script) => ['npx', ['-y', 'deno@2', 'run', '-A', '--v8-flags=--expose-gc', script]],
};

/** Runs the soak child once on one runtime and returns its JSON line. */
export async function soakOn(runtime: string, env: { calls: number; signal?: 'shared' | 'none' }): Promise<SoakResult> {
  const command = RUNTIMES[runtime];
  if (!command) throw new Error(`unknown runtime ${runtime}; known: ${Object.keys(RUNTIMES).join(', ')}`);
  const [file, args] = command(childScript('soak-signal'));
  const child = spawn(file, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, SOAK_CALLS: String(env.calls), SOAK_SIGNAL: env.signal ?? 'shared' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-4_000)));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const line = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`${runtime} soak exited ${code}: ${stderr.slice(-2_000)}`);
  return JSON.parse(line) as SoakResult;
}
