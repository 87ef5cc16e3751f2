/**
 * Checks the tarball `npm pack` would publish: only built files and docs, the entry points all
 * present, and packed/unpacked sizes within budget. Builds first unless `--no-build`.
 *
 *   npx tsx scripts/check-pack-size.ts [--no-build]
 *
 * Budgets are about 1.5 times the size measured when they were set (0.1.0: 168,049 bytes packed,
 * 597,722 unpacked), so that growth is a decision rather than an accident. Raised when the package
 * gained a minified build for workers and edge runtimes (dist/web), at 282 kB packed and 992 kB
 * unpacked in all.
 */
import { execFileSync } from 'node:child_process';

const PACKED_BUDGET = 320_000;
const UNPACKED_BUDGET = 1_150_000;

/** Nothing of these belongs in the tarball. */
const FORBIDDEN: [RegExp, string][] = [
  [/\.map$/, 'source map'],
  [/(^|\/)(test|tests|__tests__|bench|coverage|examples|src|scripts|\.tmp|docs)\//, 'development directory'],
  [/\.(test|spec|bench)\.[cm]?[jt]s$/, 'test file'],
  [/\.tgz$/, 'packed tarball'],
  [/(^|\/)\.env/, 'environment file'],
];

const REQUIRED = [
  'package.json',
  'README.md',
  'dist/index.js',
  'dist/index.cjs',
  'dist/index.d.ts',
  'dist/index.d.cts',
  'dist/testing/index.js',
  'dist/testing/index.cjs',
  'dist/testing/index.d.ts',
  'dist/testing/index.d.cts',
  'dist/cli/main.js',
  'dist/cli/program.js',
];

interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: { path: string; size: number }[];
}

function kb(bytes: number): string {
  return `${(bytes / 1000).toFixed(1)} kB`;
}

if (!process.argv.includes('--no-build')) execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'ignore' });
const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--silent'], { encoding: 'utf8' });
const [result] = JSON.parse(output) as PackResult[];
if (!result) throw new Error('npm pack --dry-run --json returned nothing');

const problems: string[] = [];
const paths = new Set(result.files.map((file) => file.path));
for (const file of result.files) {
  for (const [pattern, what] of FORBIDDEN) if (pattern.test(file.path)) problems.push(`${file.path}: ${what}`);
}
for (const path of REQUIRED) if (!paths.has(path)) problems.push(`${path}: missing`);
if (result.size > PACKED_BUDGET) problems.push(`packed ${kb(result.size)} exceeds the budget of ${kb(PACKED_BUDGET)}`);
if (result.unpackedSize > UNPACKED_BUDGET) {
  problems.push(`unpacked ${kb(result.unpackedSize)} exceeds the budget of ${kb(UNPACKED_BUDGET)}`);
}

console.log(`${result.filename}: ${result.files.length} files`);
for (const file of [...result.files].sort((a, b) => b.size - a.size))
  console.log(`  ${kb(file.size).padStart(9)}  ${file.path}`);
console.log(`packed   ${kb(result.size)} (budget ${kb(PACKED_BUDGET)})`);
console.log(`unpacked ${kb(result.unpackedSize)} (budget ${kb(UNPACKED_BUDGET)})`);
if (problems.length > 0) {
  console.error(`\n${problems.length} problem(s):\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  process.exitCode = 1;
}
