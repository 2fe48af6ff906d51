#!/usr/bin/env python3
"""bench/ssb/ssb.py - the Star Schema Benchmark: generator, loader, runner.

    ssb.py gen  --sf SF [--seed N] [--jobs N] [--sorted] [--force]
    ssb.py load --data DIR [--jobs N] [--order date|generation]   (Arrow files, DuckDB database, Parquet)
    ssb.py run  --out DIR [--data DIR] [--order date|generation] [--modes ...] [--runs N] [--queries ...]
    ssb.py all  --sf SF --out DIR [--data DIR] [--order ...] ...   (gen + the load --modes needs + run)

Connects with the PG* environment (`. .run/env`, or the benchmark cluster
of scripts/bench.sh).  See docs/benchmark.md for what each mode measures,
the data's layout and the comparison rules.  Python standard library, plus
the duckdb module for the DuckDB modes, pyarrow for loading DuckDB from the
Arrow files (CSV without it) and for duckdb-arrow, and Pillow for the chart (all optional: a mode or the chart without its
module is reported and skipped).
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import benchlib as bl  # noqa: E402
from benchlib import pc  # noqa: E402

QUERIES = ["q1_1", "q1_2", "q1_2s", "q1_3", "q2_1", "q2_2", "q2_3",
           "q3_1", "q3_2", "q3_3", "q3_4", "q4_1", "q4_2", "q4_3"]
TABLES = ["lineorder", "date1", "customer", "supplier", "part"]
MODES = {
    "pg": "PostgreSQL (pg_strom.enabled = off, parallel workers = cores)",
    "strom": "pg_strom on heap tables",
    "cache": "pg_strom on heap tables with a GPU cache of each (pgstrom.gpu_cache_enable, dropped after the mode)",
    "arrow": "pg_strom on Arrow_Fdw (lineorder as an Arrow file)",
    "duckdb": "DuckDB, its own tables (loaded from the same data)",
    "duckdb-parquet": "DuckDB over Parquet files of the same data",
    "duckdb-arrow": "DuckDB over lineorder.arrow (the arrow mode's file), its own dimension tables",
}
DEFAULT_MODES = "pg,strom,cache,arrow,duckdb,duckdb-parquet,duckdb-arrow"
# The row order of lineorder in the files `load` writes (lineorder.arrow,
# DuckDB's table, lineorder.parquet): the ORDER BY of the export.
#  date:       by lo_orderdate (PG-Strom's write-ups' log-like layout), the
#              files in DATA itself;
#  generation: the generator's row ids (row i is line i % 4 + 1 of order
#              i / 4 + 1, gen_lineorder.sql), the order one session would
#              have written the heap in; the files in DATA/generation.
# Both are total orders over unique keys, so a load is deterministic.  The
# heap modes (pg, strom) read the heap as gen wrote it: its --jobs
# sessions each inserted one contiguous slice of row ids, and their pages
# interleave.
ORDERS = {
    "date": "lo_orderdate, lo_orderkey, lo_linenumber",
    "generation": "lo_orderkey, lo_linenumber",
}
HEAP_MODES = ("pg", "strom", "cache")
# The modes that read the files of `load`: arrow reads only lineorder.arrow;
# the DuckDB modes read DuckDB's database or the Parquet files, which `load`
# makes from the Arrow files (so it writes lineorder.arrow for them too).
# `all` loads only what its --modes read.
ARROW_MODES = ("arrow",)
DUCK_MODES = ("duckdb", "duckdb-parquet", "duckdb-arrow")
# DATA/LOADED: every file of `load`; DATA/LOADED.arrow: lineorder.arrow
# alone (a load for the arrow mode only).  Both hold "SF/SEED ORDER".
STAMP = "LOADED"
ARROW_STAMP = "LOADED.arrow"


def say(msg):
    print(f"ssb: {msg}", flush=True)


def read_query(name):
    return bl.read_query(os.path.join(HERE, "queries"), name)


# ---------------------------------------------------------------- gen


def cmd_gen(a):
    t0 = time.time()
    have = ""
    if pc.scalar("SELECT to_regclass('ssb_gen.params') IS NOT NULL") == "t":
        have = pc.scalar("SELECT sf || '/' || seed FROM ssb_gen.params")
    want = f"{float(a.sf):g}/{a.seed}"
    if have and _norm(have) == want and not a.force and _has_sorted_if_needed(a):
        say(f"SF {a.sf} (seed {a.seed}) is already loaded; --force regenerates")
        return
    say(f"generating SF {a.sf} (seed {a.seed}) with {a.jobs} sessions")
    pc.psql(open(os.path.join(HERE, "schema.sql")).read(), csv_out=False)
    pc.psql(open(os.path.join(HERE, "gen_dims.sql")).read(), csv_out=False,
            extra_args=("-v", f"sf={a.sf}", "-v", f"seed={a.seed}"))
    nlines = int(pc.scalar("SELECT nlines FROM ssb_gen.params"))
    step = -(-nlines // a.jobs)
    t1 = time.time()

    def written():
        # rows are not visible before the sessions commit: the heap's size
        # says how far they are (about 149 bytes per row, measured at SF 1)
        size = int(pc.scalar("SELECT pg_relation_size('lineorder')"))
        rows = min(size // 149, nlines)
        return (f"about {rows:,} of {nlines:,} rows ({100 * rows // max(nlines, 1)}%, "
                f"{rows / max(time.time() - t1, 0.001):,.0f} rows/s)")
    bl.psql_at_once([["-v", f"lo={lo}", "-v", f"hi={min(lo + step, nlines) - 1}",
                   "-f", os.path.join(HERE, "gen_lineorder.sql")] for lo in range(0, nlines, step)],
                 "lineorder generation", "ssb", progress=written)
    gen_s = time.time() - t1
    say(f"lineorder: {nlines:,} rows in {gen_s:.1f} s ({nlines / max(gen_s, 0.001):,.0f} rows/s)")
    if a.sorted:
        pc.psql("CREATE TABLE lineorder_sort AS SELECT * FROM lineorder ORDER BY lo_orderdate, lo_orderkey, lo_linenumber;",
                settings=[("max_parallel_workers_per_gather", a.jobs)], csv_out=False)
    tables = TABLES + (["lineorder_sort"] if a.sorted else [])
    # all-visible pages and statistics, as a loaded warehouse has them.
    # The CHECKPOINT first flushes the generating sessions' commits (the
    # cluster runs synchronous_commit = off): VACUUM marks a page
    # all-visible only once its rows' commit hint bits can be set, which
    # waits for the commit's WAL flush (it left 26% of SF 1's lineorder
    # all-visible without it, and the planner charged the rest gathering)
    pc.psql("CHECKPOINT;", csv_out=False)
    bl.psql_at_once([["-c", f"VACUUM (FREEZE, ANALYZE) {t}"] for t in tables], "VACUUM", "ssb")
    # again: pages the generating sessions' bulk extensions left new (all
    # zeros) are recorded as free by the first VACUUM but not marked
    # all-visible; the second truncates or marks them
    bl.psql_at_once([["-c", f"VACUUM {t}"] for t in tables], "VACUUM", "ssb")
    # ... and written out, as a warehouse's pages are long after loading
    # (the heap direct path reads only blocks no dirty buffer holds)
    pc.psql("CHECKPOINT;", csv_out=False)
    sizes = pc.scalar("SELECT string_agg(c.relname || ' ' || c.reltuples::bigint || ' rows ' || "
                   "pg_size_pretty(pg_relation_size(c.oid)), ', ' ORDER BY c.relname) FROM pg_class c "
                   f"WHERE c.relname IN ({','.join(repr(t) for t in tables)}) AND c.relnamespace = 'public'::regnamespace")
    say(f"done in {time.time() - t0:.1f} s: {sizes}")


def _norm(have):
    sf, seed = have.split("/")
    return f"{float(sf):g}/{seed}"


def _has_sorted_if_needed(a):
    return not a.sorted or pc.scalar("SELECT to_regclass('lineorder_sort') IS NOT NULL") == "t"


# ---------------------------------------------------------------- load


def _columns(table):
    out, _ = pc.psql("SELECT column_name, data_type FROM information_schema.columns "
                     f"WHERE table_schema = 'public' AND table_name = '{table}' ORDER BY ordinal_position;")
    return pc.parse_csv(out)[1]


def _duck_type(pgtype):
    return {"integer": "INTEGER", "bigint": "BIGINT", "smallint": "SMALLINT", "numeric": "DECIMAL(38,0)",
            "double precision": "DOUBLE", "real": "FLOAT"}.get(pgtype, "VARCHAR")


def _arrow_modules():
    try:
        import pyarrow as pa
        import pyarrow.ipc as ipc
        return pa, ipc
    except ImportError:
        return None


def order_data(data, order):
    """The folder of `order`'s files under --data (docs/benchmark.md)."""
    return data if order == "date" else os.path.join(data, order)


