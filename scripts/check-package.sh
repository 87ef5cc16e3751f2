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
# routes): a CLI build that imports it at the top of a file it loads for every command carries its
# heap into every publish. Only files loaded on demand (dist/cli/chunks/) may import it.
if grep -l -E '^import .* from "zod"' "$out/package/dist/cli/main.js" "$out/package/dist/cli/program.js"; then
  echo "check-package: the CLI imports zod when it starts (above); keep it in a chunk loaded on demand" >&2
  exit 1
fi
