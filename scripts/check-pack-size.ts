/**
 * Checks the tarball `npm pack` would publish: only built files, the user documentation (README,
 * docs/, examples/) and the notes it links to, the entry points all present, and packed/unpacked
 * sizes within budget. Builds first unless `--no-build`.
 *
 *   npx tsx scripts/check-pack-size.ts [--no-build]
 *
 * Budgets are about 1.5 times the size measured when they were set (0.1.0: 168,049 bytes packed,
 * 597,722 unpacked), so that growth is a decision rather than an accident. Raised when the package
 * gained a minified build for workers and edge runtimes (dist/web), at 282 kB packed and 992 kB
 * unpacked in all. Raised again when docs/*.md, examples/ and ARCHITECTURE.md went into the package,
 * so that the README's links work in node_modules and on the registry's page (118 kB packed, of
 * which 52 kB is the inspector screenshot, quantized to 8 bits): 498 kB packed and 1,558 kB
 * unpacked then (the CLI had grown meanwhile too), with about 12% of headroom. Raised again when
 * the SDK gained middleware, tracing, raw requests, `.withResponse()` and the adaptive window, with
 * their docs: 568 kB packed and 1,796 kB unpacked then, again with about 12% of headroom. Raised
 * again when stopped runs gave up their waits, batches waited for their token before being
 * announced, and the emulator gained reset generations and a shared inspector stream: 645 kB
 * packed and 2,034 kB unpacked then, with about 8% of headroom. Most of the package is the two
 * builds (ESM and CJS, each with its declarations) and the docs; the next raise should come with a
 * look at what could leave (the CHANGELOG's history, the declarations' JSDoc). Raised again at
 * 698 kB packed and 2,202 kB unpacked, after the red-team rounds on other runtimes and the
 * adaptive window's fixes, with about 5% of headroom. What was looked at: the CHANGELOG (118 kB,
 * every entry still under Unreleased: the only record a user has of what changed) and
 * ARCHITECTURE.md (45 kB, linked from the docs) stay; the declarations' JSDoc is what editors show.
 */
import { execFileSync } from 'node:child_process';

const PACKED_BUDGET = 735_000;
const UNPACKED_BUDGET = 2_320_000;

/** Nothing of these belongs in the tarball. */
const FORBIDDEN: [RegExp, string][] = [
  [/\.map$/, 'source map'],
  [/(^|\/)(test|tests|__tests__|bench|coverage|src|scripts|\.tmp)\//, 'development directory'],
  [/^docs\/api\//, 'generated API reference (npm run docs)'],
  // examples/msw-test-suite is a customer's test suite, shown as an example.
  [/^(?!examples\/).*\.(test|spec|bench)\.[cm]?[jt]s$/, 'test file'],
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
  'docs/README.md',
  'docs/configuration.md',
  'examples/quickstart.ts',
  'SECURITY.md',
  'ARCHITECTURE.md',
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
// Built above (or on purpose not): the prepack script would build again and print into the JSON.
const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--silent', '--ignore-scripts'], {
  encoding: 'utf8',
});
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
