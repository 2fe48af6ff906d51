#!/usr/bin/env bash
# scripts/build.sh - build pg_strom and install it into the PostgreSQL that
# $PG_CONFIG names (by default the embedded PostgreSQL 18 under .deps/).
set -euo pipefail
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT/crates/pg_strom"
flags=()
[ "$PGSTROM_PROFILE" = release ] && flags+=(--release)
echo "build: cargo pgrx install ${flags[*]} --pg-config $PG_CONFIG"
cargo pgrx install "${flags[@]}" --pg-config "$PG_CONFIG" 2>&1 | grep -v '^\s*$' | tail -n 4
