"""bench/benchlib.py - what the benchmarks' runners share (bench/ssb/ssb.py,
bench/tpch/tpch.py): a query's runs in PostgreSQL (pg_strom on or off) and
in DuckDB, with the GPU service's busy time; the results of every mode
compared with the reference mode's; the printed table and the chart.

Python standard library, plus Pillow for the chart (optional).
"""

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import pgcompare as pc  # noqa: E402

# the pg_strom modes, whose speed-ups and busy time the table shows
STROM_MODES = ("strom", "arrow")
COLORS = {"pg": (52, 101, 164), "strom": (237, 125, 49), "cache": (192, 80, 77), "arrow": (165, 165, 165),
          "duckdb": (255, 192, 0), "duckdb-parquet": (112, 173, 71), "duckdb-arrow": (91, 155, 213)}


def colour(mode):
    """A mode's colour in the charts (grey for one without its own)."""
    return COLORS.get(mode, (128, 128, 128))


def import_duckdb():
    try:
        import duckdb
        return duckdb
    except ImportError:
        return None


def psql_at_once(arg_lists, what, prog, progress=None, every=10.0):
    """Run one psql session per argument list, all at once; exit naming
    `what` when one fails.  While they run, `progress()` (when given) is
    printed every `every` seconds: a long step says how far it is."""
    errs = [tempfile.TemporaryFile(mode="w+") for _ in arg_lists]
    procs = [subprocess.Popen(["psql", "-X", "-q", *args], stdout=subprocess.DEVNULL, stderr=e, text=True)
             for args, e in zip(arg_lists, errs, strict=True)]
    t0 = time.time()
    for p in procs:
        while True:
            try:
                p.wait(timeout=every if progress else None)
                break
            except subprocess.TimeoutExpired:
                print(f"{prog}: {what}: {progress()} ({time.time() - t0:.0f} s)", flush=True)
    failed = []
    for p, e in zip(procs, errs, strict=True):
        e.seek(0)
        if p.returncode != 0:
            failed.append(e.read())
        e.close()
    if failed:
        raise SystemExit(f"{prog}: {what} failed: {failed[0]}")


def read_query(folder, name):
    """A query file without its comment lines."""
    with open(os.path.join(folder, name + ".sql")) as f:
        return "\n".join(line for line in f.read().splitlines() if not line.lstrip().startswith("--")).strip()


class Result:
    def __init__(self, mode, query):
        self.mode, self.query = mode, query
        self.times, self.rows, self.float_cols = [], [], set()
        self.status, self.note, self.offload = "ok", "", ""
        # the GPU service's engines' busy time over the runs / their time
        self.util = None

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None


def strom_settings(env_var):
    """Extra settings of the pg_strom modes from the environment variable
    `env_var`: "name=value name=value"."""
    out = []
    for kv in os.environ.get(env_var, "").split():
        name, _, value = kv.partition("=")
        out.append((name, value))
    return out


def engine_in_use(say, wait_s=180.0):
    """The engine pg_strom's device code runs on ("gpu" or "cpu"), once
    the planner prices plans for it: on a GPU machine the GPU service
    builds the device code after an install (about a minute), and plans
    made before are priced for the CPU engine (mostly PostgreSQL's own), so
    timing them would measure the wrong plans.  Waits up to `wait_s` and
    says so when they still differ."""
    engine = pc.scalar("SELECT pgstrom.active_engine()")
    if engine != "gpu":
        return engine
    deadline = time.monotonic() + wait_s
    while True:
        planned = pc.scalar("SELECT pgstrom.planned_engine()")
        if planned == "gpu":
            return engine
        if time.monotonic() > deadline:
            say(f"WARNING: device code runs on the GPU but plans are priced for {planned!r} "
                f"(pgstrom.planned_engine() after {wait_s:.0f} s): the pg_strom modes' plans are not the GPU's")
            return f"gpu (plans priced for {planned})"
        time.sleep(2.0)


def service_busy_ms():
    """The GPU service's engines' busy time so far (ms: wall time with a
    request being served on an engine, summed over the engines), or None
    (no service, or an extension without the column)."""
    try:
        v = pc.scalar("SELECT sum(busy_ms) FROM pgstrom.gpu_service_engines")
        return float(v) if v else None
    except (pc.PsqlError, ValueError):
        return None


