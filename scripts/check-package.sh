#!/usr/bin/env bash
# Packs the package as npm would publish it, then checks the tarball's exports and types
# resolve for ESM and CJS consumers (publint, @arethetypeswrong/cli).
#
#   bash scripts/check-package.sh [--no-build]    # --no-build: pack dist/ as it is (just built)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The prepack script builds, unless the caller has just built (CI builds once for every check).
pack_flags=()
[[ "${1:-}" == --no-build ]] && pack_flags=(--ignore-scripts)
tarball=$(npm pack --silent "${pack_flags[@]}" --pack-destination "$out" | tail -n 1)
npx publint run "$out/$tarball" --strict
# Every resolution mode, node10 included: `typesVersions` maps the subpaths for TypeScript set-ups
# that predate `exports` (moduleResolution node10, the default of module commonjs in TypeScript 5).
npx attw "$out/$tarball"
# The optional peer @opentelemetry/api is loaded at run time, only with `tracing: true`: a build
# that bundled it would ship a second copy whose spans no application's tracer provider sees.
tar -xzf "$out/$tarball" -C "$out"
if grep -l -E 'ProxyTracerProvider|NoopTracerProvider' -r "$out/package/dist" --include='*.js' --include='*.cjs'; then
  echo "check-package: @opentelemetry/api is bundled into the files above; it must stay an external peer" >&2
  exit 1
fi
# zod is loaded on first need only (a record that is not plainly valid, the emulator's control
# routes): a CLI build that imports it from a file it loads for every command (main.js, program.js
# and the chunks they import statically) carries its heap into every publish.
node --input-type=module - "$out/package/dist/cli" <<'JS'
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
const seen = new Set();
const offenders = [];
const visit = (file) => {
  if (seen.has(file)) return;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  // Static imports only: `import ... from "x"` or `import "x"` at the start of a line.
  for (const [, specifier] of text.matchAll(/^import\s+(?:[^'"]*?\sfrom\s+)?["']([^"']+)["']/gm)) {
    if (specifier === 'zod' || specifier.startsWith('zod/')) offenders.push(file);
    else if (specifier.startsWith('./') || specifier.startsWith('../')) {
      const target = resolve(dirname(file), specifier);
      if (target.startsWith(process.argv[2])) visit(target);
    }
  }
};
visit(resolve(process.argv[2], 'main.js'));
visit(resolve(process.argv[2], 'program.js'));
if (offenders.length > 0) {
  console.error(`check-package: the CLI imports zod when it starts, from ${offenders.join(', ')}; keep it in a chunk loaded on demand`);
  process.exit(1);
}
JS
