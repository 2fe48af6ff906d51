#!/usr/bin/env python3
"""bench/tpch/tpch.py - TPC-H: generator, loader, runner.

    tpch.py gen  --sf SF [--data DIR] [--jobs N] [--force]    (tpchgen-cli's files into PostgreSQL, with indexes)
    tpch.py load --data DIR [--modes ...] [--force]           (Arrow files by pg2arrow, DuckDB's database)
    tpch.py run  --out DIR [--data DIR] [--modes ...] [--runs N] [--queries ...]
    tpch.py all  --sf SF --out DIR [--data DIR] [--drop-files] ... (gen + the load --modes needs + run)

Connects with the PG* environment (`. .run/env`, or the benchmark cluster
of `scripts/bench.sh tpch SF OUT`).  The data comes from tpchgen-cli (the PyPI
package of the same name, a generator of the specification's data; `make
setup` installs it), as '|'-separated files in DATA/sfSF/csv; the schema is
the specification's (schema.sql) with its primary keys and the indexes a
DBA adds (indexes.sql) and its foreign keys (foreign_keys.sql); the 22 queries (queries/) carry the
specification's validation parameters, and four index shapes (ix1-ix4:
lookups of a few rows) check that pg_strom never loses to an index plan.  See docs/benchmark.md for the
modes and the comparison rules.  Python standard library, plus the duckdb
module for the duckdb mode and Pillow for the chart (both optional: a mode
or the chart without its module is reported and skipped).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib as bl  # noqa: E402
from benchlib import pc  # noqa: E402

# the 22 queries, then four index shapes that are not TPC-H's: lookups of a
# few rows whose index plan pg_strom must never lose to (queries/ix*.sql)
QUERIES = [f"q{n:02d}" for n in range(1, 23)] + [f"ix{n}" for n in range(1, 5)]
TABLES = ["region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]
# the tables tpchgen-cli writes one file of, whatever --parts says
SMALL_TABLES = ("region", "nation")
# the tables the arrow mode reads from Arrow files (the others stay heap)
ARROW_TABLES = ["lineitem", "orders"]
ARROW_SCHEMA = "tpch_arrow"
# foreign_keys.sql's keys of the Arrow tables (docs/arrow_fdw.md, "Foreign keys")
ARROW_FOREIGN_KEYS = {
    "lineitem": f"(l_orderkey) REFERENCES {ARROW_SCHEMA}.orders (o_orderkey); "
                "(l_partkey, l_suppkey) REFERENCES public.partsupp",
    "orders": "(o_custkey) REFERENCES public.customer",
}
MODES = {
    "pg": "PostgreSQL (pg_strom.enabled = off, parallel workers = cores)",
    "strom": "pg_strom on heap tables",
    "arrow": "pg_strom with lineitem and orders as Arrow files (pg2arrow)",
    "duckdb": "DuckDB, its own tables (loaded from the same files)",
}
DEFAULT_MODES = "pg,strom,arrow,duckdb"
# DATA/sfSF/LOADED.arrow and LOADED.duckdb: the Arrow files, DuckDB's
# database; each holds the SF of the tables they were made from
ARROW_STAMP = "LOADED.arrow"
DUCK_STAMP = "LOADED.duckdb"


def say(msg):
    print(f"tpch: {msg}", flush=True)


def fmt_sf(sf):
    return f"{float(sf):g}"


def sf_data(data, sf):
    """The folder of scale factor `sf`'s files under --data."""
    return os.path.join(data, f"sf{fmt_sf(sf)}")


def tpchgen():
    """tpchgen-cli: on PATH, or where `make setup` installed it."""
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    for d in os.environ.get("BENCH_PYTHONPATH", "").split(":") + os.environ.get("PYTHONPATH", "").split(":"):
        p = os.path.join(d, "bin", "tpchgen-cli")
        if d and os.access(p, os.X_OK):
            return p
    raise SystemExit("tpch: tpchgen-cli is not installed (make setup installs it; or: pip install tpchgen-cli)")


def loaded_sf():
    """The SF of the tables now in PostgreSQL, or None."""
    if pc.scalar("SELECT to_regclass('tpch_gen.params') IS NOT NULL") != "t":
        return None
    return fmt_sf(pc.scalar("SELECT sf FROM tpch_gen.params"))


