#!/usr/bin/env python3
"""bench/brin/brin.py - a month's aggregation out of five years of a
time-ordered log table with a BRIN index (docs/gpuscan.md, "BRIN
indexes"), with pg_strom's BRIN range skipping, without it
(pg_strom.enable_brin = off), and PostgreSQL's own best plan (its Bitmap
Heap Scan on the index, or the parallel Seq Scan with bitmap scans off).

    brin.py --rows N --out DIR [--runs R]

Connects with the PG* environment (`scripts/bench.sh brin ROWS OUT` starts
the benchmark cluster and runs this in its database `brin`).  Loads
`logs (ts timestamp, host int, status int, bytes bigint, path text)` with N
rows in time order over 2015-2019 (unless it holds N rows already), a BRIN
index on ts (pages_per_range 128), VACUUM (FREEZE, ANALYZE); then runs

  Q1  SELECT count(*), sum(bytes), max(bytes) FROM logs WHERE ts in one month
  Q2  SELECT status, count(*), sum(bytes) ... WHERE ts in one month GROUP BY status

in each mode R times after a warm-up (the median counts), checks that every
mode's answers equal PostgreSQL's, reads the BRIN ranges of pg_strom's
plan from EXPLAIN ANALYZE, and prints a table with each mode's time and its
ratio to PostgreSQL's best, worst ratio last (OUT/brin.csv too).

Python standard library; psql from PATH.
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time

PROG = "brin.py"
MONTH = "ts >= '2017-03-01' AND ts < '2017-04-01'"
QUERIES = [
    ("Q1", f"SELECT count(*), sum(bytes), max(bytes) FROM logs WHERE {MONTH}"),
    ("Q2", f"SELECT status, count(*), sum(bytes) FROM logs WHERE {MONTH} GROUP BY status ORDER BY status"),
]
# (label, settings)
MODES = [
    ("PostgreSQL (bitmap heap scan)", "SET pg_strom.enabled = off;"),
    ("PostgreSQL (parallel seq scan)", "SET pg_strom.enabled = off; SET enable_bitmapscan = off;"),
    ("pg_strom, BRIN", ""),
    ("pg_strom, no BRIN", "SET pg_strom.enable_brin = off;"),
]
RESET = "RESET pg_strom.enabled; RESET enable_bitmapscan; RESET pg_strom.enable_brin;"


def psql(script):
    r = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", "|"], input=script, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise SystemExit(f"{PROG}: psql failed: {r.stderr.strip()[-2000:]}")
    return r.stdout


def timed(settings, sql, runs):
    """Median ms of `runs` runs after a warm-up, and the rows."""
    script = [settings, "\\timing on"]
    for _ in range(runs + 1):
        script.append(sql + ";")
    script.append("\\timing off")
    script.append(RESET)
    out = psql("\n".join(script) + "\n")
    times = [float(m.group(1)) for m in re.finditer(r"^Time: ([0-9.]+) ms", out, re.M)]
    rows = [ln for ln in out.splitlines() if ln and not ln.startswith("Time:")]
    per = len(rows) // (runs + 1) if rows else 0
    return statistics.median(times[1:]), rows[:per]


def main():
    ap = argparse.ArgumentParser(prog=PROG)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    n = a.rows
    have = psql("SELECT count(*) FROM pg_class WHERE relname = 'logs';").strip()
    if have == "1":
        have = psql("SELECT count(*) FROM logs;").strip()
    if have != str(n):
        # five years in time order: N rows spread evenly over 2015-2019
        step = 5 * 365.25 * 86400 / n
        t0 = time.monotonic()
        # one transaction with the CREATE TABLE: a cluster at wal_level
        # minimal writes no WAL for the rows
        psql(
            "BEGIN;\n"
            "DROP TABLE IF EXISTS logs;\n"
            "CREATE TABLE logs (ts timestamp, host int, status int, bytes bigint, path text);\n"
            f"INSERT INTO logs SELECT timestamp '2015-01-01' + i * interval '{step:.6f} seconds', i % 1000, "
            "(ARRAY[200, 200, 200, 304, 404, 500])[1 + i % 6], (i::bigint * 7919) % 100000, '/p/' || (i % 5000) "
            f"FROM generate_series(0, {n - 1}) i;\n"
            "CREATE INDEX logs_ts ON logs USING brin (ts) WITH (pages_per_range = 128);\n"
            "COMMIT;\n"
        )
        t1 = time.monotonic()
        print(f"{PROG}: loaded {n} rows and the BRIN index in {t1 - t0:.1f} s", flush=True)
        psql("VACUUM (FREEZE, ANALYZE) logs;\n")
        print(f"{PROG}: VACUUM (FREEZE, ANALYZE) in {time.monotonic() - t1:.1f} s", flush=True)
    size = psql("SELECT pg_size_pretty(pg_relation_size('logs'));").strip()
    results = []
    failed = False
    for q, sql in QUERIES:
        base = None
        times = {}
        for label, settings in MODES:
            ms, rows = timed(settings, sql, a.runs)
            if base is None:
                base = rows
            elif rows != base:
                print(f"{PROG}: {q} in mode '{label}' differs from PostgreSQL's: {rows[:3]} vs {base[:3]}")
                failed = True
            times[label] = ms
        plan = psql(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {sql};")
        m = re.search(r"BRIN ranges: ([0-9]+) read, ([0-9]+) skipped", plan)
        ranges = f"{m.group(1)} read, {m.group(2)} skipped" if m else "(no BRIN filter in the plan)"
        nodes = sorted(set(re.findall(r"Custom Scan \((\w+)\)", plan)))
        best_pg = min(times[MODES[0][0]], times[MODES[1][0]])
        results.append((q, times, best_pg, ranges, ",".join(nodes) or "none"))
        print(f"{PROG}: {q}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in times.items()) + f"; {ranges}", flush=True)
    with open(os.path.join(a.out, "brin.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["query", "mode", "ms", "x_best_pg", "brin_ranges", "nodes"])
        for q, times, best, ranges, nodes in results:
            for label, ms in times.items():
                w.writerow([q, label, f"{ms:.1f}", f"{best / ms:.2f}", ranges, nodes])
    print(f"logs: {n} rows, {size}; one month of five years; median of {a.runs} runs after a warm-up")
    heads = " | ".join(label + " ms" for label, _ in MODES)
    print(f"| query | {heads} | BRIN x best PostgreSQL | BRIN x no BRIN | ranges | nodes |")
    print("|---|" + "---:|" * (len(MODES) + 2) + "---|---|")
    worst = None
    for q, times, best, ranges, nodes in results:
        brin = times[MODES[2][0]]
        ratio = best / brin
        worst = ratio if worst is None else min(worst, ratio)
        cells = " | ".join(f"{times[label]:.1f}" for label, _ in MODES)
        print(f"| {q} | {cells} | {ratio:.2f} | {times[MODES[3][0]] / brin:.2f} | {ranges} | {nodes} |")
    print(f"worst ratio of pg_strom with BRIN to PostgreSQL's best plan: {worst:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
