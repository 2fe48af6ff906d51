#!/usr/bin/env bash
# scripts/cluster.sh - a PostgreSQL 18 cluster with pg_strom preloaded.
#
#   scripts/cluster.sh start [DIR [PORT]]   init if needed, start, create the
#                                           extension, write DIR/env
#   scripts/cluster.sh stop  [DIR]
#   scripts/cluster.sh status [DIR]
#
# DIR defaults to .run (the development cluster of `make start`), PORT to
# 54318.  The server listens only on a Unix socket in DIR/sock, runs as an
# unprivileged OS user, logs to DIR/server.log.  DIR/env sets PATH, PGHOST,
# PGPORT, PGDATABASE and PGUSER: `. .run/env && psql -c '...'` works.
# Extra postgresql.conf lines can be passed in $PGSTROM_EXTRA_CONF;
# PGSTROM_NO_EXTENSION=1 skips CREATE EXTENSION; PGSTROM_INITDB_OPTS adds
# options to initdb (e.g. --allow-group-access) for a new cluster.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"

cmd=${1:-status}
if [ -z "${2:-}" ]; then link_into_checkout .run "$RUN"; fi
dir=${2:-$RUN}
port=${3:-${PGSTROM_PORT:-54318}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data=$dir/data
sock=$dir/sock
log=$dir/server.log

# The server must not inherit RUST_BACKTRACE: with it, every ERROR raised
# through Rust would carry a backtrace in its DETAIL.
pg_ctl_() { as_pg_user env -u RUST_BACKTRACE -u RUST_LIB_BACKTRACE "$PG_BINDIR/pg_ctl" -D "$data" "$@"; }

case "$cmd" in
start)
  if [ ! -s "$data/PG_VERSION" ]; then
    mkdir -p "$data" "$sock"
    chown -R "$PG_OS_USER" "$dir" 2>/dev/null || true
    chmod 700 "$data"
    read -ra initdb_opts <<<"${PGSTROM_INITDB_OPTS:-}"
    as_pg_user "$PG_BINDIR/initdb" -D "$data" -U "$PG_OS_USER" --auth=trust \
      --encoding=UTF8 --locale=C.UTF-8 "${initdb_opts[@]}" >"$dir/initdb.log" 2>&1 || {
        cat "$dir/initdb.log"; exit 1; }
    nvrtc_conf=""
    [ -e "$NVRTC_DIR/libnvrtc.so.13" ] && nvrtc_conf="pg_strom.nvrtc_library = '$NVRTC_DIR/libnvrtc.so.13'"
    # A CUDA toolkit, when present, is preferred to the pip wheel's NVRTC.
    [ -e /usr/local/cuda/lib64/libnvrtc.so.13 ] && nvrtc_conf=""
    cat >>"$data/postgresql.conf" <<CONF
# --- added by scripts/cluster.sh ---
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
shared_preload_libraries = 'pg_strom'
max_worker_processes = 32
max_parallel_workers_per_gather = 4
fsync = off
$nvrtc_conf
${PGSTROM_EXTRA_CONF:-}
CONF
    # a device-code cache another test cluster built (same sources, same
    # NVRTC: the cache's own key decides), so that each does not build it
    if [ -n "${PGSTROM_DEVICE_CODE_SEED:-}" ] && ls "$PGSTROM_DEVICE_CODE_SEED"/pg_strom-*.cubin >/dev/null 2>&1; then
      mkdir -p "$data/pg_strom/device_code"
      cp "$PGSTROM_DEVICE_CODE_SEED"/pg_strom-*.{cubin,index,sources} "$data/pg_strom/device_code/" 2>/dev/null || true
      chown -R "$PG_OS_USER" "$data/pg_strom" 2>/dev/null || true
    fi
  fi
  so="$("$PG_CONFIG" --pkglibdir)/pg_strom.so"
  if pg_ctl_ status >/dev/null 2>&1 && [ "$so" -nt "$data/postmaster.pid" ]; then
    echo "cluster: pg_strom.so was rebuilt: restarting"
    pg_ctl_ -m fast -w stop >/dev/null
  fi
  if pg_ctl_ status >/dev/null 2>&1; then
    echo "cluster: already running in $dir"
  else
    pg_ctl_ -l "$log" -w -t 60 start >/dev/null || { tail -n 30 "$log"; exit 1; }
    echo "cluster: started in $dir (socket $sock, port $port)"
  fi
  cat >"$dir/env" <<ENV
export PATH="$PG_BINDIR:\$PATH"
export PGHOST="$sock"
export PGPORT=$port
export PGDATABASE=postgres
export PGUSER=$PG_OS_USER
ENV
  # shellcheck source=/dev/null  # (written by scripts/cluster.sh)
  . "$dir/env"
  if [ -z "${PGSTROM_NO_EXTENSION:-}" ]; then
    # A rebuilt extension script (same version, new objects) is re-created;
    # DROP without CASCADE refuses when user objects depend on it.
    sql_hash=$(cat "$("$PG_CONFIG" --sharedir)"/extension/pg_strom--*.sql | md5sum | cut -c1-32)
    if [ -s "$dir/extension.md5" ] && [ "$(cat "$dir/extension.md5")" != "$sql_hash" ]; then
      psql -qX -c 'DROP EXTENSION IF EXISTS pg_strom' >/dev/null 2>&1 \
        || echo "cluster: the extension script changed but objects depend on pg_strom; kept the old one"
    fi
    psql -qX -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION IF NOT EXISTS pg_strom' >/dev/null
    echo "$sql_hash" >"$dir/extension.md5"
    # Tests that expect the GPU wait for the GPU service's device code
    # (built when the service starts, once per cache): until it is built,
    # plans take the CPU engine.
    if [ "${PGSTROM_EXPECT_GPU:-0}" = 1 ]; then
      archs=$(psql -qXAt -v ON_ERROR_STOP=1 -c 'SELECT arch FROM pgstrom.device_code_build()')
      # then the service loads it (a fraction of a second)
      for _ in $(seq 1 300); do
        opening=$(psql -qXAt -c "SELECT count(*) FROM pgstrom.gpu_service_status, unnest(gpus) g
                                  WHERE g LIKE '%being opened%'" 2>/dev/null || echo 1)
        [ "$opening" = 0 ] && break
        sleep 0.1
      done
      if [ -n "${PGSTROM_DEVICE_CODE_SEED:-}" ]; then
        # only the GPUs' own architectures: the tests build others on purpose
        mkdir -p "$PGSTROM_DEVICE_CODE_SEED"
        for a in $archs; do
          cp "$data"/pg_strom/device_code/pg_strom-"$a"{-*.cubin,.index,.sources} "$PGSTROM_DEVICE_CODE_SEED/" 2>/dev/null || true
        done
      fi
    fi
  fi
  ;;
stop)
  if [ -s "$data/PG_VERSION" ] && pg_ctl_ status >/dev/null 2>&1; then
    pg_ctl_ -m fast -w stop >/dev/null
    echo "cluster: stopped ($dir)"
  else
    echo "cluster: not running ($dir)"
  fi
  ;;
status)
  pg_ctl_ status || true
  ;;
*)
  echo "usage: $0 start|stop|status [DIR [PORT]]" >&2; exit 2 ;;
esac
