// The README's Quick start, run verbatim as a new user would: the ES module block in a fresh
// `"type": "module"` project and the CommonJS block in a fresh project made by `npm init -y`, and
// the TypeScript block as the ts-node16 consumer project compiled it, against
// `push-api emulator` started from the installed tarball, with the settings its banner exports.
//
//   node run-quickstart.mjs <dir with node_modules/push-api-client> <README.md>
//
// Nothing of the README is copied here: the blocks, the output it shows and the export lines are
// read from it. Runs on the node binary that runs this script.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [base, readmePath] = process.argv.slice(2);
if (!base || !readmePath) throw new Error('usage: run-quickstart.mjs <base dir> <README.md>');
const readme = readFileSync(readmePath, 'utf8');

/** The text between a heading line and the next heading of the same or a higher level. */
function section(heading) {
  const lines = readme.split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `README.md has no "${heading}" section`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The fenced blocks of a Markdown text, in order, with their language. */
function blocks(markdown) {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, language, body]) => ({ language, body }));
}

function onlyBlock(heading, language) {
  const found = blocks(section(heading)).filter((block) => block.language === language);
  assert.ok(found.length >= 1, `README.md "${heading}" has no \`\`\`${language} block`);
  return found[0].body;
}

const esmCode = onlyBlock('## Quick start', 'js');
const esmOutput = onlyBlock('## Quick start', 'text').trimEnd();
const cjsCode = onlyBlock('### CommonJS', 'js');
const emulatorLines = blocks(section('## Start the emulator'))
  .filter((block) => block.language === 'sh')
  .flatMap((block) => block.body.split('\n'));
const readmeExports = emulatorLines.filter((line) => line.startsWith('export '));
/** The README's `curl -s <address>` that shows what the emulator received. */
const stateAddress = emulatorLines.map((line) => /^curl -s (\S+)$/.exec(line)?.[1]).find(Boolean);
assert.ok(stateAddress, 'README.md shows how to see what the emulator received');
assert.ok(/^import /m.test(esmCode), 'the Quick start block is an ES module');
assert.ok(/require\('push-api-client'\)/.test(cjsCode), 'the CommonJS block uses require');

