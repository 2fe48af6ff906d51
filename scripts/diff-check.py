#!/usr/bin/env python3
"""scripts/diff-check.py - the differential harness.

Every query under test/diff/queries runs with pg_strom.enabled on and off;
the results must be equal (scripts/pgcompare.py: multisets, exact text,
float columns within a relative tolerance), and the plan with pg_strom on
must use the custom nodes the file says it tests, so a test cannot pass by
silently not offloading.

    scripts/diff-check.py [--db NAME] [--only SUBSTRING[,SUBSTRING...]] [--sf SF] [--no-setup | --setup-only]
                          [--shapes]

A query file is one SQL query after header comments:
    -- expect: GpuScan          custom nodes the plan must contain ("none":
                                the plan must contain no pg_strom node;
                                "GpuPreAgg|GpuJoin": either of them, for
                                plans whose costs tie within a few rows
                                or that the engine decides;
                                "GPU Projection": that EXPLAIN field)
    -- set: name = value        a setting for both runs (repeatable)
    -- error: TEXT              both runs must fail with this message part
    -- query-file: PATH         the query is this file's (relative to the
                                repository root), e.g. an SSB query
    -- since: 17                PostgreSQL's major version the query needs
                                (SQL or behaviour an older one lacks); on
                                an older server it is listed as skipped
Set-up (unless --no-setup): create the database (default pgstrom_diff) and
the extension, generate the SSB tables at scale --sf (default 0.01) with
bench/ssb/ssb.py, write the Arrow test files (test/arrow/gen.py into
/tmp/pgstrom_arrow_test) unless they are there, then run
test/diff/schema/*.sql in name order.
--shapes: instead of the plain run, run every (non-error) query under each
planner shape of SHAPES, the shape's settings added to both runs: the
genetic optimizer forced (geqo_threshold = 2), hash, merge and nested-loop
joins each disabled in turn, serial plans, and parallel plans encouraged.
The plan is not checked (a shape may rightly keep a node off); the results
must be equal, and the summary says how many plans used a pg_strom node.
Connects with the PG* environment.  Exit status 1 when anything differs.
"""

import argparse
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import pgcompare as pc  # noqa: E402

CUSTOM_NODES = ("GpuScan", "GpuJoin", "GpuPreAgg")
# planner shapes of --shapes: (name, settings)
SHAPES = [
    ("geqo", [("geqo", "on"), ("geqo_threshold", "2")]),
    ("no-hashjoin", [("enable_hashjoin", "off")]),
    ("no-mergejoin", [("enable_mergejoin", "off")]),
    ("no-nestloop", [("enable_nestloop", "off")]),
    ("serial", [("max_parallel_workers_per_gather", "0")]),
    ("parallel", [("max_parallel_workers_per_gather", "2"), ("parallel_setup_cost", "0"),
                  ("parallel_tuple_cost", "0"), ("min_parallel_table_scan_size", "0")]),
    # a parallel GpuPreAgg's partial groups exchanged between the processes
    # wherever there is one (gpupreagg::exchange)
    ("exchange", [("max_parallel_workers_per_gather", "2"), ("parallel_setup_cost", "0"),
                  ("parallel_tuple_cost", "0"), ("min_parallel_table_scan_size", "0"),
                  ("pg_strom.debug_prefer_parallel_finalize", "on")]),
]
# EXPLAIN fields an `expect:` line may name besides the nodes
PLAN_FIELDS = ("GPU Projection", "Rows Exchanged")
ARROW_DIR = "/tmp/pgstrom_arrow_test"


