#!/usr/bin/env bash
# scripts/test.sh - every test, in tiers (docs/testing.md):
#   1. formatting and lints (rustfmt, clippy with warnings as errors)
#   2. Rust unit and engine tests, including the NVRTC build of all device
#      code with the pip wheel's NVRTC (no GPU needed)
#   3. SQL tests against a fresh cluster (scripts/test-sql.sh)
# Whether a GPU is expected follows the machine: a GPU machine runs the GPU
# variants and must find its GPU; others must not.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT"
started=$(date +%s)

if [ -z "${PGSTROM_EXPECT_GPU:-}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    export PGSTROM_EXPECT_GPU=1
  else
    export PGSTROM_EXPECT_GPU=0
  fi
fi
echo "test: PGSTROM_EXPECT_GPU=$PGSTROM_EXPECT_GPU"

echo "== 1. rustfmt, clippy"
cargo fmt --all -- --check
if [ -n "${RUSTC_WORKSPACE_WRAPPER:-}" ]; then
  # PGSTROM_CLIPPY=1 (env.sh): clippy compiles the workspace's crates.  The
  # extension's crates were compiled (and linted) by `make install`; this
  # is a no-op then, and lints them when test.sh runs on its own.  The
  # tests and their crates are linted as tier 2 compiles them.
  cargo_build_ext
else
  # the same profile as the build: proc macros, build scripts (bindgen) shared
  cargo clippy --profile "$PGSTROM_PROFILE" --workspace --all-targets --quiet -- -D warnings
fi

echo "== 2. Rust tests (NVRTC: $NVRTC_DIR/libnvrtc.so.13, profile $PGSTROM_PROFILE) [$(( $(date +%s) - started )) s]"
# pg_strom has no tests (Cargo.toml) but is named, so that the dependencies'
# features are those of the build and its compiled crates are reused.
# The device code is built for sm_90 only here (each architecture takes
# minutes on two cores); the GPU check builds sm_80 and sm_90.
log=$(mktemp)
if PGSTROM_NVRTC_LIBRARY="$NVRTC_DIR/libnvrtc.so.13" PGSTROM_REQUIRE_NVRTC=1 \
   PGSTROM_NVRTC_ARCHS=${PGSTROM_NVRTC_ARCHS:-sm_90} \
   cargo test --profile "$PGSTROM_PROFILE" -p pg_strom -p pgstrom-runtime -p pgstrom-arrow -p pg2arrow -p pgstrom-sqlgen >"$log" 2>&1; then
  grep -E '^test result' "$log"
else
  tail -n 80 "$log"; echo "test: Rust tests FAILED"; exit 1
fi

echo "== 3. SQL tests [$(( $(date +%s) - started )) s]"
scripts/test-sql.sh

echo "test: all tiers passed in $(( $(date +%s) - started )) s"