def mode_order(mode, order):
    """The order of lineorder that `mode` reads."""
    return "heap" if mode in HEAP_MODES else order


def loaded_stamp(order):
    """What DATA/LOADED (or DATA/LOADED.arrow) says once `load` has written
    `order`'s files for the tables now in PostgreSQL: "SF/SEED ORDER"."""
    return pc.scalar("SELECT sf || '/' || seed FROM ssb_gen.params") + f" {order}"


def read_stamp(data, name=STAMP):
    """DATA/LOADED (or DATA/`name`), or None.  A stamp without an order was
    written before --order existed, always in date order."""
    path = os.path.join(data, name)
    if not os.path.exists(path):
        return None
    stamp = open(path).read().strip()
    return stamp if " " in stamp else f"{stamp} date"


def remove_stamps(data, *names):
    for name in names:
        path = os.path.join(data, name)
        if os.path.exists(path):
            os.remove(path)


def not_loaded(data, order, arrow_only=False):
    """Why `order`'s files in `data` cannot be used for the tables now in
    PostgreSQL, or None.  arrow_only: only lineorder.arrow is needed (the
    arrow mode), which a load for the arrow mode alone also wrote."""
    have, want = read_stamp(data), loaded_stamp(order)
    arrow = read_stamp(data, ARROW_STAMP)
    if have == want or (arrow_only and arrow == want):
        return None
    if have is None and arrow == want:
        why = f"{data} holds only lineorder.arrow of {want} (loaded for the arrow mode alone)"
    elif have is None:
        why = f"no data loaded in {data}"
    else:
        why = f"{data} holds {have}, not {want}"
    return f"{why} (run: ssb.py load --data DIR --order {order})"


