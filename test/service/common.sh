# test/service/common.sh - sourced by the GPU service tests (crash.sh,
# leak.sh): `service_db DB ROWS KEYS` makes database DB with the extension,
# a table t of ROWS rows (id, a = id % KEYS, x) and a table d of KEYS + 500
# rows (a, g), analyzed, and exports PGDATABASE; `$settings` offloads every
# plan to the service's GPU (PGSTROM_EXPECT_GPU=1) or its CPU engine.
# shellcheck shell=bash
service_db() { # db rows keys
  psql -XAtq -d postgres -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" 2>/dev/null || return 1
  export PGDATABASE=$1
  psql -XAtq <<SQL
CREATE EXTENSION pg_strom;
CREATE TABLE t AS SELECT i AS id, (i % $3)::int4 AS a, (i * 7 % 101)::float8 AS x
  FROM generate_series(1, $2) i;
CREATE TABLE d AS SELECT i AS a, i % 3 AS g FROM generate_series(0, $3 + 499) i;
VACUUM ANALYZE t, d;
SQL
}
if [ "${PGSTROM_EXPECT_GPU:-0}" = 1 ]; then engine="SET pg_strom.engine = gpu;"
else engine="SET pg_strom.engine = cpu; SET pg_strom.cpu_engine_in_service = on;"; fi
# (read by the scripts that source this file)
# shellcheck disable=SC2034
settings="SET pg_strom.gpu_setup_cost = 0; SET pg_strom.heap_gather_cost = 0;
SET max_parallel_workers_per_gather = 0; $engine"