def parse_file(path):
    expect, settings, error, body = None, [], None, []
    for line in open(path).read().splitlines():
        s = line.strip()
        if s.startswith("-- expect:"):
            expect = [x.strip() for x in s.split(":", 1)[1].split(",") if x.strip()]
        elif s.startswith("-- set:"):
            n, v = s.split(":", 1)[1].split("=", 1)
            settings.append((n.strip(), v.strip()))
        elif s.startswith("-- error:"):
            error = s.split(":", 1)[1].strip()
        elif s.startswith("-- query-file:"):
            with open(os.path.join(ROOT, s.split(":", 1)[1].strip())) as f:
                body = [line for line in f.read().splitlines() if not line.lstrip().startswith("--")]
        elif s.startswith("--") and not body:
            continue
        else:
            body.append(line)
    sql = "\n".join(body).strip()
    if expect is None:
        raise SystemExit(f"diff-check: {path} has no '-- expect:' line")
    if not sql:
        raise SystemExit(f"diff-check: {path} has no query")
    return expect, settings, error, sql


def since(path):
    """The major version of PostgreSQL the query file needs (its `-- since:`), or 0."""
    for line in open(path).read().splitlines():
        if line.strip().startswith("-- since:"):
            return int(line.split(":", 1)[1])
    return 0


def check_plan(sql, settings, expect):
    """None when the plan with pg_strom on uses the expected nodes."""
    plan = pc.plan_nodes(sql, settings + [("pg_strom.enabled", "on")])
    used = {n for n in CUSTOM_NODES for line in plan if f"Custom Scan ({n})" in line}
    used |= {f for f in PLAN_FIELDS for line in plan if line.lstrip().startswith(f + ":")}
    if expect == ["none"]:
        return None if not used else f"expected no pg_strom node, plan uses {', '.join(sorted(used))}"
    missing = [n for n in expect if not any(alt in used for alt in n.split("|"))]
    if missing:
        return f"plan does not use {', '.join(missing)}:\n    " + "\n    ".join(plan)
    return None


def run(sql, settings, enabled):
    out, _ = pc.psql(sql.rstrip().rstrip(";") + ";\n", settings=settings + [("pg_strom.enabled", enabled)])
    return pc.parse_csv(out)[1]


def check_query(expect, settings, error, sql):
    if error is not None:
        msgs = []
        for enabled in ("on", "off"):
            try:
                run(sql, settings, enabled)
                msgs.append(None)
            except pc.PsqlError as e:
                msgs.append(str(e))
        bad = [f"pg_strom {en}: {m or 'no error'}" for en, m in zip(("on", "off"), msgs, strict=True) if not m or error not in m]
        if bad:
            return f"expected an error containing {error!r}; " + "; ".join(bad)
        return check_plan(sql, settings, expect)
    why = check_plan(sql, settings, expect)
    if why:
        return why
    types = pc.column_types(sql, settings)
    floats = {i for i, t in enumerate(types) if t in pc.FLOAT_TYPES}
    on = run(sql, settings, "on")
    off = run(sql, settings, "off")
    diff = pc.compare_rows(off, on, floats)
    return None if diff is None else f"results differ: {diff}"


def run_shapes(files):
    """The --shapes passes: (queries compared, [(shape, name, why)])."""
    failed, compared = [], 0
    for shape, extra in SHAPES:
        t0, n, nodes = time.time(), 0, 0
        for f in files:
            name = os.path.basename(f)[:-4]
            expect, settings, error, sql = parse_file(f)
            if error is not None or expect == ["none"]:
                continue
            settings = settings + extra
            n += 1
            try:
                plan = pc.plan_nodes(sql, settings + [("pg_strom.enabled", "on")])
                nodes += any(f"Custom Scan ({c})" in line for c in CUSTOM_NODES for line in plan)
                types = pc.column_types(sql, settings)
                floats = {i for i, t in enumerate(types) if t in pc.FLOAT_TYPES}
                diff = pc.compare_rows(run(sql, settings, "off"), run(sql, settings, "on"), floats)
                why = None if diff is None else f"results differ: {diff}"
            except pc.PsqlError as e:
                why = f"error: {e}"
            if why:
                print(f"FAIL {shape:<13} {name}\n     " + why.replace("\n", "\n     "), flush=True)
                failed.append((shape, name, why))
        compared += n
        print(f"shape {shape:<13} {n} queries, {nodes} through a pg_strom node, "
              f"{n - sum(1 for s, _, _ in failed if s == shape)} equal, {time.time() - t0:.1f} s", flush=True)
    return compared, failed


