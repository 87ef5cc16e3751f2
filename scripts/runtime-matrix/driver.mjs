// Runs the smoke flow in each runtime against one emulator (Node, 127.0.0.1, real HTTP) and judges
// each run by the emulator's state: records stored, files byte-exact (SHA-256), the User-Agent the
// runtime sent. Then the field flow (field.mjs), against the same emulator with faults armed: a
// service that fails, drops, stalls and echoes the secret. Run from the matrix project
// (runtime-matrix.sh), where the packed package, msw, esbuild, miniflare and edge-runtime are
// installed. On workerd, also a PushClient kept in module scope across requests (worker-shared.mjs).
// Writes the results as JSON.
//
//   node driver.mjs <results.json>
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { EdgeRuntime } from 'edge-runtime';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { startEmulator } from 'push-api-client/testing';
import { FIELD_FILES, fieldFaults, judgeField } from './field.mjs';
import { DISK_FILE, MEMORY_FILE, patternBytes, RECORD_COUNT } from './shared.mjs';

const run = promisify(execFile);
const here = import.meta.dirname;
const STEP_TIMEOUT_MS = 180_000;
const SHARED_TOKEN_DELAY_MS = 1_500;
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');
const version = (name) =>
  JSON.parse(readFileSync(path.join(here, 'node_modules', name, 'package.json'), 'utf8')).version;

/** A process runtime: the command that runs `script` with one JSON argument. */
const processRuntime = (name, ua, command, files = true) => ({ name, ua, files, kind: 'process', command });
const npx = (...args) => ['npx', ['-y', ...args]];
const RUNTIMES = [
  processRuntime('Node 20', /node\/20\./, () => [process.execPath, []]),
  processRuntime('Node 22', /node\/22\./, () => npx('-p', 'node@22', '--', 'node')),
  processRuntime('Node 24', /node\/24\./, () => npx('-p', 'node@24', '--', 'node')),
  processRuntime('Bun', /bun\/1\./, () => npx('bun@1')),
  processRuntime('Deno', /deno\/2\./, () => npx('deno@2', 'run', '-A')),
  { name: 'workerd (no nodejs_compat)', ua: / workerd$/, files: false, kind: 'workerd', compat: [] },
  // With nodejs_compat the workerd condition still selects the web build: the same flows must pass.
  { name: 'workerd (nodejs_compat)', ua: / workerd$/, files: false, kind: 'workerd', compat: ['nodejs_compat'] },
  { name: 'edge-runtime', ua: / edge$/, files: false, kind: 'edge' },
];
const TESTING_KIT = ['Bun', 'Deno'];