def run_at_most(arg_lists, jobs, what):
    """psql sessions, `jobs` at a time."""
    for i in range(0, len(arg_lists), max(jobs, 1)):
        bl.psql_at_once(arg_lists[i:i + max(jobs, 1)], what, "tpch")


# ---------------------------------------------------------------- gen


def csv_files(folder, table):
    """The generator's files of `table`, in part order."""
    d = os.path.join(folder, table)
    if not os.path.isdir(d):
        return []
    parts = [f for f in os.listdir(d) if f.endswith(".csv")]
    return [os.path.join(d, f) for f in sorted(parts, key=lambda f: int(f.split(".")[-2]))]


def cmd_gen(a):
    t0 = time.time()
    want = fmt_sf(a.sf)
    if loaded_sf() == want and not a.force:
        say(f"SF {want} is already loaded; --force regenerates")
        return
    folder = os.path.join(sf_data(a.data, a.sf), "csv")
    jobs = max(1, a.jobs)
    if not (csv_files(folder, "lineitem") and os.path.exists(os.path.join(folder, "DONE"))) or a.force:
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        say(f"generating SF {want} with tpchgen-cli into {folder} ({jobs} parts)")
        r = subprocess.run([tpchgen(), "csv", "-s", want, "--delimiter", "|", "--parts", str(jobs), "-n", str(jobs),
                            "-q", "-o", folder], stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise SystemExit(f"tpch: tpchgen-cli failed: {r.stderr.strip()}")
        open(os.path.join(folder, "DONE"), "w").close()
        say(f"generated in {time.time() - t0:.1f} s")
    pc.psql("DROP SCHEMA IF EXISTS tpch_gen CASCADE;\n" + open(os.path.join(HERE, "schema.sql")).read(), csv_out=False)
    t1 = time.time()
    copies = [["-c", f"\\copy {t} FROM '{f}' WITH (FORMAT csv, HEADER true, DELIMITER '|')"]
              for t in TABLES for f in csv_files(folder, t)]
    if any(not csv_files(folder, t) for t in TABLES):
        raise SystemExit(f"tpch: {folder} lacks the files of some tables (run with --force)")
    run_at_most(copies, jobs, "COPY")
    say(f"loaded {len(copies)} files in {time.time() - t1:.1f} s")
    # all-visible pages and statistics, as a loaded warehouse has them (the
    # CHECKPOINT first: the benchmark cluster runs synchronous_commit = off,
    # and VACUUM marks a page all-visible only once its commits are flushed)
    pc.psql("CHECKPOINT;", csv_out=False)
    run_at_most([["-c", f"VACUUM (FREEZE, ANALYZE) {t}"] for t in TABLES], jobs, "VACUUM")
    t1 = time.time()
    stmts = [line for line in open(os.path.join(HERE, "indexes.sql")).read().splitlines()
             if line.strip() and not line.startswith("--")]
    run_at_most([["-c", s] for s in stmts], jobs, "indexes")
    say(f"primary keys and indexes in {time.time() - t1:.1f} s")
    # the foreign keys, once the keys they reference exist (two of one
    # table take turns on its lock)
    t1 = time.time()
    stmts = [line for line in open(os.path.join(HERE, "foreign_keys.sql")).read().splitlines()
             if line.strip() and not line.startswith("--")]
    run_at_most([["-c", s] for s in stmts], jobs, "foreign keys")
    say(f"foreign keys in {time.time() - t1:.1f} s")
    # a second VACUUM: the loading sessions extended each table by several
    # pages at a time and left some of them new (all zeros), which the
    # first VACUUM records as free but does not mark all-visible (177 of
    # SF 1's 26,152 orders pages); this one truncates or marks them, so
    # that every page is all-visible, as the inner cache and the heap
    # direct path want a loaded warehouse's pages to be
    run_at_most([["-c", f"VACUUM {t}"] for t in TABLES], jobs, "VACUUM")
    pc.psql(f"CHECKPOINT; CREATE SCHEMA tpch_gen; CREATE TABLE tpch_gen.params AS SELECT {want}::float8 AS sf;",
            csv_out=False)
    sizes = pc.scalar("SELECT string_agg(c.relname || ' ' || c.reltuples::bigint || ' rows ' || "
                      "pg_size_pretty(pg_relation_size(c.oid)), ', ' ORDER BY c.relname) FROM pg_class c "
                      f"WHERE c.relname IN ({','.join(repr(t) for t in TABLES)}) "
                      "AND c.relnamespace = 'public'::regnamespace")
    say(f"SF {want} in {time.time() - t0:.1f} s: {sizes}")


# ---------------------------------------------------------------- load


def read_stamp(folder, name):
    path = os.path.join(folder, name)
    return open(path).read().strip() if os.path.exists(path) else None


def write_stamp(folder, name, sf):
    with open(os.path.join(folder, name), "w") as f:
        f.write(sf)


# pg2arrow writes a table in block ranges of at least this many pages
# (128 MB), one file each, all at once: at SF 10 one pg2arrow over
# lineitem takes about two minutes, single-threaded on the client side
PART_PAGES = 16384


def arrow_parts(table, cores):
    """The block ranges [first, end) of `table` that pg2arrow writes as
    separate files: up to `cores` of them, at least PART_PAGES each (one
    range for a small table).  Read by a TID range scan, each range keeps
    the heap's order, so the files together hold the rows in the order a
    single pg2arrow over the table writes them."""
    pages = int(pc.scalar(f"SELECT pg_relation_size('{table}') / current_setting('block_size')::int"))
    n = max(1, min(cores, pages // PART_PAGES))
    step = -(-pages // n) if pages else 1
    return [(i * step, min(pages, (i + 1) * step)) for i in range(n)]


def arrow_files(folder, table):
    """The Arrow files of `table` in `folder`, in row order: TABLE.arrow,
    or TABLE.NN.arrow when it was written in parts."""
    one = os.path.join(folder, f"{table}.arrow")
    parts = sorted(glob.glob(os.path.join(folder, f"{table}.[0-9][0-9].arrow")))
    return parts or ([one] if os.path.exists(one) else [])


def load_arrow(folder, sf, force):
    """lineitem and orders as Arrow files written by pg2arrow from the heap
    (a big table in block ranges, one file each, written concurrently)."""
    if read_stamp(folder, ARROW_STAMP) == sf and not force:
        say(f"load: {folder} already holds the Arrow files of SF {sf}")
        return True
    pg2arrow = shutil.which("pg2arrow")
    if not pg2arrow:
        say("load: pg2arrow is not installed: arrow mode skipped")
        return False
    if os.path.exists(os.path.join(folder, ARROW_STAMP)):
        os.remove(os.path.join(folder, ARROW_STAMP))
    cores = os.cpu_count() or 1
    jobs = []
    for t in ARROW_TABLES:
        for f in arrow_files(folder, t):
            os.remove(f)
        parts = arrow_parts(t, cores)
        for i, (first, end) in enumerate(parts):
            if len(parts) == 1:
                path, query = os.path.join(folder, f"{t}.arrow"), f"SELECT * FROM {t}"
            else:
                path = os.path.join(folder, f"{t}.{i:02d}.arrow")
                query = f"SELECT * FROM {t} WHERE ctid >= '({first},0)'::tid AND ctid < '({end},0)'::tid"
            jobs.append((t, path, [pg2arrow, "-c", query, "-o", path]))
    t0 = time.time()
    running, done = [], {t: 0 for t in ARROW_TABLES}
    while jobs or running:
        while jobs and len(running) < cores:
            t, path, argv = jobs.pop(0)
            err = tempfile.TemporaryFile(mode="w+")
            running.append((t, path, subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err), err))
        t, path, proc, err = running.pop(0)
        if proc.wait() != 0:
            err.seek(0)
            for _, _, p, _ in running:
                p.kill()
            raise SystemExit(f"tpch: pg2arrow failed on {t}: {err.read().strip()}")
        os.chmod(path, 0o644)
        done[t] += 1
    for t in ARROW_TABLES:
        size = sum(os.path.getsize(f) for f in arrow_files(folder, t))
        say(f"load: {t}: {size / 1e6:.1f} MB in {done[t]} file(s) by pg2arrow")
    say(f"load: Arrow files in {time.time() - t0:.1f} s ({cores} pg2arrow at once at most)")
    write_stamp(folder, ARROW_STAMP, sf)
    return True


def duck_schema():
    """schema.sql's CREATE TABLEs for DuckDB (char(n) is its VARCHAR)."""
    text = open(os.path.join(HERE, "schema.sql")).read()
    return "\n".join(line for line in text.splitlines() if not line.startswith(("--", "DROP ")))


def load_duck(folder, sf, force):
    """DuckDB's database from the generator's files (the files PostgreSQL
    loaded), without PostgreSQL's indexes, as DuckDB's own TPC-H loads it."""
    duckdb = bl.import_duckdb()
    if duckdb is None:
        say("load: the duckdb module is not installed: duckdb mode skipped")
        return False
    if read_stamp(folder, DUCK_STAMP) == sf and not force:
        say(f"load: {folder} already holds DuckDB's database of SF {sf}")
        return True
    t0 = time.time()
    dbfile = os.path.join(folder, "tpch.duckdb")
    for f in [dbfile, dbfile + ".wal", os.path.join(folder, DUCK_STAMP)]:
        if os.path.exists(f):
            os.remove(f)
    con = duckdb.connect(dbfile)
    con.execute(duck_schema())
    for t in TABLES:
        # every part of the table in one COPY (DuckDB reads them in parallel)
        glob = os.path.join(folder, "csv", t, "*.csv")
        con.execute(f"COPY {t} FROM '{glob}' (FORMAT csv, HEADER true, DELIMITER '|')")
    con.execute("CHECKPOINT")
    con.close()
    write_stamp(folder, DUCK_STAMP, sf)
    say(f"load: {dbfile} in {time.time() - t0:.1f} s")
    return True


def cmd_load(a, modes):
    sf = loaded_sf()
    if sf is None:
        raise SystemExit("tpch: no TPC-H data in PostgreSQL (run: tpch.py gen --sf SF)")
    folder = sf_data(a.data, sf)
    os.makedirs(folder, exist_ok=True)
    if "arrow" in modes:
        load_arrow(folder, sf, a.force)
    if "duckdb" in modes:
        if not csv_files(os.path.join(folder, "csv"), "lineitem"):
            say(f"load: no generator files in {folder}/csv (run: tpch.py gen --sf {sf} --force): duckdb mode skipped")
        else:
            load_duck(folder, sf, a.force)


def arrow_setup(folder, sf, cores):
    """The arrow mode's lineitem and orders: foreign tables over the Arrow
    files in schema tpch_arrow (the other tables stay heap tables),
    analyzed.  Returns why the mode cannot run, or None."""
    if read_stamp(folder, ARROW_STAMP) != sf:
        return f"no Arrow files of SF {sf} in {folder} (run: tpch.py load --modes arrow)"
    ddl = [f"DROP SCHEMA IF EXISTS {ARROW_SCHEMA} CASCADE; CREATE SCHEMA {ARROW_SCHEMA};"]
    for t in ARROW_TABLES:
        files = ",".join(os.path.abspath(f) for f in arrow_files(folder, t))
        ddl.append(f"CREATE FOREIGN TABLE {ARROW_SCHEMA}.{t} (LIKE public.{t}) SERVER arrow_fdw "
                   f"OPTIONS (files '{files}', parallel_workers '{cores}');")
        ddl.append(f"ANALYZE {ARROW_SCHEMA}.{t};")
    # the heap tables' foreign keys (foreign_keys.sql), declared as the
    # Arrow tables' option: the planner's join estimates are the same
    for t, keys in ARROW_FOREIGN_KEYS.items():
        ddl.append(f"ALTER FOREIGN TABLE {ARROW_SCHEMA}.{t} OPTIONS (ADD foreign_keys '{keys}');")
    pc.psql("\n".join(ddl) + "\n", csv_out=False)
    return None


# ---------------------------------------------------------------- run


def pg_settings(mode, cores, timeout=0):
    s = [("max_parallel_workers_per_gather", cores), ("max_parallel_workers", cores)]
    if timeout:
        s.append(("statement_timeout", f"'{timeout}s'"))
    s.append(("pg_strom.enabled", "off" if mode == "pg" else "on"))
    if mode == "arrow":
        s.append(("search_path", f"{ARROW_SCHEMA}, public"))
    if mode != "pg":
        s += bl.strom_settings("TPCH_STROM_SET")
    return s


def parse_modes(text):
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"tpch: unknown mode {m!r} (modes: {', '.join(MODES)})")
    return modes


def cmd_run(a):
    modes = parse_modes(a.modes)
    queries = [q.strip() for q in a.queries.split(",")] if a.queries else QUERIES
    for q in queries:
        if q not in QUERIES:
            raise SystemExit(f"tpch: unknown query {q!r} (q01 .. q22, ix1 .. ix4)")
    sf = loaded_sf()
    if sf is None:
        raise SystemExit("tpch: no TPC-H data in PostgreSQL (run: tpch.py gen --sf SF)")
    cores = a.workers or os.cpu_count()
    folder = sf_data(a.data, sf)
    # the benchmark gives PostgreSQL every core for the big tables
    pc.psql("".join(f"ALTER TABLE {t} SET (parallel_workers = {cores});" for t in ("lineitem", "orders")),
            csv_out=False)
    db_bytes = int(pc.scalar("SELECT sum(pg_relation_size(c)) FROM unnest(ARRAY["
                             + ",".join(f"'{t}'::regclass" for t in TABLES) + "]) c"))
    engine = bl.engine_in_use(say)
    say(f"SF {sf}, {db_bytes / 1e9:.2f} GB of heap, {cores} parallel workers, pg_strom engine {engine}, "
        f"{a.runs} timed runs per query after one warm-up")
    results, skipped = {}, {}
    # per pg_strom mode and query: why parts of the plan stay on PostgreSQL
    whys = {}
    cons = {}
    for m in modes:
        con = None
        if m == "arrow":
            why = arrow_setup(folder, sf, cores)
            if why:
                skipped[m] = why
                continue
        if m == "duckdb":
            duckdb = bl.import_duckdb()
            if duckdb is None:
                skipped[m] = "the duckdb module is not installed"
                continue
            if read_stamp(folder, DUCK_STAMP) != sf:
                skipped[m] = f"no DuckDB database of SF {sf} in {folder} (run: tpch.py load --modes duckdb)"
                continue
            con = duckdb.connect(os.path.join(folder, "tpch.duckdb"), read_only=True)
        cons[m] = con
    # each query in every mode before the next query (modes interleaved):
    # the ratios compare runs minutes apart at most, not a mode run after
    # the other, whose times drift with the machine's state (a run of the
    # pg mode first and the strom mode after once put plans identical in
    # both 10% apart)
    spent = {m: 0.0 for m in cons}
    os.makedirs(a.out, exist_ok=True)

    def write_csv(done):
        bl.write_csv(os.path.join(a.out, "tpch.csv"), results, modes, done, db_bytes, sf, engine,
                     at_end=[("not_on_device", lambda m, q: "; ".join(whys.get((m, q), [])))])

    for i, q in enumerate(queries):
        if i:
            # the queries so far: a run cut short still leaves its figures
            write_csv(queries[:i])
        sql = bl.read_query(os.path.join(HERE, "queries"), q)
        for m, con in cons.items():
            t0 = time.time()
            results[(m, q)] = (bl.run_pg(m, q, sql, a.runs, pg_settings(m, cores, a.timeout)) if con is None
                               else bl.run_duck(m, q, sql, a.runs, con))
            if m in bl.STROM_MODES:
                whys[(m, q)] = bl.device_reasons(sql, pg_settings(m, cores))
            spent[m] += time.time() - t0
        say(f"{q}: " + ", ".join(f"{m} {results[(m, q)].median or 0:.1f} ms ({results[(m, q)].status})" for m in cons))
    for m, t in spent.items():
        say(f"{m}: {len(queries)} queries in {t:.1f} s")
    for m, why in skipped.items():
        say(f"{m}: skipped: {why}")
    ran = [m for m in modes if m not in skipped]
    failures = bl.compare_modes(results, ran, queries)
    write_csv(queries)
    chart = bl.write_chart(os.path.join(a.out, "tpch.png"), results, ran, queries, db_bytes, f"TPC-H SF {sf}",
                           lambda q: q.upper())
    bl.print_table(results, ran, queries, db_bytes, skipped, f"TPC-H SF {sf}")
    # which pg_strom nodes each query's plan holds, per pg_strom mode, and
    # what the planner said keeps the rest on PostgreSQL
    for m in bl.STROM_MODES:
        if m in ran:
            offloaded = [q for q in queries if results[(m, q)].offload not in ("", "-", "Arrow_Fdw")]
            say(f"{m}: pg_strom nodes in {len(offloaded)} of {len(queries)} plans: "
                + ", ".join(f"{q} {results[(m, q)].offload}" for q in offloaded))
            for q in queries:
                if whys.get((m, q)):
                    say(f"{m} {q} ({results[(m, q)].offload}): " + "; ".join(whys[(m, q)]))
    say(f"wrote {os.path.join(a.out, 'tpch.csv')}" + (f" and {chart}" if chart else " (no chart: Pillow is not installed)"))
    if failures:
        say(f"FAILED: {failures} query results differ or failed (see the table)")
        return 1
    say(f"all results equal across {', '.join(ran)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    cpu = os.cpu_count() or 1

    def add_common(p):
        p.add_argument("--data", default=os.environ.get("TPCH_DATA", ".bench/tpch"),
                       help="folder for the generator's files, the Arrow files and DuckDB's database "
                            "(default .bench/tpch; each scale factor in DATA/sfSF)")
        p.add_argument("--force", action="store_true", help="regenerate / reload even if present")

    def add_gen(p):
        p.add_argument("--sf", type=float, required=True, help="scale factor (lineitem = about 6,000,000 x SF rows)")
        p.add_argument("--jobs", type=int, default=cpu, help=f"generator threads and loading sessions (default {cpu})")

    def add_modes(p):
        p.add_argument("--modes", default=DEFAULT_MODES, help=f"comma-separated (default {DEFAULT_MODES})")

    def add_run(p):
        p.add_argument("--out", required=True, help="folder for tpch.csv and tpch.png")
        p.add_argument("--runs", type=int, default=3, help="timed runs per query after a warm-up (default 3)")
        p.add_argument("--queries", default="", help="comma-separated subset, e.g. q01,q06")
        p.add_argument("--workers", type=int, default=0, help="PostgreSQL parallel workers (default: cores)")
        p.add_argument("--timeout", type=int, default=0,
                       help="statement_timeout in seconds for each PostgreSQL run (default: none); a query that "
                            "runs longer is reported as 'timeout' and not compared")

    p = sub.add_parser("gen", help="generate the data and load it into PostgreSQL")
    add_common(p)
    add_gen(p)
    p = sub.add_parser("load", help="the Arrow files and DuckDB's database the modes read")
    add_common(p)
    add_modes(p)
    p = sub.add_parser("run", help="run the queries in every mode")
    add_common(p)
    add_modes(p)
    add_run(p)
    p = sub.add_parser("all", help="gen + load + run")
    add_common(p)
    add_gen(p)
    add_modes(p)
    add_run(p)
    p.add_argument("--drop-files", action="store_true",
                   help="remove the generator's files once the modes' data is loaded (they take about 1 GB "
                        "per scale factor, which queries that spill to disk may need; the duckdb mode "
                        "loads from them, so a later run of it regenerates with --force)")
    a = ap.parse_args()
    modes = parse_modes(a.modes) if a.cmd != "gen" else []
    try:
        if a.cmd in ("gen", "all"):
            cmd_gen(a)
        if a.cmd in ("load", "all"):
            cmd_load(a, modes)
        if a.cmd == "all" and a.drop_files:
            sf = loaded_sf()
            folder = os.path.join(sf_data(a.data, sf), "csv") if sf is not None else None
            if folder and os.path.isdir(folder):
                shutil.rmtree(folder)
                say(f"removed the generator's files in {folder} (--drop-files)")
        if a.cmd in ("run", "all"):
            return cmd_run(a)
    except pc.PsqlError as e:
        print(f"tpch: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
