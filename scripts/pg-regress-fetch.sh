#!/usr/bin/env bash
# scripts/pg-regress-fetch.sh - PostgreSQL's own regression files
# (src/test/regress of PostgreSQL $PG_REGRESS_VERSION) for the pg-regress
# tier (scripts/pg-regress-diff.py, docs/testing.md).
#
#   scripts/pg-regress-fetch.sh          fetch unless cached; print the path
#
# The files come from Debian's source package postgresql-18, fetched with
# `apt-get source` from a deb-src entry of deb.debian.org: apt runs with a
# private sources list and state directory (no root needed, the system's
# apt configuration is not touched).  Suites are tried newest first
# (unstable, testing, trixie-backports); the first that carries
# postgresql-18 at version $PG_REGRESS_VERSION-* is used, else the newest
# 18.x any of them has (the script says so).  Only the upstream tarball
# (.orig.tar.*) is read: python3's tarfile extracts src/test/regress from
# it, so neither dpkg-source nor Debian's patches are involved.
# The cache lives outside the clone, keyed by the version:
#   ${PGSTROM_PG_REGRESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgstrom/pg-regress-$PG_REGRESS_VERSION}
# holding regress/ (sql/, expected/, data/, input/, output/,
# parallel_schedule, regress.c) and SOURCE (the suite and package version).
# A cache with SOURCE is used as is (idempotent; delete it to fetch again).
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"

ver=${PG_REGRESS_VERSION:-18.6}
cache=${PGSTROM_PG_REGRESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pgstrom/pg-regress-$ver}
say() { printf 'pg-regress-fetch: %s\n' "$*" >&2; }

if [ -s "$cache/SOURCE" ] && [ -s "$cache/regress/parallel_schedule" ]; then
  echo "$cache"; exit 0
fi

mkdir -p "$(dirname "$cache")"
work=$(mktemp -d "$(dirname "$cache")/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/parts" "$work/src"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
suites=(unstable testing trixie-backports)
for s in "${suites[@]}"; do
  echo "deb-src [signed-by=$keyring] http://deb.debian.org/debian $s main"
done >"$work/apt/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list"
          -o "Dir::Etc::SourceParts=$work/apt/parts"
          -o "Dir::State::Lists=$work/apt/lists"
          -o "Dir::Cache=$work/apt/cache"
          -o "Debug::NoLocking=1"
          # as root apt downloads as _apt, who cannot write the private dir
          -o "APT::Sandbox::User=$(id -un)")
say "apt-get update (deb-src: ${suites[*]}) into a private state directory"
apt-get "${apt_opts[@]}" -qq update >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; exit 1; }

# versions of postgresql-18 per suite (apt-cache madison reads the indexes)
madison=$(apt-cache "${apt_opts[@]}" madison postgresql-18 2>/dev/null | grep ' Sources$' || true)
pick_suite="" pick_ver="" best_suite="" best_ver=""
for s in "${suites[@]}"; do
  v=$(awk -F'|' -v s=" $s/main Sources" 'index($3, s) {gsub(/ /, "", $2); print $2}' <<<"$madison" | sort -V | tail -n1)
  [ -n "$v" ] || continue
  say "$s has postgresql-18 $v"
  case "$v" in "$ver"-*) pick_suite=$s pick_ver=$v; break ;; esac
  if [ -z "$best_ver" ] || dpkg --compare-versions "$v" gt "$best_ver"; then
    best_suite=$s best_ver=$v
  fi
done
if [ -z "$pick_ver" ]; then
  [ -n "$best_ver" ] || { say "no suite carries postgresql-18"; exit 1; }
  pick_suite=$best_suite pick_ver=$best_ver
  say "no suite has $ver-*: using the closest, $pick_ver from $pick_suite"
fi
say "apt-get source --download-only postgresql-18=$pick_ver ($pick_suite)"
(cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only "postgresql-18=$pick_ver" >"$work/source.log" 2>&1) \
  || { cat "$work/source.log" >&2; exit 1; }
origs=("$work/src"/postgresql-18_*.orig.tar.*)
orig=${origs[0]}
# python3's tarfile rather than tar: no bzip2 / xz program needed
python3 - "$orig" "$work/src" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    members = [m for m in t.getmembers() if "/src/test/regress/" in m.name and (m.isfile() or m.isdir())]
    if hasattr(tarfile, "data_filter"):
        t.extractall(sys.argv[2], members=members, filter="data")
    else:
        t.extractall(sys.argv[2], members=members)
PY
tops=("$work/src"/*/src/test/regress)
top=${tops[0]#"$work/src/"}
top=${top%%/*}
rm -rf "$cache"
mkdir -p "$cache"
mv "$work/src/$top/src/test/regress" "$cache/regress"
printf 'postgresql-18 %s from deb.debian.org %s (%s, src/test/regress)\n' \
  "$pick_ver" "$pick_suite" "$(basename "$orig")" >"$cache/SOURCE"
say "cached in $cache ($(cat "$cache/SOURCE"))"
echo "$cache"