def setup(a):
    os.environ["PGDATABASE"] = "postgres"
    exists = pc.scalar(f"SELECT 1 FROM pg_database WHERE datname = '{a.db}'")
    if not exists:
        pc.psql(f'CREATE DATABASE "{a.db}";\n', csv_out=False)
    os.environ["PGDATABASE"] = a.db
    pc.psql("CREATE EXTENSION IF NOT EXISTS pg_strom;\n", csv_out=False)
    gen = [sys.executable, os.path.join(ROOT, "bench", "ssb", "ssb.py"), "gen", "--sf", str(a.sf)]
    if subprocess.run(gen).returncode != 0:
        raise SystemExit("diff-check: SSB generation failed")
    # the Arrow files of 30-arrow.sql (test-sql.sh writes them first)
    if not os.path.exists(os.path.join(ARROW_DIR, "types.arrow")):
        if subprocess.run([sys.executable, os.path.join(ROOT, "test", "arrow", "gen.py"), ARROW_DIR]).returncode:
            raise SystemExit("diff-check: test/arrow/gen.py failed (is pyarrow installed?)")
    for f in sorted(glob.glob(os.path.join(a.dir, "schema", "*.sql"))):
        pc.psql(open(f).read(), csv_out=False)
    # the loaded blocks written out: the heap direct path reads only
    # blocks that shared buffers hold no dirty copy of
    pc.psql("CHECKPOINT;\n", csv_out=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default="pgstrom_diff")
    ap.add_argument("--dir", default=os.path.join(ROOT, "test", "diff"))
    ap.add_argument("--only", default="", help="run the query files whose name contains this (or any of a comma-separated list)")
    ap.add_argument("--sf", default="0.01", help="SSB scale factor of the test schema (default 0.01)")
    ap.add_argument("--no-setup", action="store_true", help="use the database as it is")
    ap.add_argument("--setup-only", action="store_true", help="create the schemas, run no query")
    ap.add_argument("--shapes", action="store_true", help="run the queries under every planner shape instead")
    a = ap.parse_args()
    t0 = time.time()
    if a.no_setup:
        os.environ["PGDATABASE"] = a.db
    else:
        setup(a)
    if a.setup_only:
        return 0
    only = a.only.split(",")
    files = sorted(f for f in glob.glob(os.path.join(a.dir, "queries", "*.sql"))
                   if any(o in os.path.basename(f) for o in only))
    major = int(pc.scalar("SELECT current_setting('server_version_num')::int / 10000"))
    for f in [f for f in files if since(f) > major]:
        print(f"skip {os.path.basename(f)[:-4]:<28} needs PostgreSQL {since(f)} (this is {major})")
        files.remove(f)
    engine = pc.scalar("SELECT pgstrom.active_engine()")
    if a.shapes:
        compared, failed = run_shapes(files)
        print(f"diff-check: {compared} runs over {len(SHAPES)} planner shapes, {compared - len(failed)} equal "
              f"with pg_strom on and off, engine {engine}, {time.time() - t0:.1f} s")
        return 1 if failed else 0
    failed, offloaded = [], 0
    for f in files:
        name = os.path.basename(f)[:-4]
        expect, settings, error, sql = parse_file(f)
        try:
            why = check_query(expect, settings, error, sql)
        except pc.PsqlError as e:
            why = f"error: {e}"
        if expect != ["none"]:
            offloaded += 1
        print(f"{'ok  ' if why is None else 'FAIL'} {name:<28} {'+'.join(expect)}", flush=True)
        if why:
            print("     " + why.replace("\n", "\n     "))
            failed.append(name)
    print(f"diff-check: {len(files)} queries ({offloaded} offloaded, {len(files) - offloaded} kept on the CPU on purpose), "
          f"{len(files) - len(failed)} equal with pg_strom on and off, engine {engine}, {time.time() - t0:.1f} s")
    if failed:
        print(f"diff-check: FAILED: {' '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
