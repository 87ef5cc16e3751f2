/**
 * The two trips of ARCHITECTURE.md ("Two trips, file by file") counted at run time: the src files
 * whose functions run while one publish of three valid records, and one upload of one small file
 * by its path, go through a fresh client (its token fetched on the way) to the emulator over real
 * HTTP on 127.0.0.1.
 *
 *   npx tsx scripts/trip-coverage.ts [--functions | --json]
 *
 * The emulator runs in a child process (this script with `--emulator`), so none of its code is in
 * the profile. The client is built before the profile starts, and V8's precise coverage (call
 * counts, function granularity) is taken only around the one call: a file counts when a function
 * in it, other than the module's top-level code, ran during the call. Modules the call imports
 * lazily (`import()`) have their top-level code left out the same way.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PushClient } from '../src/client.js';
import type { FinanceRecordInput } from '../src/index.js';
import { financeRecord } from '../test/support/records.js';

const SRC = pathToFileURL(path.resolve(import.meta.dirname, '../src')).href + '/';
const THIS_FILE = fileURLToPath(import.meta.url);
/** The longest the whole run may take; the emulator child closes itself after it as well. */
const BOUND_MS = 30_000;

/** What the child tells the parent: where the emulator is, with its first credential and app. */
interface EmulatorInfo {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  baseUrl: string;
  scopeBase: string;
  appId: string;
}

/** Child mode: an emulator on 127.0.0.1, its addresses on one stdout line, closed when stdin ends. */
async function serveEmulator(): Promise<void> {
  const { startEmulator } = await import('../src/testing/index.js');
  const emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
  const info: EmulatorInfo = { ...emulator.clientOptions(), appId: emulator.mock.appId };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.stdin.on('end', stop).on('close', stop).resume();
  setTimeout(stop, BOUND_MS).unref();
}

/** Starts the child emulator (under the same tsx loader as this process) and reads its addresses. */
async function startChildEmulator(): Promise<{ info: EmulatorInfo; close(): Promise<void> }> {
  const child = spawn(process.execPath, [...process.execArgv, THIS_FILE, '--emulator'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the emulator child exited (${code}) before it started`)));
  });
  lines.close();
  return {
    info: JSON.parse(first) as EmulatorInfo,
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/** A src file (relative to src/) for a coverage URL, or undefined for anything else. */
function srcFile(url: string): string | undefined {
  if (!url.startsWith(SRC)) return undefined;
  const file = url.slice(SRC.length).split('?')[0] ?? '';
  return file.startsWith('testing/') ? undefined : file;
}

/** One trip: the src files that ran, with the functions that ran in each. */
type Trip = Record<string, string[]>;

/**
 * The src files with a function that ran during `call`, and those functions: precise coverage is
 * started (and its counters emptied by a first take) just before the call, and taken just after.
 * Code compiled from a string (`new Function`) has no file; what of it ran is listed under "".
 */
async function filesRun(session: Session, call: () => Promise<void>): Promise<Trip> {
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage');
  await call();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  const trip: Trip = {};
  for (const script of result) {
    const file = script.url === '' ? '' : srcFile(script.url);
    if (file === undefined) continue;
    // The module's top-level function is the one whose range starts at offset 0; every other
    // function (named or not) counts when it was called, except `__name`, the helper esbuild (in
    // tsx) adds to each module to keep function names, which is not in the source.
    const ran = script.functions
      .filter((fn) => (fn.ranges[0]?.startOffset ?? 0) > 0 && (fn.ranges[0]?.count ?? 0) > 0)
      .map((fn) => fn.functionName || '(anonymous)')
      .filter((name) => name !== '__name');
    if (ran.length > 0) trip[file] = [...(trip[file] ?? []), ...ran].sort();
  }
  return Object.fromEntries(Object.entries(trip).sort(([a], [b]) => a.localeCompare(b)));
}

/** Three valid records, as a user writes them: the tests' own factory. */
function records(): FinanceRecordInput[] {
  return [0, 1, 2].map((i) => financeRecord(i));
}

/** Both trips, each on a client of its own (a fresh token store, so each call fetches a token). */
async function tripCoverage(): Promise<{ record: Trip; file: Trip }> {
  const emulator = await startChildEmulator();
  const dir = await mkdtemp(path.join(tmpdir(), 'trip-coverage-'));
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    const { appId, ...options } = emulator.info;
    const newClient = () => new PushClient({ ...options, env: {} });

    const publisher = newClient();
    const input = records();
    const record = await filesRun(session, async () => {
      const report = await publisher.finance.publish(appId, input);
      if (report.recordsSent !== input.length)
        throw new Error(`publish sent ${report.recordsSent} of ${input.length} records`);
    });

    const uploader = newClient();
    const file = path.join(dir, 'users.csv');
    await writeFile(file, 'email,name\nada@example.com,Ada\n');
    const uploaded = await filesRun(session, async () => {
      const report = await uploader.uploads.upload(appId, [file]);
      if (report.filesUploaded !== 1) throw new Error(`upload stored ${report.filesUploaded} of 1 file`);
    });
    return { record, file: uploaded };
  } finally {
    session.disconnect();
    await rm(dir, { recursive: true, force: true });
    await emulator.close();
  }
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--emulator')) return serveEmulator();
  const bound = setTimeout(() => {
    process.stderr.write(`trip-coverage: no result after ${BOUND_MS} ms\n`);
    process.exit(2);
  }, BOUND_MS);
  bound.unref();
  const trips = await tripCoverage();
  clearTimeout(bound);
  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(trips)}\n`);
    return;
  }
  // With --functions, each file is followed by the functions of it that ran.
  const functions = argv.includes('--functions');
  for (const [name, trip] of Object.entries(trips)) {
    const files = Object.keys(trip).filter((file) => file !== '');
    process.stdout.write(`${name} trip: ${files.length} src files run\n`);
    for (const file of files) {
      process.stdout.write(`  ${file}${functions ? `: ${trip[file]?.join(', ')}` : ''}\n`);
    }
    const compiled = trip['']?.length ?? 0;
    if (compiled > 0) process.stdout.write(`  (and ${compiled} function(s) compiled from a string, in no file)\n`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`trip-coverage: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(2);
});
