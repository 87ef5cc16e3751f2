#!/usr/bin/env bash
# Starts (or stops) a throw-away PostgreSQL and Redis on loopback for the integration recipes.
#
#   scripts/start-services.sh start   # idempotent; prints `export PG_URL=... REDIS_URL=...`
#   scripts/start-services.sh stop    # stops both and removes their data
#   scripts/start-services.sh env     # prints the exports only
#
#   eval "$(scripts/start-services.sh start)" && npx vitest run -c vitest.integration.config.ts
#
# Data lives in $SERVICES_DIR (default /tmp/push-api-client-services). The ports are PG_PORT (55432)
# and REDIS_PORT (56379), which the tests default to; when one is taken (both lie in Linux's range
# of ports for outgoing connections, so a busy machine can hold them), the next of a few others is
# used, and `start` and `env` print the ports in use. PostgreSQL
# refuses to run as root, so as root it runs as the `postgres` user. Both servers listen on
# 127.0.0.1 only; PostgreSQL trusts loopback connections, which is fine for a test cluster only.
set -euo pipefail

SERVICES_DIR=${SERVICES_DIR:-/tmp/push-api-client-services}
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}
PG_DATA="$SERVICES_DIR/pg"
REDIS_DIR="$SERVICES_DIR/redis"

log() { echo "start-services: $*" >&2; }

pg_bin() {
  if command -v initdb >/dev/null 2>&1; then
    dirname "$(command -v initdb)"
    return
  fi
  # Debian keeps the server binaries off PATH, under /usr/lib/postgresql/<major>/bin.
  local dir
  dir=$(find /usr/lib/postgresql -maxdepth 2 -type d -name bin 2>/dev/null | sort -V | tail -n 1)
  if [[ -z "$dir" ]]; then
    log "PostgreSQL server binaries not found (apt-get install -y postgresql)"
    exit 1
  fi
  echo "$dir"
}

# Runs a PostgreSQL command as a non-root user.
as_pg() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# The ports in use, as `start` recorded them.
used_port() { cat "$SERVICES_DIR/$1.port" 2>/dev/null || echo "$2"; }

print_env() {
  echo "export PG_URL=postgres://postgres@127.0.0.1:$(used_port pg "$PG_PORT")/postgres"
  echo "export REDIS_URL=redis://127.0.0.1:$(used_port redis "$REDIS_PORT")"
}

# The port after `port` to try when it is taken.
next_port() { echo $(($1 + 97)); }

start_pg() {
  local bin
  bin=$(pg_bin)
  mkdir -p "$SERVICES_DIR"
  chmod 755 "$SERVICES_DIR"
  if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
    mkdir -p "$PG_DATA"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$PG_DATA"
    chmod 700 "$PG_DATA"
    as_pg "$bin/initdb" -D "$PG_DATA" -U postgres --auth=trust --encoding=UTF8 --no-sync >/dev/null
  fi
  if as_pg "$bin/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    log "PostgreSQL already running on 127.0.0.1:$(used_port pg "$PG_PORT")"
    return
  fi
  local port=$PG_PORT
  for _ in 1 2 3 4; do
    # The socket goes into the data directory so no system directory (/run/postgresql) is needed.
    if as_pg "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$PG_DATA -c fsync=off" \
      start >/dev/null; then
      echo "$port" >"$SERVICES_DIR/pg.port"
      log "PostgreSQL started on 127.0.0.1:$port"
      return
    fi
    log "PostgreSQL did not start on port $port; its log says:"
    tail -n 5 "$PG_DATA/server.log" >&2 || true
    port=$(next_port "$port")
  done
  exit 1
}

start_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    log "redis-server not found (apt-get install -y redis-server)"
    exit 1
  fi
  mkdir -p "$REDIS_DIR"
  if [[ -f "$REDIS_DIR/redis.pid" ]] && kill -0 "$(cat "$REDIS_DIR/redis.pid")" 2>/dev/null; then
    log "Redis already running on 127.0.0.1:$(used_port redis "$REDIS_PORT")"
    return
  fi
  local port=$REDIS_PORT
  for _ in 1 2 3 4; do
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes \
      --pidfile "$REDIS_DIR/redis.pid" --dir "$REDIS_DIR" --logfile "$REDIS_DIR/redis.log" \
      --save '' --appendonly no
    for _ in $(seq 1 50); do
      if [[ -f "$REDIS_DIR/redis.pid" ]] && redis-cli -p "$port" ping >/dev/null 2>&1; then
        echo "$port" >"$SERVICES_DIR/redis.port"
        log "Redis started on 127.0.0.1:$port"
        return
      fi
      sleep 0.1
    done
    log "Redis did not answer on port $port; its log says:"
    tail -n 5 "$REDIS_DIR/redis.log" >&2 || true
    port=$(next_port "$port")
  done
  exit 1
}

stop_all() {
  if [[ -f "$PG_DATA/postmaster.pid" ]]; then
    as_pg "$(pg_bin)/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true
    log "PostgreSQL stopped"
  fi
  if [[ -f "$REDIS_DIR/redis.pid" ]]; then
    local pid
    pid=$(cat "$REDIS_DIR/redis.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      log "Redis stopped"
    fi
  fi
  rm -rf "$SERVICES_DIR"
}

case "${1:-start}" in
  start)
    start_pg
    start_redis
    print_env
    ;;
  stop) stop_all ;;
  env) print_env ;;
  *)
    echo "usage: $0 [start|stop|env]" >&2
    exit 2
    ;;
esac
