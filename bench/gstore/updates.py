#!/usr/bin/env python3
"""bench/gstore/updates.py - the write-ups' Gstore_Fdw workload: a table of
moving devices, hash partitioned, updated by key from many pgbench clients
while an analytic query reads it every second; the same on a heap table
with a primary key beside it, and on such a heap table with a GPU cache of
each partition (docs/gstore_fdw.md, "The GPU cache of heap tables").

    updates.py --rows N --out DIR [--clients 48] [--jobs J] [--seconds 30]
               [--partitions 2] [--data DIR]

Connects with the PG* environment (`scripts/bench.sh gstore ROWS OUT`
starts the benchmark cluster and runs this in its database `gstore`).
Steps, each timed:
  1. load: `INSERT ... SELECT` of N rows into the gstore_fdw table
     `fpoints` (partitions with `primary_key 'dev_id'`, files in DATA),
     into the heap table `hpoints` (partitioned alike, a primary key), and
     into the heap table `cpoints` (the same), whose partitions then get a
     GPU cache each (`pgstrom.gpu_cache_enable`, partition p on GPU p; its
     load time includes building them);
  2. pgbench, `--clients` clients for `--seconds` seconds, each updating
     its own devices by key with the write-ups' statement, on each table,
     with synchronous_commit on (a gstore_fdw commit always flushes its
     redo log);
     meanwhile a thread runs an aggregation over the table every second
     and checks that it sees every device (the committed state: an UPDATE
     never changes the count);
  3. prints a table (and OUT/gstore.csv): load seconds, transactions per
     second, latency, the analytic query's times and whether every answer
     was whole.

Python standard library; pgbench and psql from PATH.
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROG = "updates.py"


def psql(sql, db=None):
    args = ["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql]
    if db:
        args += ["-d", db]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{PROG}: {sql[:60]}...: {r.stderr.strip()}")
    return r.stdout.strip()


def timed(sql):
    t = time.monotonic()
    psql(sql)
    return time.monotonic() - t


def create(parts, data):
    psql("DROP TABLE IF EXISTS fpoints, hpoints, cpoints")
    # files of this run only (a table finds the rows of files that exist);
    # an earlier run's are removed where this user may
    run = time.strftime("%Y%m%d%H%M%S")
    for f in os.listdir(data) if os.access(data, os.W_OK) else []:
        if re.fullmatch(r"gstore_bench_[0-9]+_p[0-9]+\.(base|redo)", f):
            os.remove(os.path.join(data, f))
    psql("CREATE TABLE fpoints (dev_id int, ts timestamp, x float, y float) PARTITION BY HASH (dev_id)")
    psql("CREATE TABLE hpoints (dev_id int PRIMARY KEY, ts timestamp, x float, y float) PARTITION BY HASH (dev_id)")
    psql("CREATE TABLE cpoints (dev_id int PRIMARY KEY, ts timestamp, x float, y float) PARTITION BY HASH (dev_id)")
    for p in range(parts):
        base, log = (os.path.join(data, f"gstore_bench_{run}_p{p}.{ext}") for ext in ("base", "redo"))
        psql(f"CREATE FOREIGN TABLE fpoints_p{p} PARTITION OF fpoints FOR VALUES WITH (modulus {parts}, remainder {p}) "
             f"SERVER gstore_fdw OPTIONS (base_file '{base}', redo_log_file '{log}', gpu_device_id '{p}', "
             f"max_num_rows '1000000000', primary_key 'dev_id')")
        psql(f"CREATE TABLE hpoints_p{p} PARTITION OF hpoints FOR VALUES WITH (modulus {parts}, remainder {p})")
        psql(f"CREATE TABLE cpoints_p{p} PARTITION OF cpoints FOR VALUES WITH (modulus {parts}, remainder {p})")


def pgbench(table, rows, clients, jobs, seconds):
    """tps and mean latency (ms) of the write-ups' UPDATE by key."""
    per = rows // clients
    script = (f"UPDATE {table} SET ts = now(), x = random() * 100.0, y = random() * 100.0\n"
              f" WHERE dev_id = (select (random() * {per - 1})::int * {clients} + :client_id);\n")
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write(script)
    try:
        # commits wait for their flush, as the store's always do (the
        # benchmark cluster turns synchronous_commit off)
        env = dict(os.environ, PGOPTIONS="-c synchronous_commit=on")
        r = subprocess.run(["pgbench", "-n", "-c", str(clients), "-j", str(jobs), "-T", str(seconds), "-f", f.name],
                           capture_output=True, text=True, env=env)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        raise SystemExit(f"{PROG}: pgbench on {table} failed: {r.stderr.strip()[-500:]}")
    tps = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", r.stdout)
    lat = re.search(r"latency average = ([0-9.]+) ms", r.stdout)
    failed = re.search(r"number of failed transactions: ([0-9]+)", r.stdout)
    return (float(tps.group(1)) if tps else 0.0, float(lat.group(1)) if lat else 0.0,
            int(failed.group(1)) if failed else 0)