def run_pg(mode, q, sql, runs, settings):
    """`sql` in PostgreSQL with `settings`: one warm-up run that returns the
    rows, then `runs` timed runs; the pg_strom nodes of its plan, and for
    the pg_strom modes the GPU service's busy share of the runs."""
    r = Result(mode, q)
    try:
        types = pc.column_types(sql, settings)
        r.float_cols = {i for i, t in enumerate(types) if t in pc.FLOAT_TYPES}
        plan = pc.plan_nodes(sql, settings)
        nodes = sorted({line.split("Custom Scan (")[1].split(")")[0] for line in plan if "Custom Scan (" in line}
                       | {"Arrow_Fdw" for line in plan if "Foreign Scan" in line})
        r.offload = "+".join(nodes) or "-"
        # the first run warms up and returns the rows; the others are timed
        script = f"{sql}\n\\o /dev/null\n" + f"{sql}\n" * runs
        busy = service_busy_ms() if mode in STROM_MODES else None
        out, _ = pc.psql(script, settings=settings, timing=True)
        every = pc.timings(out)
        r.times = every[1:]
        # the engines' utilization over every run (the warm-up's too)
        after = service_busy_ms() if busy is not None else None
        if after is not None and sum(every) > 0:
            r.util = (after - busy) / sum(every)
        body = "\n".join(line for line in out.splitlines() if not line.startswith("Time: ")) + "\n"
        r.rows = pc.parse_csv(body)[1]
    except pc.PsqlError as e:
        r.status, r.note = "error", str(e).splitlines()[0]
        if "statement timeout" in r.note:
            r.status = "timeout"
    return r


def device_reasons(sql, settings):
    """Why parts of `sql`'s plan stay on PostgreSQL: the pg_strom planner's
    DEBUG2 diagnostics while planning it (GpuScan, GpuJoin and GpuPreAgg
    say which expression or node the device lacks; docs/gpuscan.md),
    distinct, in order, without the lines that only report a path's cost.
    [] when planning says nothing."""
    try:
        _, err = pc.psql("EXPLAIN (COSTS OFF) " + sql.rstrip().rstrip(";") + ";\n",
                         settings=list(settings) + [("client_min_messages", "debug2")], csv_out=False)
    except pc.PsqlError:
        return []
    out = []
    for line in err.splitlines():
        msg = line.partition("DEBUG:")[2].strip()
        if not msg.startswith(("GpuScan", "GpuJoin", "GpuPreAgg")) or " cost " in msg:
            continue
        if msg not in out:
            out.append(msg)
    return out


