#!/usr/bin/env bash
# Consumer smoke tests: packs the package (building it first, unless NO_BUILD), installs the
# tarball into throw-away projects (test/consumers/*) and runs them on each Node version in
# NODE_VERSIONS, then runs the README's Quick start verbatim in a fresh ES module project and a
# fresh CommonJS one, and its TypeScript Quick start as compiled by the ts-node16 project. The
# TypeScript projects also compile and run shared/responses.ts: `.withResponse()`,
# `client.request`, middleware and a stopped run's `.report`, as the docs show them.
#
#   bash scripts/test-consumers.sh                  # Node 20, 22 and 24
#   NODE_VERSIONS="22" bash scripts/test-consumers.sh
#   KEEP_TMP=1 bash scripts/test-consumers.sh       # keep the projects for inspection
#   NO_BUILD=1 bash scripts/test-consumers.sh       # pack dist/ as it is (CI has just built it)
#
# Without NO_BUILD the pack builds through `prepack`, as on a fresh clone (in CI,
# test/docs/package-links.e2e.test.ts does that).
#
# Installs sharing the npm cache: `base` (the tarball, typescript, @types/node, and msw, the
# optional peer dependency that `push-api-client/testing/msw` needs) hosts the ESM, CJS and
# TypeScript projects, which resolve node_modules from their parent directory; `vitest-msw` adds
# vitest; `no-msw` has no msw at all, and checks that `push-api-client/testing` needs none; `jest`
# adds Jest, and `ts7` holds TypeScript 7, which type-checks the TypeScript projects again.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
NODE_VERSIONS=${NODE_VERSIONS:-"20 22 24"}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/push-api-client-consumers.XXXXXX")
cleanup() { if [[ -z "${KEEP_TMP:-}" ]]; then rm -rf "$tmp"; else echo "kept $tmp"; fi; }
trap cleanup EXIT

step() { echo "== $* (${SECONDS}s)"; }
version_of() { node -p "require('./package.json').devDependencies['$1']"; }

step "build and pack"
# The prepack script builds, as on a fresh clone, unless NO_BUILD says dist/ is fresh.
pack_flags=()
if [[ -n "${NO_BUILD:-}" && -f dist/web/index.js ]]; then pack_flags=(--ignore-scripts); fi
tarball="$tmp/$(npm pack --silent ${pack_flags[@]+"${pack_flags[@]}"} --pack-destination "$tmp" | tail -n 1)"

install() { # dir, then package specs
  local dir=$1
  shift
  (cd "$dir" && npm install --no-audit --no-fund --prefer-offline --loglevel=error "$@" >/dev/null)
}

step "install the tarball into throw-away projects"
mkdir -p "$tmp/base" "$tmp/vitest-msw" "$tmp/no-msw"
echo '{ "name": "consumers-base", "private": true }' >"$tmp/base/package.json"
cp -R test/consumers/esm test/consumers/cjs test/consumers/ts-node10 test/consumers/ts-node16 test/consumers/ts-bundler "$tmp/base/"
# Both TypeScript projects compile the same files, each under its own module resolution.
for project in ts-node16 ts-bundler; do cp test/consumers/shared/main.ts test/consumers/shared/sdk-only.ts test/consumers/shared/responses.ts "$tmp/base/$project/"; done
# The README's TypeScript Quick start, verbatim, compiled by both under every configuration below.
node test/consumers/quickstart/extract-ts-quickstart.mjs README.md "$tmp/base/ts-node16/quickstart.ts" "$tmp/base/ts-bundler/quickstart.ts"
cp -R test/consumers/vitest-msw/. "$tmp/vitest-msw/"
cp -R test/consumers/no-msw/. "$tmp/no-msw/"
types_node=$(version_of @types/node)
typescript=$(version_of typescript)
# TypeScript 7 (what `npm i -D typescript` installs today) in a project of its own; it type-checks
# the same consumer projects as TypeScript 5 does.
mkdir -p "$tmp/ts7"
echo '{ "name": "consumers-ts7", "private": true }' >"$tmp/ts7/package.json"
# Jest, not a dependency of ours: a suite in its default CommonJS mode (the emulator started in
# globalSetup, reached over HTTP) and one in its ESM mode (the testing kit, msw included, in the test).
cp -R test/consumers/jest "$tmp/jest"
# The five installs at once: they wait on the registry more than on the machine. `wait` on each
# pid, so that a failed install fails the script.
install_pids=()
install "$tmp/base" "$tarball" "typescript@$typescript" "@types/node@$types_node" "msw@$(version_of msw)" &
install_pids+=($!)
install "$tmp/no-msw" "$tarball" "typescript@$typescript" "@types/node@$types_node" &
install_pids+=($!)
install "$tmp/vitest-msw" "$tarball" "typescript@$typescript" "@types/node@$types_node" \
  "vitest@$(version_of vitest)" "msw@$(version_of msw)" &
