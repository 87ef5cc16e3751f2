#!/usr/bin/env bash
# The runtime matrix: packs the package, installs it into a throw-away project with the runtimes
# that come from the npm registry (miniflare/workerd, edge-runtime; Bun, Deno and Node 22/24 come
# through npx), and runs one smoke flow per runtime against the emulator over real HTTP
# (scripts/runtime-matrix/driver.mjs), judged by the emulator's state.
#
#   bash scripts/runtime-matrix.sh [results.json]     # default scripts/runtime-matrix/results.json
#   RUNTIMES="Bun,Deno" bash scripts/runtime-matrix.sh /tmp/out.json
#   NO_BUILD=1 bash scripts/runtime-matrix.sh ...     # pack dist/ as it is (CI has just built it)
#
# Then `npx tsx scripts/runtimes-doc.ts` writes the Runtimes tables of docs/runtimes.md and README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
results=$(realpath -m "${1:-scripts/runtime-matrix/results.json}")
version_of() { node -p "require('./package.json').devDependencies['$1']"; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/push-api-client-runtimes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== build and pack"
pack_flags=()
if [[ -n "${NO_BUILD:-}" && -f dist/web/index.js ]]; then pack_flags=(--ignore-scripts); fi
tarball="$tmp/$(npm pack --silent ${pack_flags[@]+"${pack_flags[@]}"} --pack-destination "$tmp" | tail -n 1)"

echo "== install the package and the runtimes from the npm registry"
project="$tmp/project"
mkdir -p "$project"
cp scripts/runtime-matrix/*.mjs "$project/"
echo '{ "name": "runtime-matrix", "private": true, "type": "module" }' >"$project/package.json"
packages=("$tarball" "msw@$(version_of msw)" "esbuild@$(version_of esbuild)" miniflare@4 edge-runtime@4)
(cd "$project" && npm install --no-audit --no-fund --prefer-offline --loglevel=error "${packages[@]}" >/dev/null)

echo "== smoke flow per runtime"
started=$SECONDS
node "$project/driver.mjs" "$results"
echo "== runtime matrix: $((SECONDS - started)) s, results in ${results#"$repo"/}"
