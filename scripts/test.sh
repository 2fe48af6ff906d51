#!/usr/bin/env bash
# scripts/test.sh - every test, in tiers (docs/testing.md):
#   1. lint: rustfmt, ShellCheck on every shell script, ruff on every
#      Python file, no import cycle between the extension's top-level
#      modules (scripts/check-module-cycles.py), the docstring examples of
#      bench/benchlib.py (doctest), then clippy with warnings as errors
#   2. rust: Rust unit and engine tests, including the NVRTC build of all
#      device code with the pip wheel's NVRTC (no GPU needed)
#   3. sql: SQL tests against a fresh cluster (scripts/test-sql.sh)
#   4. versions: PostgreSQL 15, 16 and 17 (scripts/pg-versions.sh): built
#      for Debian's postgresql-15, installed there and its SQL tests run;
#      compiled for 16 and 17
# usage: scripts/test.sh [lint] [rust] [sql] [versions]   (default: all
# four, in order, as `make test` runs them; `make lint` and `make
# test-rust` run one)
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

# every shell script of the checkout, tracked or new (not ignored): *.sh,
# and files without an extension whose first line runs bash or sh (.ci/run)
shell_scripts() {
  local f
  git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
    [ -f "$f" ] || continue
    case "${f##*/}" in
      *.sh) echo "$f" ;;
      *.*) ;;
      *) if head -n 1 "$f" | grep -qE '^#!.*[/ ](ba)?sh( |$)'; then echo "$f"; fi ;;
    esac
  done
}

tier_lint() {
  echo "== 1. lints: rustfmt, ShellCheck, ruff, module cycles, clippy [$(( $(date +%s) - started )) s]"
  local failed=() scripts=()
  cargo fmt --all -- --check || failed+=(rustfmt)
  # ShellCheck and ruff come from .deps/lint (scripts/setup.sh); their
  # settings are .shellcheckrc and ruff.toml.  Both run from the root,
  # where the scripts' `. scripts/env.sh` resolve.
  if [ -x "$LINT_DIR/bin/shellcheck" ] && [ -x "$LINT_DIR/bin/ruff" ]; then
    mapfile -t scripts < <(shell_scripts)
    if "$LINT_DIR/bin/shellcheck" "${scripts[@]}"; then
      echo "lint: ShellCheck: ${#scripts[@]} shell scripts clean"
    else
      failed+=(ShellCheck)
    fi
    if "$LINT_DIR/bin/ruff" check --quiet .; then
      echo "lint: ruff: $(git ls-files --cached --others --exclude-standard '*.py' | wc -l) Python files clean"
    else
      failed+=(ruff)
    fi
  else
    echo "lint: ShellCheck and ruff are not in $LINT_DIR/bin: run scripts/setup.sh"
    failed+=("ShellCheck and ruff not installed")
  fi
  python3 scripts/check-module-cycles.py || failed+=("module cycles")
  # the examples in the benchmark library's docstrings (the chart's axis)
  if (cd bench && python3 -m doctest benchlib.py); then
    echo "lint: doctest: bench/benchlib.py's examples hold"
  else
    failed+=("doctest bench/benchlib.py")
  fi
  if [ ${#failed[@]} -gt 0 ]; then
    echo "test: lint FAILED: ${failed[*]}"; exit 1
  fi
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
}

tier_rust() {
  echo "== 2. Rust tests (NVRTC: $NVRTC_DIR/libnvrtc.so.13, profile $PGSTROM_PROFILE) [$(( $(date +%s) - started )) s]"
  # pg_strom has no tests (Cargo.toml) but is named, so that the dependencies'
  # features are those of the build and its compiled crates are reused.
  # The device code is built for sm_90 only here (each architecture takes
  # minutes on two cores); the GPU check builds sm_80 and sm_90.
  local log
  log=$(mktemp)
  if PGSTROM_NVRTC_LIBRARY="$NVRTC_DIR/libnvrtc.so.13" PGSTROM_REQUIRE_NVRTC=1 \
     PGSTROM_NVRTC_ARCHS=${PGSTROM_NVRTC_ARCHS:-sm_90} \
     cargo test --profile "$PGSTROM_PROFILE" -p pg_strom -p pgstrom-runtime -p pgstrom-arrow -p pg2arrow -p mysql2arrow -p pgstrom-sqlgen >"$log" 2>&1; then
    grep -E '^test result' "$log"
  else
    tail -n 80 "$log"; echo "test: Rust tests FAILED"; exit 1
  fi
}

tier_sql() {
  echo "== 3. SQL tests [$(( $(date +%s) - started )) s]"
  scripts/test-sql.sh
}

tier_versions() {
  echo "== 4. PostgreSQL 15, 16 and 17 (docs/testing.md, tier 9) [$(( $(date +%s) - started )) s]"
  scripts/pg-versions.sh setup check pg15
}

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(lint rust sql versions)
for t in "${tiers[@]}"; do
  case "$t" in
    lint|rust|sql|versions) ;;
    *) echo "usage: scripts/test.sh [lint] [rust] [sql] [versions]" >&2; exit 2 ;;
  esac
done
for t in "${tiers[@]}"; do "tier_$t"; done

if [ $# -gt 0 ]; then
  echo "test: tiers ${tiers[*]} passed in $(( $(date +%s) - started )) s"
else
  echo "test: all tiers passed in $(( $(date +%s) - started )) s"
fi
