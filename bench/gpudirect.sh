#!/usr/bin/env bash
# bench/gpudirect.sh [FILE] [SIZE_MB] - the GPUDirect SQL microbenchmark
# (docs/benchmark.md, "GPUDirect SQL"): one file of SIZE_MB MB (default
# 8192, created when missing) read into GPU memory by each storage path
# (cuFile, pinned pread + async copy with 1-8 threads, O_DIRECT into
# pinned buffers, pageable read + copy; cold and warm page cache) by
# pgstrom-iobench, beside the disk's own O_DIRECT throughput from dd in
# the same run.  On the GPU machine: the binary comes from .carry (make
# gpu-bundle) or target/release.  FILE defaults to /var/tmp (a real disk:
# cuFile refuses tmpfs and overlay).
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-/var/tmp/pgstrom-iobench.dat}
size=${2:-8192}
if [ -f .carry/build.tar.xz ] && [ ! -x .carry/bin/pgstrom-iobench ]; then
  tar -C .carry -xJf .carry/build.tar.xz bin/pgstrom-iobench
fi
bin=${PGSTROM_IOBENCH:-}
for b in .carry/bin/pgstrom-iobench target/release/pgstrom-iobench; do
  [ -z "$bin" ] && [ -x "$b" ] && bin=$b
done
[ -n "$bin" ] || { echo "gpudirect: no pgstrom-iobench (make gpu-bundle, or cargo build --release)"; exit 1; }
if [ ! -f "$file" ]; then
  "$bin" "$file" "$size" --repeat 0 >/dev/null
fi
echo "== disk: dd O_DIRECT, 16 MB blocks, $(df -hT "$file" | awk 'NR==2 {print $1, $2}')"
dd if="$file" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1
dd_gbs=$(dd if="$file" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1 | awk '{print $(NF-1), $NF}')
echo "== pgstrom-iobench"
"$bin" "$file" "$size" --repeat "${PGSTROM_IOBENCH_REPEAT:-2}"
echo "disk O_DIRECT (dd, second run): $dd_gbs"