def _duck_text(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def run_duck(mode, q, sql, runs, con):
    """`sql` in DuckDB: one run that returns the rows, then `runs` timed."""
    r = Result(mode, q)
    try:
        cur = con.execute(sql)
        rows = cur.fetchall()
        r.float_cols = {i for i, d in enumerate(cur.description) if str(d[1]).upper() in ("DOUBLE", "FLOAT")}
        r.rows = [tuple(_duck_text(v) for v in row) for row in rows]
        for _ in range(runs):
            t = time.perf_counter()
            con.execute(sql).fetchall()
            r.times.append((time.perf_counter() - t) * 1000)
        r.offload = "duckdb"
    except Exception as e:  # duckdb raises its own error classes
        r.status, r.note = "error", str(e).splitlines()[0]
    return r


def compare_modes(results, ran, queries):
    """Every mode's rows against the reference mode's (the first that
    ran): exact, floating-point columns within pgcompare's relative
    tolerance, DuckDB's text without char(n)'s padding.  Marks the results
    that differ; returns how many differ or failed."""
    failures = 0
    if not ran:
        return 0
    ref_mode = ran[0]
    for q in queries:
        ref = results[(ref_mode, q)]
        for m in ran:
            r = results[(m, q)]
            if r.status == "timeout":
                # longer than the run's statement_timeout: reported, not
                # compared, not a failure
                continue
            if r.status != "ok":
                failures += 1
                continue
            if m == ref_mode:
                continue
            if ref.status == "timeout":
                r.status, r.note = "unchecked", f"{ref_mode} timed out"
                continue
            if ref.status != "ok":
                r.status, r.note = "unchecked", f"{ref_mode} failed"
                continue
            diff = pc.compare_rows(ref.rows, r.rows, ref.float_cols | r.float_cols, strip=m.startswith("duckdb"))
            if diff:
                r.status, r.note = "DIFFERS", f"vs {ref_mode}: {diff}"
                failures += 1
    return failures


def write_csv(path, results, modes, queries, db_bytes, sf, engine, after_mode=(), at_end=()):
    """One row per query and mode: the times, GB/s of `db_bytes`, rows,
    status, pg_strom nodes, GPU busy share.  `after_mode` and `at_end`
    are a benchmark's own columns, (name, f(mode, query) -> text), put
    after the mode's column and last."""
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sf", "engine", "query", "mode", *[n for n, _ in after_mode], "median_ms", "min_ms", "runs",
                    "gb_per_s", "rows", "status", "offload", "note", "engine_util", *[n for n, _ in at_end]])
        for q in queries:
            for m in modes:
                r = results.get((m, q))
                head = [sf, engine, q, m, *[f(m, q) for _, f in after_mode]]
                tail = [f(m, q) for _, f in at_end]
                if r is None:
                    w.writerow([*head, "", "", 0, "", "", "skipped", "", "", "", *tail])
                    continue
                med = r.median
                w.writerow([*head, f"{med:.2f}" if med else "", f"{min(r.times):.2f}" if r.times else "",
                            len(r.times), f"{gbps(db_bytes, med):.3f}" if med else "", len(r.rows), r.status,
                            r.offload, r.note, f"{r.util:.3f}" if r.util is not None else "", *tail])


def gbps(db_bytes, ms):
    return db_bytes / (ms / 1000.0) / 1e9 if ms else None


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def print_table(results, ran, queries, db_bytes, skipped, title):
    """Per query: each mode's median, the heap mode's GB/s, the pg_strom
    modes' speed-ups over PostgreSQL and DuckDB and their busy share, and
    whether the results agree; the geometric means last."""
    def fmt(x, spec):
        return format(x, spec) if x else "-"

    def pct(x):
        return f"{100 * x:.0f}%" if x is not None else "-"
    # the speedups of each pg_strom mode that ran, over PostgreSQL and DuckDB
    ratios = [(m, ref) for m in STROM_MODES if m in ran for ref in ("pg", "duckdb") if ref in ran]
    head = f"{'query':<7}" + "".join(f"{m + ' ms':>19}" for m in ran)
    if "strom" in ran:
        head += f"{'strom GB/s':>11}"
    head += "".join(f"{m + ' x ' + ('pg' if ref == 'pg' else 'duck'):>14}" for m, ref in ratios)
    # the GPU service's engines busy over each pg_strom mode's runs
    busy = [m for m in STROM_MODES if m in ran and any(results[(m, q)].util is not None for q in queries)]
    head += "".join(f"{m + ' busy':>12}" for m in busy)
    head += "  check"
    print()
    print(title)
    print(head)
    print("-" * len(head))
    cols = {m: [] for m in ran}

    def ratio(ref, m, q):
        r, t = results[(ref, q)].median, results[(m, q)].median
        return r / t if r and t else None
    for q in queries:
        line = f"{q:<7}"
        for m in ran:
            med = results[(m, q)].median
            cols[m].append(med)
            line += f"{fmt(med, '.1f'):>19}"
        if "strom" in ran:
            line += f"{fmt(gbps(db_bytes, results[('strom', q)].median), '.2f'):>11}"
        line += "".join(f"{fmt(ratio(ref, m, q), '.2f'):>14}" for m, ref in ratios)
        line += "".join(f"{pct(results[(m, q)].util):>12}" for m in busy)
        bad = [f"{m}: {results[(m, q)].status} {results[(m, q)].note}".strip() for m in ran
               if results[(m, q)].status != "ok"]
        line += "  " + ("; ".join(bad) if bad else "ok")
        print(line)
    g = {m: geomean(cols[m]) for m in ran}
    line = f"{'geomean':<7}" + "".join(f"{fmt(g[m], '.1f'):>19}" for m in ran)
    if "strom" in ran:
        line += f"{fmt(gbps(db_bytes, g['strom']) if g.get('strom') else None, '.2f'):>11}"
    line += "".join(f"{fmt(g[ref] / g[m] if g.get(ref) and g.get(m) else None, '.2f'):>14}" for m, ref in ratios)
    print(line)
    # the worst ratio of each pg_strom mode to PostgreSQL (never slower)
    for m in STROM_MODES:
        rs = [(ratio("pg", m, q), q) for q in queries if m in ran and "pg" in ran]
        rs = [(x, q) for x, q in rs if x]
        if rs:
            x, q = min(rs)
            print(f"{m}: worst ratio to PostgreSQL {x:.2f} ({q})")
    if busy:
        print("M busy = the GPU service's engines' busy time (wall time with a request being served on one) "
              "over mode M's runs of the query, the warm-up's included")
    for m, why in skipped.items():
        print(f"{m}: skipped ({why})")
    print("M x pg = PostgreSQL time / mode M's time; M x duck = DuckDB time / mode M's time (> 1: pg_strom faster)")