class Reader(threading.Thread):
    """The analytic query every second while the writers run: its times,
    and whether each answer counted every device."""

    def __init__(self, table, rows):
        super().__init__(daemon=True)
        self.table, self.rows = table, rows
        self.times, self.whole, self.stop = [], True, threading.Event()

    def run(self):
        sql = f"SELECT count(*), count(*) FILTER (WHERE x BETWEEN 10 AND 20), avg(x) FROM {self.table}"
        while not self.stop.is_set():
            t = time.monotonic()
            out = psql(sql).splitlines()[-1]
            self.times.append((time.monotonic() - t) * 1000)
            self.whole = self.whole and out.split("|")[0] == str(self.rows)
            self.stop.wait(max(0.0, 1.0 - (time.monotonic() - t)))


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--clients", type=int, default=48)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--data", help="the folder of the store's files (default: the server's data directory, "
                    "which its OS user owns)")
    a = ap.parse_args()
    a.data = a.data or psql("SHOW data_directory")
    os.makedirs(a.out, exist_ok=True)
    create(a.partitions, a.data)
    rows_sql = (f"SELECT i, '2026-01-01'::timestamp, (i::bigint * 7919 % 10000) / 100.0, (i::bigint * 104729 % 10000) / 100.0 "
                f"FROM generate_series(0, {a.rows - 1}) i")
    load = {"gstore": timed(f"INSERT INTO fpoints {rows_sql}"), "heap": timed(f"INSERT INTO hpoints {rows_sql}"),
            "cache": timed(f"INSERT INTO cpoints {rows_sql}")}
    load["cache"] += sum(timed(f"SELECT pgstrom.gpu_cache_enable('cpoints_p{p}', {p})") for p in range(a.partitions))
    psql("VACUUM ANALYZE hpoints")
    psql("VACUUM ANALYZE cpoints")
    psql("ANALYZE fpoints")
    results = []
    for kind, table in (("gstore", "fpoints"), ("heap", "hpoints"), ("cache", "cpoints")):
        # the analytic query as a user runs it: pg_strom's plan where the
        # planner picks one
        reader = Reader(table, a.rows)
        reader.start()
        tps, lat, failed = pgbench(table, a.rows, a.clients, a.jobs, a.seconds)
        reader.stop.set()
        reader.join()
        results.append({
            "table": kind, "rows": a.rows, "partitions": a.partitions, "load_s": round(load[kind], 2),
            "clients": a.clients, "seconds": a.seconds, "tps": round(tps), "latency_ms": lat, "failed": failed,
            "query_runs": len(reader.times),
            "query_median_ms": round(statistics.median(reader.times), 1) if reader.times else None,
            "query_max_ms": round(max(reader.times), 1) if reader.times else None,
            "query_whole": reader.whole,
        })
    with open(os.path.join(a.out, "gstore.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    print(f"gstore updates: {a.rows} rows in {a.partitions} partitions, {a.clients} clients, {a.seconds} s")
    print(f"{'table':<8} {'load s':>8} {'tps':>9} {'lat ms':>8} {'failed':>6} {'query runs':>10} "
          f"{'median ms':>9} {'max ms':>8} {'whole':>5}")
    for r in results:
        print(f"{r['table']:<8} {r['load_s']:>8} {r['tps']:>9} {r['latency_ms']:>8} {r['failed']:>6} "
              f"{r['query_runs']:>10} {r['query_median_ms']!s:>9} {r['query_max_ms']!s:>8} {r['query_whole']!s:>5}")
    g, h, c = results
    print(f"gstore/heap: load {g['load_s'] / max(h['load_s'], 1e-9):.2f}x the time, "
          f"updates {g['tps'] / max(h['tps'], 1):.2f}x the rate")
    print(f"cache/heap: load (with building the caches) {c['load_s'] / max(h['load_s'], 1e-9):.2f}x the time, "
          f"updates {c['tps'] / max(h['tps'], 1):.2f}x the rate")
    psql("SELECT pgstrom.gpu_cache_disable('cpoints')")
    return 0 if all(r["query_whole"] and r["failed"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
