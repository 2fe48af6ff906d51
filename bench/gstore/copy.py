#!/usr/bin/env python3
"""bench/gstore/copy.py - aggregations over a gstore_fdw table read from the
engine's copy (docs/gstore_fdw.md, "The engine's copy"), against the same
table read by PostgreSQL, the same table with its rows moved to the engine
per query (pg_strom.gstore_device_copy = off), and a heap table holding
the same rows.

    copy.py --rows N --out DIR [--data DIR]

Connects with the PG* environment (`scripts/bench.sh gstore-copy ROWS OUT`
starts the benchmark cluster and runs this in its database `gstore`).
Loads `fp (dev_id int, ts timestamp, x float8, y float8)` with N rows into
a gstore_fdw table (primary key dev_id, files in DATA; checkpointed) and a
heap table `hp` with a primary key, then in one session (a session replays
the store once, at its first statement, timed apart) runs

  Q1  SELECT count(*), count(*) FILTER (WHERE x BETWEEN 10 AND 20), avg(x), max(ts)
  Q2  SELECT dev_id % 16, count(*), avg(y) WHERE x BETWEEN 10 AND 50 GROUP BY 1

in each mode, three times (the median counts), checks that every mode's
answers equal PostgreSQL's (avg within a relative 1e-9), then times 20,000
UPDATEs by key and 1,000 INSERTs and Q1 again (the copy brought up to
date).  Prints a table (and OUT/gstore-copy.csv).

Python standard library; psql from PATH.
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

PROG = "copy.py"
Q1 = "SELECT count(*), count(*) FILTER (WHERE x BETWEEN 10 AND 20), avg(x), max(ts) FROM {t}"
Q2 = "SELECT dev_id % 16 AS g, count(*), avg(y) FROM {t} WHERE x BETWEEN 10 AND 50 GROUP BY 1 ORDER BY 1"
# (label, table, settings)
MODES = [
    ("PostgreSQL", "fp", "SET pg_strom.enabled = off;"),
    ("rows moved", "fp", "SET pg_strom.gstore_device_copy = off; SET pg_strom.heap_gather_cost = 0;"),
    ("copy in the engine", "fp", ""),
    ("heap, PostgreSQL", "hp", "SET pg_strom.enabled = off;"),
    ("heap, pg_strom", "hp", ""),
]
RESET = "RESET pg_strom.enabled; RESET pg_strom.gstore_device_copy; RESET pg_strom.heap_gather_cost;"


def psql(script):
    r = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", "|"], input=script, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise SystemExit(f"{PROG}: psql failed: {r.stderr.strip()[-2000:]}")
    return r.stdout


def run_marked(steps):
    """Run (label, sql) steps in one session; per label: (ms, rows)."""
    script = ["\\timing on"]
    for label, sql in steps:
        script.append(f"\\echo @@ {label}")
        script.append(sql)
    out = psql("\n".join(script) + "\n")
    result, label, rows = {}, None, []
    for line in out.splitlines():
        if line.startswith("@@ "):
            label, rows = line[3:], []
            continue
        m = re.match(r"^Time: ([0-9.]+) ms", line)
        if m and label is not None:
            result.setdefault(label, (0.0, []))
            ms, acc = result[label]
            result[label] = (ms + float(m.group(1)), rows if rows else acc)
            rows = []
        elif label is not None and line:
            rows.append(line)
    return result


def same(a, b):
    """Rows equal, floats within a relative 1e-9."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b, strict=True):
        fa, fb = ra.split("|"), rb.split("|")
        if len(fa) != len(fb):
            return False
        for x, y in zip(fa, fb, strict=True):
            if x == y:
                continue
            try:
                if abs(float(x) - float(y)) > 1e-9 * max(abs(float(x)), abs(float(y))):
                    return False
            except ValueError:
                return False
    return True