def axis_ticks(vmax, most=5):
    """Round tick values from 0 up to at least `vmax` (at most `most` + 1
    of them, a step of 1, 2, 2.5 or 5 times a power of ten) and their
    labels, all with the same decimals.

    >>> axis_ticks(0.99)
    ([0.0, 0.2, 0.4, 0.6, 0.8, 1.0], ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0'])
    >>> axis_ticks(13.2)[1]
    ['0', '5', '10', '15']
    >>> axis_ticks(1.1)[1]
    ['0.00', '0.25', '0.50', '0.75', '1.00', '1.25']
    >>> axis_ticks(0)[1]
    ['0', '1']
    """
    if not vmax > 0:
        return [0.0, 1.0], ["0", "1"]
    exp = math.floor(math.log10(vmax / most))
    for mult in (1, 2, 2.5, 5, 10):
        step = mult * 10.0**exp
        if step * most >= vmax:
            break
    if mult == 10:  # 10 x 10^exp is 1 x 10^(exp+1)
        mult, exp = 1, exp + 1
    n = math.ceil(vmax / step - 1e-9)
    decimals = max(0, -exp + (1 if mult == 2.5 else 0))
    ticks = [round(k * step, decimals + 2) for k in range(n + 1)]
    return ticks, [f"{t:.{decimals}f}" for t in ticks]


def write_chart(path, results, ran, queries, db_bytes, title, label=str):
    """Throughput (database size / response time) per query per mode, as
    PG-Strom's write-ups chart it; `label` names a query under its bars.
    Returns the path, or None without Pillow."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        return None
    W, H, left, bottom, top = 1400, 640, 80, 60, 60
    img = Image.new("RGB", (W, H), "white")
    d = ImageDraw.Draw(img)
    vals = {(m, q): gbps(db_bytes, results[(m, q)].median) or 0 for m in ran for q in queries}
    ticks, tick_labels = axis_ticks(max(vals.values(), default=0) * 1.05)
    vmax = ticks[-1]
    plot_h = H - bottom - top
    d.text((left, 15), f"{title}: query execution throughput = database size / response time [GB/s]", fill="black")
    for v, text in zip(ticks, tick_labels, strict=True):  # grid and axis labels
        y = H - bottom - plot_h * v / vmax
        d.line([(left, y), (W - 20, y)], fill=(220, 220, 220))
        d.text((5, y - 6), text, fill="black")
    group_w = (W - left - 20) / len(queries)
    bar_w = group_w * 0.8 / max(len(ran), 1)
    for i, q in enumerate(queries):
        x0 = left + i * group_w + group_w * 0.1
        for j, m in enumerate(ran):
            h = plot_h * vals[(m, q)] / vmax
            d.rectangle([x0 + j * bar_w, H - bottom - h, x0 + (j + 1) * bar_w - 2, H - bottom], fill=colour(m))
        d.text((x0 + group_w * 0.25, H - bottom + 8), label(q), fill="black")
    x = left
    for m in ran:  # legend
        d.rectangle([x, H - 25, x + 12, H - 13], fill=colour(m))
        d.text((x + 16, H - 25), m, fill="black")
        x += 30 + 8 * len(m)
    img.save(path)
    return path
