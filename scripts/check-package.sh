#!/usr/bin/env bash
# Packs the package as npm would publish it, then checks the tarball's exports and types
# resolve for ESM and CJS consumers (publint, @arethetypeswrong/cli).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tarball=$(npm pack --silent --pack-destination "$out" | tail -n 1)
npx publint run "$out/$tarball" --strict
# The CLI entry is a bin, not an import target; node10 resolution is not supported (engines >= 20.19).
npx attw "$out/$tarball" --profile node16