install_pids+=($!)
install "$tmp/ts7" "typescript@7" &
install_pids+=($!)
install "$tmp/jest" "$tarball" "jest@30" "msw@$(version_of msw)" &
install_pids+=($!)
for pid in "${install_pids[@]}"; do wait "$pid"; done

node_for() { # prints the path of a node binary of the given major version
  if [[ "$(node -p 'process.versions.node.split(".")[0]')" == "$1" ]]; then
    command -v node
  else
    npx -y -p "node@$1" -- node -p process.execPath
  fi
}

failures=0
run() { # label, then the command
  local label=$1
  shift
  if "$@"; then :; else
    echo "FAIL: $label"
    failures=$((failures + 1))
  fi
}

step "type-check and compile the TypeScript projects"
# Type errors are failures; tsc still emits, so the runs below show whether the code works too.
# Two run at a time (tsc keeps a core and a half busy), each one's output shown whole when it ends.
tsc="$tmp/base/node_modules/typescript/bin/tsc"
tsc7="$tmp/ts7/node_modules/typescript/bin/tsc"
jobs_dir="$tmp/jobs"
mkdir -p "$jobs_dir"
labels=()
run_beside() { # label, then the command; at most two at a time
  while [[ $(jobs -rp | wc -l) -ge 2 ]]; do wait -n || true; done
  local id=${#labels[@]}
  labels+=("$1")
  shift
  (
    set +e
    "$@" >"$jobs_dir/$id.out" 2>&1
    echo $? >"$jobs_dir/$id.status"
  ) &
}
for project in ts-node16 ts-bundler; do
  run_beside "tsc $project" node "$tsc" -p "$tmp/base/$project"
  run_beside "tsc $project (SDK entry, no DOM library)" node "$tsc" -p "$tmp/base/$project/tsconfig.sdk-only.json"
  run_beside "tsc $project (exactOptionalPropertyTypes, noUncheckedIndexedAccess)" node "$tsc" -p "$tmp/base/$project/tsconfig.strict.json"
  # (tsconfig.strict.json extends tsconfig.json with stricter options and more files: what it
  # accepts, tsconfig.json accepts.)
  for config in tsconfig.sdk-only.json tsconfig.strict.json; do
    run_beside "typescript 7: $project/$config" node "$tsc7" --noEmit -p "$tmp/base/$project/$config"
  done
done
run_beside "tsc ts-node10 (module commonjs, subpaths through typesVersions)" node "$tsc" -p "$tmp/base/ts-node10"
run_beside "tsc vitest-msw" node "$tmp/vitest-msw/node_modules/typescript/bin/tsc" -p "$tmp/vitest-msw"
run_beside "tsc no-msw (testing kit without msw)" node "$tmp/no-msw/node_modules/typescript/bin/tsc" -p "$tmp/no-msw"
wait
for id in "${!labels[@]}"; do
  cat "$jobs_dir/$id.out"
  if [[ "$(cat "$jobs_dir/$id.status")" != 0 ]]; then
    echo "FAIL: ${labels[$id]}"
    failures=$((failures + 1))
  fi
done

for version in $NODE_VERSIONS; do
  step "node $version"
  bin=$(node_for "$version" | tail -n 1)
  run "esm on node $version" "$bin" "$tmp/base/esm/main.mjs"
  run "cjs on node $version" "$bin" "$tmp/base/cjs/main.cjs"
  run "export names on node $version" "$bin" "$tmp/base/esm/export-names.mjs"
  run "ts-node16 on node $version" "$bin" "$tmp/base/ts-node16/dist/main.js"
  run "ts-bundler on node $version" "$bin" "$tmp/base/ts-bundler/dist/main.js"
  run "no-msw on node $version" "$bin" "$tmp/no-msw/dist/main.js"
  run "ts-node10 on node $version" "$bin" "$tmp/base/ts-node10/dist/main.js"
  run "cli on node $version" "$bin" "$tmp/base/node_modules/push-api-client/dist/cli/main.js" --version
  run "jest (CommonJS mode) on node $version" \
    bash -c 'cd "$1" && "$2" node_modules/jest/bin/jest.js --selectProjects commonjs' _ "$tmp/jest" "$bin"
  run "jest (ESM mode) on node $version" \
    bash -c 'cd "$1" && "$2" --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects esm' _ "$tmp/jest" "$bin"
  run "vitest-msw on node $version" \
    bash -c 'cd "$1" && "$2" node_modules/vitest/vitest.mjs run --reporter=dot' _ "$tmp/vitest-msw" "$bin"
  # The README's Quick start, verbatim, in fresh ES module and CommonJS projects against `push-api emulator`.
  run "README quick start on node $version" "$bin" "$repo/test/consumers/quickstart/run-quickstart.mjs" "$tmp/base" "$repo/README.md"
done

if [[ $failures -gt 0 ]]; then
  echo "consumer smoke tests: $failures failed"
  exit 1
fi
echo "consumer smoke tests: all passed (node $NODE_VERSIONS)"
