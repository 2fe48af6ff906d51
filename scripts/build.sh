#!/usr/bin/env bash
# scripts/build.sh - build pg_strom, pg2arrow and mysql2arrow and install them into the
# PostgreSQL that $PG_CONFIG names (by default the embedded PostgreSQL 18
# under .deps/): the extension into its lib and share directories,
# pg2arrow and mysql2arrow into its bin directory.  What `cargo pgrx install` does, without
# cargo-pgrx: cargo builds the library (pgrx finds PostgreSQL through
# PGRX_PG_CONFIG_PATH, set in env.sh), pgstrom-sqlgen writes the install
# script from the schema pgrx embedded in it.  The cargo profile is
# $PGSTROM_PROFILE (release; `make test` uses ci).
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
cd "$PGSTROM_ROOT"
cargo_build_ext
out=$PGSTROM_PROFILE_DIR
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
extdir=$("$PG_CONFIG" --sharedir)/extension
bindir=$("$PG_CONFIG" --bindir)
mkdir -p "$pkglibdir" "$extdir"
sql=$(mktemp) sql2=$(mktemp) control=$(mktemp)
trap 'rm -f "$sql" "$sql2" "$control"' EXIT
"$out/pgstrom-sqlgen" "$out/libpg_strom.so" crates/pg_strom/pg_strom.control "$version" "$sql"
# the install script must not depend on the run that wrote it (a changed
# script makes scripts/cluster.sh re-create the extension)
"$out/pgstrom-sqlgen" "$out/libpg_strom.so" crates/pg_strom/pg_strom.control "$version" "$sql2" 2>/dev/null
if ! cmp -s "$sql" "$sql2"; then
  echo "build: pgstrom-sqlgen wrote two different install scripts from one library"; exit 1
fi
sed "s/@CARGO_VERSION@/$version/g" crates/pg_strom/pg_strom.control > "$control"
# install_changed MODE SRC DST: only a file that differs is installed (an
# unchanged pg_strom.so keeps its time, so running clusters are not
# restarted), as a new file, not one rewritten in place: running backends
# keep the old one mapped
changed=()
install_changed() {
  cmp -s "$2" "$3" && return
  rm -f "$3"
  install -m "$1" "$2" "$3"
  changed+=("$(basename "$3")")
}
install_changed 755 "$out/libpg_strom.so" "$pkglibdir/pg_strom.so"
install_changed 644 "$control" "$extdir/pg_strom.control"
install_changed 644 "$sql" "$extdir/pg_strom--$version.sql"
install_changed 755 "$out/pg2arrow" "$bindir/pg2arrow"
install_changed 755 "$out/mysql2arrow" "$bindir/mysql2arrow"
echo "build: pg_strom $version ($PGSTROM_PROFILE) in $pkglibdir and $extdir, pg2arrow and mysql2arrow in $bindir;" \
  "${changed[*]:-nothing changed}${changed[*]:+ installed}"
