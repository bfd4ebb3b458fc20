#!/usr/bin/env bash
# Starts a throwaway PostgreSQL and Redis on loopback for the real-server test suites
# and prints the export lines for DATABASE_URL and REDIS_URL.
#   eval "$(bash .ci/services.sh start)"   then   bash .ci/services.sh stop
# Installs the Debian packages when they are missing (CI starts on a bare machine).
set -euo pipefail
ROOT=${PD_SERVICES_DIR:-/tmp/pixeldrop-services}
PG_PORT=${PD_PG_PORT:-55432}
REDIS_PORT=${PD_REDIS_PORT:-56379}

need_install() {
  local missing=()
  command -v redis-server >/dev/null || missing+=(redis-server)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq "${missing[@]}" >&2
  fi
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1; }

start() {
  need_install
  mkdir -p "$ROOT"
  local bin; bin=$(pg_bin)
  # PostgreSQL refuses to run as root: use the postgres account when we are root.
  local as=(); if [ "$(id -u)" = 0 ]; then id postgres >/dev/null 2>&1 || useradd -r postgres; as=(runuser -u postgres --); chown postgres "$ROOT"; fi
  if [ ! -f "$ROOT/pg/PG_VERSION" ]; then
    "${as[@]}" "$bin/initdb" -D "$ROOT/pg" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  if ! "${as[@]}" "$bin/pg_ctl" -D "$ROOT/pg" status >/dev/null 2>&1; then
    "${as[@]}" "$bin/pg_ctl" -D "$ROOT/pg" -l "$ROOT/pg.log" -w \
      -o "-p $PG_PORT -k $ROOT -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" start >&2
  fi
  "${as[@]}" "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "select 1 from pg_database where datname='pixeldrop'" | grep -q 1 \
    || "${as[@]}" "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "create database pixeldrop" >&2
  if ! redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --logfile "$ROOT/redis.log" --dir "$ROOT" >&2
    for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  echo "export DATABASE_URL=postgres://postgres@127.0.0.1:$PG_PORT/pixeldrop"
  echo "export REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
}

stop() {
  local bin; bin=$(pg_bin)
  local as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  "${as[@]}" "$bin/pg_ctl" -D "$ROOT/pg" -m fast stop >&2 || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