def load_duck_from_arrow(con, data, arrow):
    """DuckDB's tables from the Arrow files (lineorder.arrow and the
    dimensions' files from pg2arrow), with the types the CSV load gives:
    char(n) (pg2arrow's FixedSizeBinary) as text without its padding."""
    pa, ipc = arrow
    for t in TABLES:
        cols = _columns(t)
        table = ipc.open_file(pa.memory_map(os.path.join(data, f"{t}.arrow"))).read_all()
        con.register("arrow_src", table)
        select = ", ".join(f"rtrim(decode({c})) AS {c}" if ty == "character" else f"CAST({c} AS {_duck_type(ty)}) AS {c}"
                           for c, ty in cols)
        con.execute(f"CREATE TABLE {t} AS SELECT {select} FROM arrow_src")
        con.unregister("arrow_src")
        con.execute(f"COPY {t} TO '{os.path.join(data, t + '.parquet')}' (FORMAT parquet)")


def export_dimensions(data):
    """The dimension tables as Arrow files, written by pg2arrow."""
    pg2arrow = shutil.which("pg2arrow")
    for t in TABLES[1:]:
        path = os.path.join(data, f"{t}.arrow")
        r = subprocess.run([pg2arrow, "-t", t, "-o", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"ssb: pg2arrow failed on {t}: {r.stderr.strip()}")


def load_for_modes(a, modes):
    """`all`'s load: only the files that --modes read (ARROW_MODES,
    DUCK_MODES), saying what it leaves out and why."""
    arrow = [m for m in modes if m in ARROW_MODES]
    duck = [m for m in modes if m in DUCK_MODES]
    if not arrow and not duck:
        say(f"load: skipped: modes {', '.join(modes)} read only PostgreSQL's tables, so neither lineorder.arrow "
            "(pg2arrow) nor DuckDB's database and Parquet files are written (modes arrow and duckdb* read them)")
        return
    if duck and bl.import_duckdb() is None:
        say(f"load: the duckdb module is not installed: DuckDB's database and Parquet files skipped "
            f"(modes {', '.join(duck)} skipped)")
        if not arrow:
            return
    elif duck or not shutil.which("pg2arrow"):
        # everything, as before (without pg2arrow, lineorder.arrow comes
        # from DuckDB's table)
        cmd_load(a)
        return
    else:
        say(f"load: DuckDB's database and Parquet files skipped: no DuckDB mode in {', '.join(modes)} "
            "(only lineorder.arrow is written, for the arrow mode)")
    if shutil.which("pg2arrow"):
        load_arrow(a)
    else:
        say("load: pg2arrow is not installed and the duckdb module is not either: arrow mode skipped")


def load_arrow(a):
    """lineorder.arrow alone, for the arrow mode (pg2arrow; write_arrow),
    stamped DATA/LOADED.arrow; kept when DATA/LOADED or DATA/LOADED.arrow
    already says the tables now in PostgreSQL."""
    data, order = order_data(a.data, a.order), a.order
    os.makedirs(data, exist_ok=True)
    stamp = loaded_stamp(order)
    if stamp in (read_stamp(data), read_stamp(data, ARROW_STAMP)) and not a.force:
        say(f"load: {data} already holds lineorder.arrow of {stamp} (ORDER BY {ORDERS[order]})")
        return
    say(f"load: lineorder.arrow of {stamp} into {data}, ORDER BY {ORDERS[order]}")
    # the file is rewritten: neither stamp holds until it is done
    remove_stamps(data, STAMP, ARROW_STAMP)
    arrow = write_arrow(None, data, order)
    with open(os.path.join(data, ARROW_STAMP), "w") as f:
        f.write(stamp)
    say(f"load: {arrow}")


def cmd_load(a):
    """Export the tables as Arrow files with pg2arrow (lineorder in
    --order's order with statistics of lo_orderdate, for the arrow mode)
    and load DuckDB's database from them, keeping that order; write each
    table as Parquet too.  Without pg2arrow or pyarrow, DuckDB loads CSV
    exports (char(n) without its padding, lineorder put in --order's
    order) and lineorder.arrow comes from DuckDB's table.  A lineorder.arrow
    that load_arrow wrote for the same data is kept.  Without the duckdb
    module, only lineorder.arrow (with pg2arrow)."""
    duckdb = bl.import_duckdb()
    if duckdb is None:
        if shutil.which("pg2arrow"):
            say("load: the duckdb module is not installed: DuckDB modes skipped, lineorder.arrow only")
            load_arrow(a)
        else:
            say("load: neither the duckdb module nor pg2arrow is installed: DuckDB and arrow modes skipped")
        return
    data, order = order_data(a.data, a.order), a.order
    os.makedirs(data, exist_ok=True)
    stamp = loaded_stamp(order)
    stamp_file = os.path.join(data, STAMP)
    if read_stamp(data) == stamp and not a.force:
        say(f"load: {data} already holds {stamp} (lineorder ORDER BY {ORDERS[order]})")
        return
    say(f"load: {stamp} into {data}, lineorder ORDER BY {ORDERS[order]}")
    t0 = time.time()
    # lineorder.arrow of a load for the arrow mode alone, of the same data
    keep_arrow = (not a.force and read_stamp(data, ARROW_STAMP) == stamp
                  and os.path.exists(os.path.join(data, "lineorder.arrow")))
    dbfile = os.path.join(data, "ssb.duckdb")
    for f in [dbfile, dbfile + ".wal"]:
        if os.path.exists(f):
            os.remove(f)
    remove_stamps(data, STAMP, *([] if keep_arrow else [ARROW_STAMP]))
    con = duckdb.connect(dbfile)
    arrow_mods = _arrow_modules()
    if shutil.which("pg2arrow") and arrow_mods:
        arrow = kept_arrow(data, stamp) if keep_arrow else write_arrow(con, data, order)
        export_dimensions(data)
        t1 = time.time()
        load_duck_from_arrow(con, data, arrow_mods)
        con.close()
        with open(stamp_file, "w") as f:
            f.write(stamp)
        say(f"load: {arrow}; DuckDB database and Parquet files from the Arrow files in {time.time() - t1:.1f} s "
            f"({time.time() - t0:.1f} s in all, in {data})")
        return
    for t in TABLES:
        cols = _columns(t)
        select = ", ".join(f"{c}::text" if ty.startswith("character") else c for c, ty in cols)
        jobs = a.jobs if t == "lineorder" else 1
        files = [os.path.join(data, f"{t}.{k}.csv") for k in range(jobs)]
        where = [f" WHERE lo_orderkey % {jobs} = {k}" if jobs > 1 else "" for k in range(jobs)]
        bl.psql_at_once([["-c", f"\\copy (SELECT {select} FROM {t}{w}) TO '{f}' WITH (FORMAT csv)"]
                      for f, w in zip(files, where, strict=True)], f"export of {t}")
        coldefs = ", ".join(f"{c} {_duck_type(ty)}" for c, ty in cols)
        colmap = "{" + ", ".join(f"'{c}': '{_duck_type(ty)}'" for c, ty in cols) + "}"
        # lineorder in --order's order (DuckDB keeps an ORDER BY's order)
        order_by = f" ORDER BY {ORDERS[order]}" if t == "lineorder" else ""
        con.execute(f"CREATE TABLE {t} ({coldefs})")
        con.execute(f"INSERT INTO {t} SELECT * FROM read_csv({files!r}, header = false, auto_detect = false, "
                    f"columns = {colmap}, quote = '\"', escape = '\"', nullstr = ''){order_by}")
        con.execute(f"COPY {t} TO '{os.path.join(data, t + '.parquet')}' (FORMAT parquet)")
        for f in files:
            os.remove(f)
    arrow = kept_arrow(data, stamp) if keep_arrow else write_arrow(con, data, order)
    con.close()
    with open(stamp_file, "w") as f:
        f.write(stamp)
    say(f"load: DuckDB database and Parquet files in {data} ({time.time() - t0:.1f} s); {arrow}")


def kept_arrow(data, stamp):
    path = os.path.join(data, "lineorder.arrow")
    return f"{path}: kept (written for the arrow mode with the same data, {stamp}), {os.path.getsize(path) / 1e6:.1f} MB"


def write_arrow(con, data, order):
    """lineorder as an Arrow file for the arrow mode, in `order`'s order
    (ORDERS; date: PG-Strom's write-ups' log-like layout) with min/max
    statistics of lo_orderdate per record batch, in about 64 batches:
    written by pg2arrow --stat (installed beside psql) as PG-Strom's
    write-ups do, else by pyarrow from DuckDB's table (`con`; None only
    where pg2arrow is installed)."""
    path = os.path.join(data, "lineorder.arrow")
    if os.path.exists(path):
        os.remove(path)
    pg2arrow = shutil.which("pg2arrow")
    if pg2arrow:
        heap = int(pc.scalar("SELECT pg_relation_size('lineorder')"))
        seg_kb = max(64, min(256 * 1024, heap // 64 // 1024))
        t0 = time.time()
        r = subprocess.run([pg2arrow, "-c", f"SELECT * FROM lineorder ORDER BY {ORDERS[order]}",
                            "-o", path, "--stat=lo_orderdate", "-s", f"{seg_kb}kB"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit(f"ssb: pg2arrow failed: {r.stderr.strip()}")
        os.chmod(path, 0o644)
        batches = subprocess.run([pg2arrow, "--dump", path], stdout=subprocess.PIPE, text=True).stdout.count("[Record Batch")
        return (f"{path}: ORDER BY {ORDERS[order]}, written by pg2arrow --stat=lo_orderdate in {time.time() - t0:.1f} s, "
                f"{batches} record batches, {os.path.getsize(path) / 1e6:.1f} MB")
    try:
        import pyarrow as pa
        import pyarrow.compute as pcmp
        import pyarrow.ipc as ipc
    except ImportError:
        return "no Arrow file (neither pg2arrow nor the pyarrow module: arrow mode skipped)"
    table = con.execute(f"SELECT * FROM lineorder ORDER BY {ORDERS[order]}").arrow()
    if not isinstance(table, pa.Table):  # newer DuckDB returns a reader
        table = table.read_all()
    # about 64 batches (at least 1,000 rows, at most 2M each)
    per = max(1000, min(2_000_000, -(-table.num_rows // 64)))
    batches = table.combine_chunks().to_batches(max_chunksize=per)
    k = table.schema.get_field_index("lo_orderdate")
    mins = ",".join(str(pcmp.min(b.column(k)).as_py()) for b in batches)
    maxs = ",".join(str(pcmp.max(b.column(k)).as_py()) for b in batches)
    fields = [f.with_metadata({"min_values": mins, "max_values": maxs}) if i == k else f
              for i, f in enumerate(table.schema)]
    schema = pa.schema(fields)
    with ipc.new_file(path, schema) as w:
        for b in batches:
            w.write_batch(pa.record_batch(b.columns, schema=schema))
    os.chmod(path, 0o644)
    return (f"{path}: ORDER BY {ORDERS[order]}, written by pyarrow (no pg2arrow), {len(batches)} record batches, "
            f"{os.path.getsize(path) / 1e6:.1f} MB")


ARROW_SCHEMA = "ssb_arrow"


def arrow_setup(data, order, cores):
    """The arrow mode's lineorder: a foreign table over the loaded Arrow
    file of `order` in schema ssb_arrow (the other tables stay heap
    tables), analyzed.  Returns why the mode cannot run, or None."""
    why = not_loaded(data, order, arrow_only=True)
    if why:
        return why
    path = os.path.abspath(os.path.join(data, "lineorder.arrow"))
    if not os.path.exists(path):
        return f"no {path} (neither pg2arrow nor pyarrow when it was loaded; run: ssb.py load --force)"
    pc.psql(f"DROP SCHEMA IF EXISTS {ARROW_SCHEMA} CASCADE; CREATE SCHEMA {ARROW_SCHEMA};\n"
            f"CREATE FOREIGN TABLE {ARROW_SCHEMA}.lineorder (LIKE public.lineorder) SERVER arrow_fdw "
            f"OPTIONS (file '{path}', parallel_workers '{cores}');\n"
            # statistics, as a user would gather them: without them every
            # range qual gets a default selectivity, and a few such quals
            # estimate one row where there are tens of thousands
            f"ANALYZE {ARROW_SCHEMA}.lineorder;\n", csv_out=False)
    return None


def gpu_caches(enable):
    """cache mode: build (enable) or drop the GPU cache of every table;
    with enable, the line of what they hold."""
    if not enable:
        pc.psql("".join(f"SELECT pgstrom.gpu_cache_disable('{t}');\n" for t in TABLES), csv_out=False)
        return None
    t0 = time.time()
    # one transaction each (a cache is built by the first write of its own)
    pc.psql("".join(f"SELECT pgstrom.gpu_cache_disable('{t}');\nSELECT pgstrom.gpu_cache_enable('{t}');\n"
                    for t in TABLES), csv_out=False)
    held = pc.scalar("SELECT string_agg(relation || ' ' || row_versions || ' rows ' || pg_size_pretty(bytes) "
                     "|| CASE WHEN usable THEN '' ELSE ' (not usable: ' || why_not || ')' END, ', ' "
                     "ORDER BY relation::text) FROM pgstrom.gpu_cache_info")
    return f"GPU caches built in {time.time() - t0:.1f} s: {held}"


# ---------------------------------------------------------------- run


def pg_settings(mode, cores):
    s = [("max_parallel_workers_per_gather", cores), ("max_parallel_workers", cores)]
    s.append(("pg_strom.enabled", "off" if mode == "pg" else "on"))
    if mode == "arrow":
        s.append(("search_path", f"{ARROW_SCHEMA}, public"))
    if mode != "pg":
        # extra settings of the pg_strom modes, "name=value name=value"
        s += bl.strom_settings("SSB_STROM_SET")
    return s


def duck_connect(mode, data, order):
    duckdb = bl.import_duckdb()
    if duckdb is None:
        return None, "the duckdb module is not installed"
    why = not_loaded(data, order)
    if why:
        return None, why
    if mode == "duckdb":
        return duckdb.connect(os.path.join(data, "ssb.duckdb"), read_only=True), None
    if mode == "duckdb-arrow":
        arrow = _arrow_modules()
        path = os.path.join(data, "lineorder.arrow")
        if arrow is None:
            return None, "the pyarrow module is not installed"
        if not os.path.exists(path):
            return None, f"no {path}"
        pa, ipc = arrow
        con = duckdb.connect(os.path.join(data, "ssb.duckdb"), read_only=True)
        # the file memory-mapped, as DuckDB's Arrow scans take it
        con.register("lineorder_arrow", ipc.open_file(pa.memory_map(path)).read_all())
        con.execute("CREATE TEMP VIEW lineorder AS SELECT * FROM lineorder_arrow")
        return con, None
    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{os.path.join(data, t + '.parquet')}')")
    return con, None


def parse_modes(text):
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"ssb: unknown mode {m!r} (modes: {', '.join(MODES)})")
    return modes


def cmd_run(a):
    modes = parse_modes(a.modes)
    queries = [q.strip() for q in a.queries.split(",")] if a.queries else QUERIES
    cores = a.workers or os.cpu_count()
    # PostgreSQL would plan about 7 workers for SF 10's lineorder (its
    # size-based rule); the benchmark gives it every core, as --workers says.
    pc.psql(f"ALTER TABLE lineorder SET (parallel_workers = {cores});", csv_out=False)
    db_bytes = int(pc.scalar("SELECT sum(pg_relation_size(c)) FROM unnest(ARRAY["
                          + ",".join(f"'{t}'::regclass" for t in TABLES) + "]) c"))
    sf = pc.scalar("SELECT sf FROM ssb_gen.params")
    engine = bl.engine_in_use(say)
    data, order = order_data(a.data, a.order), a.order
    say(f"SF {sf}, {db_bytes / 1e9:.2f} GB of heap, {cores} parallel workers, pg_strom engine {engine}, "
        f"{a.runs} timed runs per query after one warm-up")
    # how close the heap is to generation order (1: gen --jobs 1 wrote it)
    heap_corr = pc.scalar("SELECT round(correlation::numeric, 3) FROM pg_stats WHERE schemaname = 'public' "
                          "AND tablename = 'lineorder' AND attname = 'lo_orderkey'") or "unknown"
    say(f"lineorder order: {order_note(modes, order, heap_corr)}")
    results = {}
    skipped = {}
    for m in modes:
        if m == "arrow":
            why = arrow_setup(data, order, cores)
            if why:
                skipped[m] = why
                continue
        if m == "cache":
            say(f"cache: {gpu_caches(True)}")
        con = None
        if m.startswith("duckdb"):
            con, why = duck_connect(m, data, order)
            if con is None:
                skipped[m] = why
                continue
        t0 = time.time()
        try:
            for q in queries:
                sql = read_query(q)
                r = (bl.run_pg(m, q, sql, a.runs, pg_settings(m, cores)) if con is None
                     else bl.run_duck(m, q, sql, a.runs, con))
                results[(m, q)] = r
        finally:
            if m == "cache":
                gpu_caches(False)
        say(f"{m}: {len(queries)} queries in {time.time() - t0:.1f} s (lineorder order: {mode_order(m, order)})")
    for m, why in skipped.items():
        say(f"{m}: skipped: {why}")
    # every mode against the reference (the first mode that ran)
    ran = [m for m in modes if m not in skipped]
    failures = bl.compare_modes(results, ran, queries)
    os.makedirs(a.out, exist_ok=True)
    # the order of lineorder each mode read (mode_order: heap, date or generation)
    bl.write_csv(os.path.join(a.out, "ssb.csv"), results, modes, queries, db_bytes, sf, engine,
                 after_mode=[("order", lambda m, q: mode_order(m, order))])
    chart = bl.write_chart(os.path.join(a.out, "ssb.png"), results, ran, queries, db_bytes,
                           f"SSB SF {sf}, lineorder in {order} order (pg, strom: the heap)",
                           lambda q: q.upper().replace("_", "."))
    bl.print_table(results, ran, queries, db_bytes, skipped,
                   f"SSB SF {sf}, lineorder order: {order_note(ran, order, heap_corr) or order}")
    if chart:
        say(f"wrote {os.path.join(a.out, 'ssb.csv')} and {chart}")
    else:
        say(f"wrote {os.path.join(a.out, 'ssb.csv')} (no chart: Pillow is not installed)")
    if failures:
        say(f"FAILED: {failures} query results differ or failed (see the table)")
        return 1
    say(f"all results equal across {', '.join(ran)}")
    return 0


def order_note(modes, order, heap_corr):
    """Which order of lineorder the modes read, in words; heap_corr is the
    heap's correlation of lo_orderkey with its physical order."""
    files = [m for m in modes if m not in HEAP_MODES]
    heap = [m for m in modes if m in HEAP_MODES]
    parts = []
    if files:
        parts.append(f"{', '.join(files)}: {order} (ORDER BY {ORDERS[order]})")
    if heap:
        parts.append(f"{', '.join(heap)}: heap as gen wrote it (lo_orderkey correlation {heap_corr}; "
                     "1 = generation order)")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    cpu = os.cpu_count() or 1

    def add_gen(p):
        p.add_argument("--sf", type=float, required=True, help="scale factor (lineorder = 6,000,000 x SF rows)")
        p.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
        p.add_argument("--sorted", action="store_true", help="also write lineorder_sort, ordered by lo_orderdate")

    def add_common(p):
        p.add_argument("--jobs", type=int, default=cpu, help=f"sessions generating/exporting at once (default {cpu})")
        p.add_argument("--force", action="store_true", help="regenerate / reload even if present")
        p.add_argument("--data", default=os.environ.get("SSB_DATA", ".bench/ssb"),
                       help="folder for DuckDB's database and the Parquet files (default .bench/ssb)")

    def add_order(p):
        p.add_argument("--order", choices=list(ORDERS), default="date",
                       help="lineorder's row order in the Arrow file, DuckDB's table and the Parquet file: date "
                            "(by lo_orderdate, the default; files in DATA) or generation (the generator's row "
                            "ids, lo_orderkey, lo_linenumber; files in DATA/generation)")

    def add_run(p):
        p.add_argument("--out", required=True, help="folder for ssb.csv and ssb.png")
        p.add_argument("--modes", default=DEFAULT_MODES, help=f"comma-separated (default {DEFAULT_MODES})")
        p.add_argument("--runs", type=int, default=3, help="timed runs per query after a warm-up (default 3)")
        p.add_argument("--queries", default="", help="comma-separated subset, e.g. q1_1,q2_1")
        p.add_argument("--workers", type=int, default=0, help="PostgreSQL parallel workers (default: cores)")

    p = sub.add_parser("gen", help="generate the tables in PostgreSQL")
    add_gen(p)
    add_common(p)
    p = sub.add_parser("load", help="DuckDB database + Parquet files from the PostgreSQL tables")
    add_common(p)
    add_order(p)
    p = sub.add_parser("run", help="run the queries in every mode")
    add_common(p)
    add_order(p)
    add_run(p)
    p = sub.add_parser("all", help="gen + load + run")
    add_gen(p)
    add_common(p)
    add_order(p)
    add_run(p)
    p.add_argument("--no-load", action="store_true",
                   help="skip load (without it, all writes only the files --modes read: lineorder.arrow for arrow, "
                        "DuckDB's database and the Parquet files for the duckdb modes; pg and strom need none)")
    a = ap.parse_args()
    modes = parse_modes(a.modes) if a.cmd in ("run", "all") else []
    try:
        if a.cmd in ("gen", "all"):
            cmd_gen(a)
        if a.cmd == "load":
            cmd_load(a)
        if a.cmd == "all" and not a.no_load:
            load_for_modes(a, modes)
        if a.cmd in ("run", "all"):
            return cmd_run(a)
    except pc.PsqlError as e:
        print(f"ssb: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