/** Runs `node <args>` in `cwd`; resolves with its exit code and output. */
function run(args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `push-api emulator` from the installed package, on a free port; resolves once its banner is out. */
function startEmulatorCli() {
  const cli = join(base, 'node_modules', 'push-api-client', 'dist', 'cli', 'main.js');
  const child = spawn(process.execPath, [cli, 'emulator', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let banner = '';
    const timer = setTimeout(() => reject(new Error(`emulator banner incomplete:\n${banner}`)), 15_000);
    child.on('error', reject);
    child.stdout.on('data', (chunk) => {
      banner += chunk;
      if (banner.includes('Press Ctrl+C')) {
        clearTimeout(timer);
        resolve({ child, banner });
      }
    });
  });
}

/** NAME=value pairs from `export NAME=value` lines (values unquoted, as the banner prints them). */
function exportsOf(lines) {
  return Object.fromEntries(
    lines
      .map((line) => /^\s*export\s+(PUSH_[A-Z_]+)=(\S+)\s*$/.exec(line))
      .filter(Boolean)
      .map(([, name, value]) => [name, value.replace(/^['"]|['"]$/g, '')]),
  );
}

const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PUSH_')));
const { child: emulator, banner } = await startEmulatorCli();
try {
  const settings = exportsOf(banner.split('\n'));
  const port = new URL(settings.PUSH_BASE_URL).port;
  // The README shows the banner's lines for the default port, 4010.
  const shown = exportsOf(readmeExports);
  assert.deepEqual(Object.keys(shown).sort(), Object.keys(settings).sort(), 'README export lines name every setting');
  for (const [name, value] of Object.entries(shown)) {
    assert.equal(value.replace('127.0.0.1:4010', `127.0.0.1:${port}`), settings[name], `README's ${name}`);
  }
  const env = { ...clean, ...settings };
  /** What the emulator holds for the demo app, read as the README shows. */
  const received = async () => {
    const response = await fetch(stateAddress.replace('127.0.0.1:4010', `127.0.0.1:${port}`));
    assert.equal(response.status, 200);
    const app = (await response.json()).apps.find((candidate) => candidate.appId === settings.PUSH_APP_ID);
    return { records: app.records, files: app.files.map((file) => file.name) };
  };

  // A fresh ES module project, and a fresh CommonJS one made by `npm init -y`.
  const esm = join(base, 'quickstart-esm');
  const cjs = join(base, 'quickstart-cjs');
  mkdirSync(esm, { recursive: true });
  rmSync(cjs, { recursive: true, force: true });
  mkdirSync(cjs, { recursive: true });
  writeFileSync(
    join(esm, 'package.json'),
    `${JSON.stringify({ name: 'quickstart-esm', version: '1.0.0', type: 'module' }, null, 2)}\n`,
  );
  const init = spawnSync('npm', ['init', '-y'], { cwd: cjs, encoding: 'utf8' });
  assert.equal(init.status, 0, `npm init -y failed:\n${init.stderr}`);
  assert.notEqual(JSON.parse(readFileSync(join(cjs, 'package.json'), 'utf8')).type, 'module');
  writeFileSync(join(esm, 'index.js'), esmCode);
  writeFileSync(join(cjs, 'index.js'), cjsCode);

  const esmRun = await run(['index.js'], esm, env);
  assert.equal(esmRun.code, 0, `ES module Quick start exited ${esmRun.code}:\n${esmRun.stderr}`);
  assert.equal(esmRun.stdout.trimEnd(), esmOutput, 'ES module Quick start prints what the README shows');
  assert.deepEqual(await received(), { records: 2, files: ['users.csv'] });

  // As the README warns: the ES module block fails in the project `npm init -y` made.
  writeFileSync(join(cjs, 'esm-block.js'), esmCode);
  const misplaced = await run(['esm-block.js'], cjs, env);
  assert.notEqual(misplaced.code, 0, 'the ES module block ran in a CommonJS project');
  assert.match(misplaced.stderr, /SyntaxError/);

  const cjsRun = await run(['index.js'], cjs, env);
  assert.equal(cjsRun.code, 0, `CommonJS Quick start exited ${cjsRun.code}:\n${cjsRun.stderr}`);
  assert.match(cjsRun.stdout, /^1 sent, 0 failed, 0 unknown\n$/);
  assert.deepEqual(await received(), { records: 3, files: ['users.csv'] });

  // The outcome check: a refused credential stops the run, and the Quick start says so and exits 1.
  const refused = await run(['index.js'], esm, { ...env, PUSH_CLIENT_SECRET: 'not-the-secret' });
  assert.equal(refused.code, 1, `with a wrong secret the Quick start exited ${refused.code}:\n${refused.stdout}`);
  assert.match(refused.stderr, /^stopped: /m);
  assert.doesNotMatch(refused.stderr + refused.stdout, /not-the-secret/);
  assert.deepEqual(await received(), { records: 3, files: ['users.csv'] }, 'a refused run sends nothing');
  // The TypeScript Quick start, as the ts-node16 project compiled it (extract-ts-quickstart.mjs).
  const tsProject = join(base, 'ts-node16');
  const tsRun = await run([join(tsProject, 'dist', 'quickstart.js')], tsProject, env);
  assert.equal(tsRun.code, 0, `TypeScript Quick start exited ${tsRun.code}:\n${tsRun.stderr}`);
  assert.match(tsRun.stdout, /^1 sent, 0 failed, 0 unknown\n$/);
  assert.deepEqual(await received(), { records: 4, files: ['users.csv'] });
  const { PUSH_APP_ID: _, ...withoutApp } = env;
  const noApp = await run([join(tsProject, 'dist', 'quickstart.js')], tsProject, withoutApp);
  assert.notEqual(noApp.code, 0, 'the TypeScript Quick start ran without PUSH_APP_ID');
  assert.match(noApp.stderr, /PUSH_APP_ID/);
  console.log('   README Quick start: ES module, CommonJS and TypeScript projects ran as shown');
} finally {
  emulator.kill('SIGTERM');
}
