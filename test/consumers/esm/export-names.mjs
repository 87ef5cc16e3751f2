// Every exported class and function of every entry point (ESM, CJS, and the build for workers and
// edge runtimes) has the `.name` of its export: a bundler rename (`_PushApiError`) would show in
// error output and break `error.name === 'PushApiError'` checks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const packageJson = require.resolve('push-api-client/package.json');
const root = path.dirname(packageJson);
const { exports } = JSON.parse(readFileSync(packageJson, 'utf8'));

/** Every JavaScript file an export condition points to, with how to load it. */
function targets(value, out = new Set()) {
  if (typeof value === 'string') {
    if (/\.(c|m)?js$/.test(value)) out.add(value);
  } else if (value && typeof value === 'object') {
    for (const nested of Object.values(value)) targets(nested, out);
  }
  return out;
}

const files = [...targets(exports)];
let checked = 0;
for (const file of files) {
  const full = path.join(root, file);
  const module = file.endsWith('.cjs') ? require(full) : await import(full);
  for (const [name, value] of Object.entries(module)) {
    if (typeof value !== 'function') continue;
    assert.equal(value.name, name, `${file}: export ${name} is named ${value.name}`);
    checked++;
  }
}
assert.ok(
  files.some((file) => file.includes('/web/')),
  'the worker build is among the export targets',
);
console.log(`export names: ${checked} classes and functions in ${files.length} files match their export names`);