def main():
    ap = argparse.ArgumentParser(prog=PROG)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--data", default="/tmp/pgstrom_gstore_copy")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.data, exist_ok=True)
    os.chmod(a.data, 0o1777)
    n = a.rows
    gen = (
        f"SELECT i, '2026-01-01'::timestamp + i * interval '1 second', (i % 1000) / 10.0, (i % 777) / 7.0 "
        f"FROM generate_series(1, {n}) i"
    )
    # a dropped gstore_fdw table leaves its files: a new one starts empty
    run_marked([("drop", "DROP FOREIGN TABLE IF EXISTS fp; DROP TABLE IF EXISTS hp;")])
    for f in ("fp.base", "fp.redo"):
        if os.path.exists(os.path.join(a.data, f)):
            os.remove(os.path.join(a.data, f))
    load = run_marked(
        [
            (
                "create",
                f"CREATE FOREIGN TABLE fp (dev_id int, ts timestamp, x float8, y float8) SERVER gstore_fdw "
                f"OPTIONS (base_file '{a.data}/fp.base', redo_log_file '{a.data}/fp.redo', primary_key 'dev_id');"
                f"CREATE TABLE hp (dev_id int PRIMARY KEY, ts timestamp, x float8, y float8);",
            ),
            ("load gstore_fdw", f"INSERT INTO fp {gen};"),
            ("load heap", f"INSERT INTO hp {gen};"),
            ("vacuum", "VACUUM ANALYZE hp; ANALYZE fp; SELECT pgstrom.gstore_fdw_checkpoint('fp');"),
        ]
    )
    steps = [("replay", "SELECT count(*) FROM fp WHERE dev_id < 0;")]
    for label, t, settings in MODES:
        for q, text in (("Q1", Q1), ("Q2", Q2)):
            for k in range(3):
                steps.append((f"{label}|{q}|{k}", f"{settings} {text.format(t=t)}; {RESET}"))
    steps.append(("plan", f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {Q1.format(t='fp')};"))
    upd = (
        f"DO $$ BEGIN FOR i IN 1..20000 LOOP UPDATE fp SET x = x + 1 WHERE dev_id = (i * 7919) % {n} + 1; "
        f"END LOOP; END $$; INSERT INTO fp SELECT i, now(), 1, 1 FROM generate_series({n + 1}, {n + 1000}) i;"
    )
    steps.append(("updates", upd))
    steps.append(("after updates|Q1|0", Q1.format(t="fp") + ";"))
    steps.append(("after updates|Q1|1", Q1.format(t="fp") + ";"))
    steps.append(("after updates, PostgreSQL|Q1|0", f"SET pg_strom.enabled = off; {Q1.format(t='fp')}; {RESET}"))
    r = run_marked(steps)
    print("\n".join(r.get("plan", (0, []))[1]))
    ok = True
    table = []
    for label, _, _ in MODES + [("after updates", "", ""), ("after updates, PostgreSQL", "", "")]:
        row = [label]
        for q in ("Q1", "Q2"):
            times = [r[k][0] for k in (f"{label}|{q}|{i}" for i in range(3)) if k in r]
            if not times:
                row.append("")
                continue
            row.append(f"{statistics.median(times):.1f}")
            ref = "after updates, PostgreSQL" if label.startswith("after updates") else "PostgreSQL"
            want = r.get(f"{ref}|{q}|0", (0, None))[1]
            got = r[f"{label}|{q}|0"][1]
            if want is not None and not same(got, want):
                ok = False
                print(f"{PROG}: {label} {q} differs from {ref}: {got[:3]} against {want[:3]}", file=sys.stderr)
        table.append(row)
    with open(os.path.join(a.out, "gstore-copy.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "q1_ms", "q2_ms"])
        w.writerows(table)
    print(
        f"\n{n} rows: load gstore_fdw {load['load gstore_fdw'][0] / 1000:.1f} s, heap "
        f"{load['load heap'][0] / 1000:.1f} s; a session's replay of the store {r['replay'][0]:.0f} ms; "
        f"20,000 UPDATEs + 1,000 INSERTs {r['updates'][0]:.0f} ms"
    )
    print("| mode | Q1 ms | Q2 ms |\n|---|---:|---:|")
    for row in table:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    print(f"answers equal to PostgreSQL's: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
