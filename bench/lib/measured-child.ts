/**
 * Runs a program in a child process and reads its peak RSS. Node programs get the RSS preload
 * (`process.resourceUsage().maxRSS`, written on exit); other programs (curl) are timed only.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { childScript } from './paths.js';

export interface ChildRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
  /** Peak resident set size in bytes; undefined when not measured. */
  maxRssBytes?: number;
}

export interface ChildSpec {
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Run `command` (node) with the RSS preload. */
  measureRss?: boolean;
  timeoutMs?: number;
}

export async function runChild(spec: ChildSpec): Promise<ChildRun> {
  const dir = spec.measureRss ? await mkdtemp(path.join(os.tmpdir(), 'push-bench-rss-')) : undefined;
  const rssFile = dir ? path.join(dir, 'rss.json') : undefined;
  const args = spec.measureRss ? ['--import', pathToFileURL(childScript('rss-preload')).href, ...spec.args] : spec.args;
  try {
    const started = performance.now();
    const child = spawn(spec.command, args, {
      env: { ...process.env, ...spec.env, ...(rssFile && { BENCH_RSS_FILE: rssFile }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr = (stderr + text).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), spec.timeoutMs ?? 600_000);
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    clearTimeout(timer);
    const wallMs = performance.now() - started;
    let maxRssBytes: number | undefined;
    if (rssFile) {
      const report = JSON.parse(await readFile(rssFile, 'utf8')) as { maxRssKiB: number };
      maxRssBytes = report.maxRssKiB * 1024;
    }
    return { exitCode, stdout, stderr, wallMs, ...(maxRssBytes !== undefined && { maxRssBytes }) };
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/** Like runChild, but a non-zero exit is an error carrying the child's stderr. */
export async function runChildOk(spec: ChildSpec): Promise<ChildRun> {
  const run = await runChild(spec);
  if (run.exitCode !== 0) {
    throw new Error(
      `${path.basename(spec.command)} ${spec.args.slice(0, 3).join(' ')}… exited ${run.exitCode}: ${run.stderr.slice(-2000)}`,
    );
  }
  return run;
}
