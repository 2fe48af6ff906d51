#!/usr/bin/env bash
# scripts/build.sh - build pg_strom and pg2arrow and install them into the
# PostgreSQL that $PG_CONFIG names (by default the embedded PostgreSQL 18
# under .deps/): the extension into its lib and share directories,
# pg2arrow into its bin directory.
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT/crates/pg_strom"
flags=()
[ "$PGSTROM_PROFILE" = release ] && flags+=(--release)
echo "build: cargo pgrx install ${flags[*]} --pg-config $PG_CONFIG"
cargo pgrx install "${flags[@]}" --pg-config "$PG_CONFIG" 2>&1 | grep -v '^\s*$' | tail -n 4
cd "$PGSTROM_ROOT"
echo "build: cargo build ${flags[*]} -p pg2arrow"
cargo build "${flags[@]}" -p pg2arrow 2>&1 | grep -v '^\s*$' | tail -n 2
install -m 755 "target/$PGSTROM_PROFILE/pg2arrow" "$("$PG_CONFIG" --bindir)/pg2arrow"
