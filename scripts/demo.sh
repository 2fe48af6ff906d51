#!/usr/bin/env bash
# scripts/demo.sh - the main job on the development cluster (make demo):
# which GPU and engine pg_strom found, the device code built by NVRTC, then
# the Star Schema Benchmark at a small scale (SSB_SF, default 1): the
# generated tables, the plans pg_strom makes, and the 13 queries (plus
# PG-Strom's write-ups' Q1.2 variant) with pg_strom on and off, their times and speedups,
# results compared (bench/ssb/ssb.py; docs/benchmark.md).
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
# shellcheck source=/dev/null  # (written by scripts/cluster.sh)
. "$RUN/env"
export PYTHONPATH="$BENCH_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
q() { echo; echo "=> $1"; psql -X -P pager=off -c "$1"; }

q "SELECT * FROM pgstrom.device_discovery()"
q "SELECT pgstrom.active_engine()"
q "SELECT * FROM pgstrom.gpu_device_info WHERE property IN ('Device name', 'Total global memory size', 'GPU architecture', 'Number of multiprocessors on device', 'PCI address')"
if [ "$(psql -XAtq -c "SELECT gpus FROM pgstrom.device_discovery()")" -gt 0 ]; then
  echo; echo "=> the GPU's device code: the GPU service builds it with NVRTC when the server starts, once per install"
  echo "   (35-40 s on a 16-core H200 machine; queries meanwhile run on the CPU engine); this waits for it, later runs read the cache"
  q "SELECT * FROM pgstrom.device_code_build()"
elif [ -n "${DEMO_BUILD_ARCH:-}" ]; then
  echo; echo "=> device code for $DEMO_BUILD_ARCH (DEMO_BUILD_ARCH; minutes on a small CPU, NVRTC compiles every device function)"
  q "SELECT * FROM pgstrom.device_code_build('$DEMO_BUILD_ARCH')"
else
  echo; echo "=> no GPU here: queries run on the CPU engine (the same device code, compiled into pg_strom), and"
  echo "   the planner keeps PostgreSQL's plan where the CPU engine would be slower; no GPU code is built"
  echo "   (DEMO_BUILD_ARCH=sm_90 make demo builds an H100's, to see NVRTC work)"
fi
sf=${SSB_SF:-1}
echo; echo "=> the Star Schema Benchmark at scale $sf (lineorder: $(python3 -c "print(int(6000000 * $sf))") rows)"
python3 "$PGSTROM_ROOT/bench/ssb/ssb.py" gen --sf "$sf"
echo; echo "=> Q1.2 of PG-Strom's write-ups (statistics-friendly variant): the plan pg_strom makes, run"
psql -X -P pager=off -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
$(grep -v '^--' "$PGSTROM_ROOT/bench/ssb/queries/q1_2s.sql")"
echo; echo "=> the queries with pg_strom off (pg) and on (strom)"
python3 "$PGSTROM_ROOT/bench/ssb/ssb.py" run --modes pg,strom --runs 1 --out "$PGSTROM_ROOT/results/demo"
echo
echo "demo: done. Connect with: . .run/env && psql"