async function inProcess(runtime, script, argument) {
  const [command, prefix] = runtime.command();
  const { stdout } = await run(command, [...prefix, path.join(here, script), ...(argument ? [argument] : [])], {
    cwd: here,
    timeout: STEP_TIMEOUT_MS,
    maxBuffer: 1 << 20,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

/** Bundles an entry as the runtime's bundler would: esbuild, neutral platform, its conditions. */
async function bundle(entry, conditions, format) {
  const result = await build({
    entryPoints: [path.join(here, entry)],
    bundle: true,
    minify: true,
    format,
    platform: 'neutral',
    conditions,
    mainFields: [...conditions, 'module', 'main'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

async function inWorkerd(settings, flow, compatibilityFlags) {
  const script = await bundle('worker.mjs', ['workerd', 'worker', 'browser'], 'esm');
  const miniflare = new Miniflare({ modules: true, script, compatibilityDate: '2025-01-01', compatibilityFlags });
  try {
    const response = await miniflare.dispatchFetch('http://localhost/', {
      method: 'POST',
      body: JSON.stringify({ settings, flow }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`the Worker answered ${response.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text);
  } finally {
    await miniflare.dispose();
  }
}

/**
 * How the first of two requests sharing a module-scope client leaves the token refresh it started:
 * its `signal` aborts (the refresh is handed over at once), or its handler stops waiting on a timer
 * of its own and answers (nothing tells the client: the second request waits at most its
 * `timeoutMs`, then starts its own refresh).
 */
const SHARED_CLIENT_SCENARIOS = [
  { scenario: 'abort', first: { abortAfterMs: 300 }, firstSees: 'AbortError', timeoutMs: undefined },
  { scenario: 'unseen', first: { stopWaitingAfterMs: 300 }, firstSees: 'StoppedWaiting', timeoutMs: 3_000 },
];

/**
 * A PushClient in a Worker's module scope, shared by two requests: the first starts the token
 * refresh against a slow token endpoint and leaves; the second, waiting for that refresh, must
 * still get a token, within the token endpoint's delay, its own timeout and a margin, not wait forever.
 */
async function sharedClientRun(emulator, settings, compatibilityFlags) {
  const script = await bundle('worker-shared.mjs', ['workerd', 'worker', 'browser'], 'esm');
  const miniflare = new Miniflare({ modules: true, script, compatibilityDate: '2025-01-01', compatibilityFlags });
  const problems = [];
  const seen = {};
  let fault;
  try {
    for (const { scenario, first: leaving, firstSees, timeoutMs } of SHARED_CLIENT_SCENARIOS) {
      // A fault is used up by the first request it delays: one for each scenario's first refresh.
      fault?.remove();
      fault = emulator.mock.faults.add({ match: { operation: 'token' }, delayMs: SHARED_TOKEN_DELAY_MS });
      const asked = { ...settings, ...(timeoutMs !== undefined && { timeoutMs }) };
      const ask = (body) =>
        miniflare
          .dispatchFetch('http://localhost/', {
            method: 'POST',
            body: JSON.stringify({ settings: asked, scenario, ...body }),
          })
          .then((response) => response.json());
      const first = ask(leaving);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const second = ask({});
      let timer;
      const late = new Promise((resolve) => {
        timer = setTimeout(() => resolve({ error: 'no answer' }), SHARED_TOKEN_DELAY_MS + (timeoutMs ?? 0) + 10_000);
      });
      seen[scenario] = { first: await first, second: await Promise.race([second, late]) };
      clearTimeout(timer);
      if (seen[scenario].first.error !== firstSees)
        problems.push(`shared client (${scenario}): the first request saw ${JSON.stringify(seen[scenario].first)}`);
      if (seen[scenario].second.tokenType === undefined)
        problems.push(`shared client (${scenario}): the second request saw ${JSON.stringify(seen[scenario].second)}`);
    }
    return { seen, problems };
  } finally {
    fault?.remove();
    await miniflare.dispose();
  }
}

async function inEdgeRuntime(settings, flow) {
  const initialCode = await bundle('edge.mjs', ['edge-light', 'worker', 'browser'], 'iife');
  const runtime = new EdgeRuntime({ initialCode });
  const entry = flow === 'field' ? 'runField' : 'runSmoke';
  return JSON.parse(await runtime.evaluate(`${entry}(${JSON.stringify(settings)})`));
}

/** Runs `flow` ('smoke' or 'field') in `runtime`; `diskFile` only for the smoke flow in a process. */
function runFlow(runtime, settings, flow, diskFile) {
  if (runtime.kind === 'process') return inProcess(runtime, 'main.mjs', JSON.stringify({ settings, diskFile, flow }));
  if (runtime.kind === 'workerd') return inWorkerd(settings, flow, runtime.compat);
  return inEdgeRuntime(settings, flow);
}

/** The field flow in `runtime` against the app `appId`, its faults armed for that run only. */
async function fieldRun(runtime, emulator, settings) {
  const { mock } = emulator;
  const faults = fieldFaults(settings.appId, mock.clientSecret).map((rule) => mock.faults.add(rule));
  try {
    const seen = await runFlow(runtime, settings, 'field');
    const problems = judgeField(seen, mock.state.recordCount(settings.appId), mock.clientSecret);
    for (const file of FIELD_FILES) {
      const stored = mock.state.file(settings.appId, file.name);
      if (stored?.sha256 !== sha256(patternBytes(file.size, file.seed)))
        problems.push(`field: ${file.name} not stored byte-exact`);
    }
    const unmet = faults.filter((fault) => fault.remaining > 0).length;
    if (unmet > 0) problems.push(`field: ${unmet} of ${faults.length} faults were never met`);
    return { seen, problems };
  } finally {
    for (const fault of faults) fault.remove();
  }
}

/** What the emulator holds for `appId`, against what the flow sent. */
function verify(mock, appId, runtime) {
  const problems = [];
  const records = mock.state.recordCount(appId);
  if (records !== RECORD_COUNT) problems.push(`${records} records stored, not ${RECORD_COUNT}`);
  const files = [
    [MEMORY_FILE, true],
    [DISK_FILE, runtime.files],
  ];
  for (const [file, expected] of files) {
    if (!expected) continue;
    const stored = mock.state.file(appId, file.name);
    const want = sha256(patternBytes(file.size, file.seed));
    if (stored === undefined) problems.push(`${file.name} not stored`);
    else if (stored.sha256 !== want) problems.push(`${file.name} stored with another SHA-256 (${stored.size} bytes)`);
  }
  const agents = new Set(
    mock.state.requests
      .filter((request) => request.path.includes(`/apps/${appId}/`))
      .map((r) => r.headers['user-agent']),
  );
  const agent = [...agents][0] ?? '';
  if (agents.size !== 1 || !runtime.ua.test(agent)) problems.push(`User-Agent ${JSON.stringify([...agents])}`);
  return { records, userAgent: agent, problems };
}

async function main() {
  const out = process.argv[2] ?? 'runtime-matrix.json';
  const only = process.env.RUNTIMES?.split(',');
  const runtimes = RUNTIMES.filter((runtime) => !only || only.some((name) => runtime.name.startsWith(name)));
  const apps = runtimes.map((_, index) => `matrix-${index}`);
  const fieldApps = runtimes.map((_, index) => `field-${index}`);
  const emulator = await startEmulator({ apps: [...apps, ...fieldApps] });
  const dir = mkdtempSync(path.join(tmpdir(), 'push-runtime-matrix-'));
  const diskPath = path.join(dir, DISK_FILE.name);
  writeFileSync(diskPath, patternBytes(DISK_FILE.size, DISK_FILE.seed));
  const results = [];
  try {
    for (const [index, runtime] of runtimes.entries()) {
      const appId = apps[index];
      const settings = {
        clientId: emulator.mock.clientId,
        clientSecret: emulator.mock.clientSecret,
        authUrl: emulator.authUrl,
        baseUrl: emulator.baseUrl,
        scopeBase: emulator.mock.scopeBase,
        appId,
      };
      const started = performance.now();
      const result = { runtime: runtime.name, files: runtime.files, testingKit: null };
      if (runtime.kind === 'workerd')
        result.version = `workerd ${version('workerd')} (miniflare ${version('miniflare')})`;
      if (runtime.kind === 'edge') result.version = `edge-runtime ${version('edge-runtime')}`;
      try {
        const diskFile = { name: DISK_FILE.name, path: diskPath };
        result.seen = await runFlow(runtime, settings, 'smoke', diskFile);
        Object.assign(result, verify(emulator.mock, appId, runtime));
        if (runtime.kind !== 'process' && result.seen.pathRefused !== true) {
          result.problems.push('a file path was not refused with a ConfigurationError');
        }
      } catch (error) {
        result.problems = [`the flow failed: ${(error.stderr || error.message || String(error)).trim().slice(0, 800)}`];
      }
      result.smoke = (result.problems ?? []).length === 0;
      try {
        const field = await fieldRun(runtime, emulator, { ...settings, appId: fieldApps[index] });
        result.field = field.problems.length === 0;
        result.fieldSeen = field.seen;
        result.problems = [...(result.problems ?? []), ...field.problems];
      } catch (error) {
        result.field = false;
        result.problems = [
          ...(result.problems ?? []),
          `the field flow failed: ${(error.stderr || error.message || String(error)).trim().slice(0, 800)}`,
        ];
      }
      if (runtime.kind === 'workerd') {
        try {
          const shared = await sharedClientRun(emulator, { ...settings, appId: fieldApps[index] }, runtime.compat);
          result.sharedClient = shared.problems.length === 0;
          result.sharedClientSeen = shared.seen;
          result.problems = [...result.problems, ...shared.problems];
        } catch (error) {
          result.sharedClient = false;
          result.problems = [...result.problems, `shared client: ${(error.message || String(error)).slice(0, 800)}`];
        }
      }
      if (TESTING_KIT.includes(runtime.name)) {
        try {
          await inProcess(runtime, 'testing-kit.mjs');
          result.testingKit = true;
        } catch (error) {
          result.testingKit = false;
          result.problems.push(`testing kit: ${(error.stderr || error.message).trim().slice(0, 800)}`);
        }
      }
      result.ok = result.problems.length === 0;
      result.seconds = Math.round((performance.now() - started) / 100) / 10;
      results.push(result);
      console.log(
        `${result.ok ? 'ok  ' : 'FAIL'} ${runtime.name} (${result.seconds} s)${result.ok ? '' : `: ${result.problems.join('; ')}`}`,
      );
    }
  } finally {
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), records: RECORD_COUNT, runtimes: results }, null, 2)}\n`,
  );
  return results.every((result) => result.ok) ? 0 : 1;
}

process.exitCode = await main();
