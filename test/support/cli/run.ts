import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_SCOPE_BASE, type RunningEmulator } from 'push-api-client/testing';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  stdin?: string;
  cwd?: string;
  timeoutMs?: number;
  /** Runs the CLI as this user (and the group of the same id): only root can. See other-user.ts. */
  uid?: number;
  /** The Node.js binary. @default process.execPath */
  node?: string;
}

const children = new Set<ChildProcess>();

/** The environment that points the CLI at a test emulator with the demo credential. */
export function emulatorEnv(emulator: RunningEmulator): Record<string, string> {
  return {
    PUSH_CLIENT_ID: DEMO_CLIENT_ID,
    PUSH_CLIENT_SECRET: DEMO_CLIENT_SECRET,
    PUSH_AUTH_URL: emulator.authUrl,
    PUSH_BASE_URL: emulator.baseUrl,
    PUSH_SCOPE_BASE: DEMO_SCOPE_BASE,
  };
}

/** Starts the built CLI with a clean environment (no PUSH_* leaks in from the shell); not a TTY. */
export function startCli(
  cli: string,
  args: string[],
  options: RunOptions = {},
): { child: ChildProcess; done: Promise<RunResult> } {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', NO_COLOR: '' };
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  const user = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid };
  const child = spawn(options.node ?? process.execPath, [cli, ...args], {
    cwd: options.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...user,
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A CLI may stop reading its stdin and exit before taking all of it (a bound it enforces): the
  // write then fails with EPIPE, which is the child's answer, not the test's error.
  child.stdin?.on('error', () => {});
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  else child.stdin?.end();
  // A bound for a run that hangs; long enough that a slow start on a busy machine is not one.
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const done = new Promise<RunResult>((resolve) => {
    // A binary the process cannot start (EACCES, ENOENT) ends the run at once, saying why.
    child.on('error', (error) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}spawn failed: ${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

export function runCli(cli: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return startCli(cli, args, options).done;
}

/** For afterEach: no child outlives its test. */
export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}

export function makeTempDir(): { dir: string; path: (name: string) => string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'push-api-cli-'));
  return { dir, path: (name) => join(dir, name), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A valid finance CSV row for the header of {@link CSV_HEADER}. */
export const CSV_HEADER = 'created,amount,currency,identifier,type,vendor,description';

export function csvRows(count: number, start = 0): string {
  const rows: string[] = [];
  for (let i = start; i < start + count; i++) {
    rows.push(`${1704067200000 + i},${(i % 100) + 0.25},USD,user${i}@example.com,expense,Vendor ${i % 7},row ${i}`);
  }
  return rows.join('\n');
}

export function jsonlRecord(i: number): string {
  return JSON.stringify({
    created: 1704067200000 + i,
    amount: 10 + i,
    currency: 'EUR',
    identifier: `u${i}`,
    type: 'invoice',
    vendor: 'Acme',
  });
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find escape codes
export const ANSI_ESCAPE = /\u001b\[/;
