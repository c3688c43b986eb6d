#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1, for tests and benchmarks: Debian's server binaries,
# a data folder in DIR, a free port, trust authentication for local connections. Postgres refuses to
# run as root, so as root it runs as PG_USER (default: nobody) in a DIR that user owns.
#
#   scripts/pg.sh start DIR     creates and starts a cluster in DIR (created if missing, must be empty)
#                               and prints one JSON line: {"url","port","dir"}
#   scripts/pg.sh stop DIR      stops it (fast) and removes DIR
#   scripts/pg.sh kill DIR      SIGKILLs the server (the postmaster and its backends): a crash
#   scripts/pg.sh restart DIR   starts it again on the same port after a kill or a stop; returns once
#                               it accepts connections (crash recovery included)
#
# Durability is off (fsync, synchronous_commit, full_page_writes): a throwaway cluster on a shared
# machine; PG_DURABLE=1 keeps Postgres's defaults (the bench, which compares with SQLite's fsynced
# commits). PG_PORT is tried first when set; PG_BIN overrides where initdb and pg_ctl are found.
# Needs (Debian 12): apt-get install -y postgresql
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: $0 start|stop|kill|restart DIR" >&2; exit 2; }

find_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then echo "$PG_BIN"; return; fi
  local newest
  newest=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [[ -n "$newest" ]]; then echo "$newest"; return; fi
  command -v pg_ctl >/dev/null && { dirname "$(command -v pg_ctl)"; return; }
  echo "scripts/pg.sh: no PostgreSQL server binaries (apt-get install -y postgresql)" >&2
  exit 1
}
BIN=$(find_bin)

# Runs a command as the cluster's owner (PG_USER when root, else whoever runs this).
as_owner() {
  if [[ $(id -u) == 0 ]]; then runuser -u "${PG_USER:-nobody}" -- "$@"; else "$@"; fi
}

free_port() {
  if [[ -n "${PG_PORT:-}" ]]; then echo "$PG_PORT"; return; fi
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pg_start() {
  local port=$1
  as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null 2>"$dir/pg_ctl.err" || {
    cat "$dir/pg_ctl.err" >&2 || true
    echo "scripts/pg.sh: the server did not start; the end of $dir/server.log:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    return 1
  }
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    [[ -z "$(ls -A "$dir")" ]] || { echo "scripts/pg.sh: $dir is not empty" >&2; exit 1; }
    dir=$(cd "$dir" && pwd)
    if [[ $(id -u) == 0 ]]; then
      chown "${PG_USER:-nobody}" "$dir"
      # The owner must reach DIR through its parents (a mktemp folder is 0700).
      p=$(dirname "$dir")
      while [[ "$p" != / ]]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
    fi
    as_owner "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { echo "scripts/pg.sh: initdb failed:" >&2; tail -n 20 "$dir/initdb.log" >&2; rm -rf "$dir"; exit 1; }
    if [[ "${PG_DURABLE:-}" != 1 ]]; then
      printf 'fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n' >>"$dir/data/postgresql.conf"
    fi
    printf 'max_connections = 300\nshared_buffers = 64MB\n' >>"$dir/data/postgresql.conf"
    port=$(free_port)
    echo "$port" >"$dir/port"
    pg_start "$port" || { rm -rf "$dir"; exit 1; }
    printf '{"url":"postgres://postgres@127.0.0.1:%s/postgres","port":%s,"dir":"%s"}\n' "$port" "$port" "$dir"
    ;;
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  kill)
    pid=$(head -n 1 "$dir/data/postmaster.pid")
    # The postmaster and its backends at once, as a crash of the machine would leave them.
    kill -KILL "$pid" $(pgrep -P "$pid" || true) 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    ;;
  restart)
    pg_start "$(cat "$dir/port")"
    ;;
  *)
    echo "usage: $0 start|stop|kill|restart DIR" >&2
    exit 2
    ;;
esac
