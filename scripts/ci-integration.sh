#!/usr/bin/env bash
# CI step for the recipes that need real servers: installs PostgreSQL and Redis from Debian
# packages when missing, starts them on loopback, runs the integration tests, stops them.
set -euo pipefail
cd "$(dirname "$0")/.."

has_pg() { command -v initdb >/dev/null 2>&1 || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }

if ! has_pg || ! command -v redis-server >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends postgresql redis-server
fi

trap 'bash scripts/start-services.sh stop' EXIT
# Captured first, so that a server that cannot start fails this step here (eval of an empty
# output would not).
services_env=$(bash scripts/start-services.sh start)
eval "$services_env"
npx vitest run -c vitest.integration.config.ts
# The fleet benchmark needs Redis, so it runs here rather than in the quick benchmarks before
# (where it skips itself). Quick mode: a smoke run; its figures are not enforced.
npm run bench -- --quick --only fleet --out bench/results/quick-fleet.json
