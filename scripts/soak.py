#!/usr/bin/env python3
"""scripts/soak.py - random-query soak with sqlsmith, pg_strom on vs off.

    scripts/soak.py [--db pgstrom_diff] [--queries 2000] [--seed 1] [--timeout-ms 2000]

sqlsmith (the Debian package) generates --queries random statements against
the database's own tables (catalogs excluded; the differential harness's
database by default: SSB + diff_types).  Each statement runs three times,
each inside a transaction that is rolled back: pg_strom off, off again, on.
The run with pg_strom on must return the same rows (pgcompare's rule; in a
statement with a float aggregate, fractional values within a relative 1e-9) or
the same error as the run with pg_strom off.  When they disagree, the
statement counts as nondeterministic (not a difference) if it samples
without REPEATABLE, if pg_strom runs no node in its plan, if a query level
has a LIMIT or OFFSET without an ORDER BY of its own (it keeps whichever
rows a scan gives first), if it calls a function whose value depends on
the session or the moment (pg_backend_pid, now, random, nextval, the
statistics functions, ...: each run is its own session), or if two more runs with pg_strom off disagree
with the first (volatile functions).  A statement where PostgreSQL raises a float
overflow in an aggregate and pg_strom returns rows is the documented
order-dependent case of docs/gpupreagg.md (infinite inputs mixed with
overflowing finite ones): printed as "known", counted apart.  A
lost connection is a crash and stops the soak.
Prints every difference with its statement, then a summary line; exit
status 1 on any difference or crash.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgcompare as pc  # noqa: E402

TABLESAMPLE_RE = re.compile(r"tablesample\s+\w+\s*\([^)]*\)(?!\s*repeatable)", re.I)
LEVEL_TOKEN_RE = re.compile(r"'(?:[^']|'')*'|\(|\)|\blimit\b|\boffset\b|\border\s+by\b", re.I)
# functions whose value differs between the runs' sessions or moments
# (each run is its own session): a statement that calls one may fail in
# one run and not in another by chance alone (a row updated into a hash
# partition by pg_backend_pid()); the runs with pg_strom off may agree
# with each other and not with the run with pg_strom on
SESSION_FN_RE = re.compile(r"\b(pg_backend_pid|inet_client_port|pg_current_xact_id(_if_assigned)?"
                           r"|txid_current(_if_assigned|_snapshot)?|pg_current_snapshot|pg_my_temp_schema"
                           r"|now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday"
                           r"|random|random_normal|gen_random_uuid|uuidv[47]|setseed|nextval|currval|lastval"
                           r"|pg_stat_get_\w+|pg_stat_\w+|pg_postmaster_start_time|pg_conf_load_time)\s*\(", re.I)
FLOAT_OVERFLOW_RE = re.compile(r"value out of range: (overflow|underflow)")
FLOAT_AGG_RE = re.compile(r"\b(sum|avg|stddev|stddev_pop|stddev_samp|variance|var_pop|var_samp"
                          r"|corr|covar_pop|covar_samp|regr_\w+)\s*\(", re.I)
CRASH_MARKS = ("server closed the connection", "terminating connection", "connection to server",
               "no connection to the server")


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SQLSMITH = {"cmd": None, "env": None}


def limit_without_order(sql):
    """True when a query level (the statement, or a subquery in
    parentheses) has a LIMIT or OFFSET and no ORDER BY of its own: which
    rows it keeps depends on the order a scan returns them in (an ORDER BY
    inside OVER (...) or an aggregate's parentheses is another level's)."""
    levels = [[False, False]]
    found = False
    for m in LEVEL_TOKEN_RE.finditer(sql):
        t = m.group(0).lower()
        if t.startswith("'"):
            continue
        if t == "(":
            levels.append([False, False])
        elif t == ")":
            if len(levels) > 1:
                limit, order = levels.pop()
                found = found or (limit and not order)
        elif t in ("limit", "offset"):
            levels[-1][0] = True
        else:
            levels[-1][1] = True
    return found or any(limit and not order for limit, order in levels)


def find_sqlsmith():
    """sqlsmith from PATH, else the copy gpu-bundle.sh carries (Debian's
    binary with its libraries; libpq from the PostgreSQL installation)."""
    if shutil.which("sqlsmith"):
        SQLSMITH["cmd"] = "sqlsmith"
        return True
    carried = os.path.join(ROOT, ".carry", "sqlsmith")
    if os.path.exists(os.path.join(carried, "sqlsmith")):
        libdir = subprocess.run(["pg_config", "--libdir"], capture_output=True, text=True).stdout.strip()
        SQLSMITH["cmd"] = os.path.join(carried, "sqlsmith")
        SQLSMITH["env"] = dict(os.environ, LD_LIBRARY_PATH=f"{carried}/lib:{libdir}")
        return True
    return False


def generate(a):
    target = f"host={os.environ.get('PGHOST', '')} port={os.environ.get('PGPORT', '5432')} dbname={a.db} " \
             f"user={os.environ.get('PGUSER', '')}"
    p = subprocess.run([SQLSMITH["cmd"], f"--target={target}", "--exclude-catalog", "--dry-run",
                        f"--max-queries={a.queries}", f"--seed={a.seed}"], capture_output=True, text=True,
                       env=SQLSMITH["env"])
    if p.returncode != 0:
        raise SystemExit(f"soak: sqlsmith failed: {p.stderr.strip()[-500:]}")
    # statements end with ';' at a line end; continuation lines are indented
    stmts = [s.strip() for s in re.split(r";\n(?=[A-Za-z(])", p.stdout) if s.strip()]
    return [s.rstrip(";") for s in stmts]


# With pg_strom on, the device costs are zeroed so that every scan the
# device can take is offloaded: the soak is about the offloaded paths.
ON_SETTINGS = "SET pg_strom.gpu_setup_cost = 0;\nSET pg_strom.gpu_context_cost = 0;\nSET pg_strom.gpu_tuple_cost = 0;\n"


def run_once(sql, enabled, timeout_ms, explain=False):
    """('rows', rows) | ('error', first line) | ('crash', message)."""
    script = (f"SET statement_timeout = {timeout_ms};\nSET pg_strom.enabled = {enabled};\n"
              + (ON_SETTINGS if enabled == "on" else "")
              + f"BEGIN;\n{'EXPLAIN (COSTS OFF) ' if explain else ''}{sql};\nROLLBACK;\n")
    p = pc.run_psql(script)
    # a connection refused at start-up (FATAL: out of shared memory while
    # the previous session, which took thousands of advisory locks, still
    # exits) is not a crash of a running statement: try again, once
    if p.returncode != 0 and "psql: error: connection to server" in p.stderr and "FATAL:" in p.stderr:
        time.sleep(1)
        p = pc.run_psql(script)
    if p.returncode == 0:
        return "rows", pc.parse_csv(p.stdout)[1]
    err = p.stderr.strip()
    if any(m in err for m in CRASH_MARKS):
        return "crash", err
    first = next((line for line in err.splitlines() if "ERROR:" in line), err.splitlines()[0] if err else "error")
    return "error", first.split("ERROR:", 1)[-1].strip()


def fractional(v):
    return v is not None and any(ch in v for ch in ".eE") and pc._floatish(v)


def same(x, y, sql=""):
    """Equal results.  A statement with a float aggregate (FLOAT_AGG_RE)
    may differ in the last digits of its fractional values, as summation
    order does: those compare with pgcompare's relative tolerance (1e-9);
    integers and text stay exact."""
    if x[0] != y[0]:
        return False
    if x[0] != "rows":
        return x[1] == y[1]
    if pc.compare_rows(x[1], y[1]) is None:
        return True
    if not FLOAT_AGG_RE.search(sql) or len(x[1]) != len(y[1]):
        return False
    ncols = max((len(r) for r in x[1] + y[1]), default=0)
    # columns whose values are fractional numbers in every non-NULL row of both
    cols = {c for c in range(ncols)
            if all(r[c] is None or fractional(r[c]) for r in x[1] + y[1] if c < len(r))}
    return pc.compare_rows(x[1], y[1], cols) is None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default="pgstrom_diff")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout-ms", type=int, default=2000, help="statement_timeout of each run (default 2000)")
    a = ap.parse_args()
    if not find_sqlsmith():
        print("soak: sqlsmith is not installed (apt-get install sqlsmith; scripts/setup.sh does)")
        return 1
    os.environ["PGDATABASE"] = a.db
    check = run_once("SELECT 1", "on", a.timeout_ms)
    if check[0] != "rows":
        print(f"soak: the settings of the pg_strom-on runs fail: {check[1]}")
        return 1
    t0 = time.time()
    stmts = generate(a)
    counts = {"compared": 0, "nondeterministic": 0, "timeout": 0, "errors_alike": 0, "offloaded": 0, "known": 0}
    diffs = []
    for n, sql in enumerate(stmts):
        off1 = run_once(sql, "off", a.timeout_ms)
        on = run_once(sql, "on", a.timeout_ms)
        if "crash" in (off1[0], on[0]):
            which = "on" if on[0] == "crash" else "off"
            print(f"soak: CRASH with pg_strom {which} at statement {n}:\n{sql}\n{(on if which == 'on' else off1)[1]}")
            return 1
        if any(r[0] == "error" and "statement timeout" in r[1] for r in (off1, on)):
            counts["timeout"] += 1
            continue
        plan = run_once(sql, "on", a.timeout_ms, explain=True)
        offloaded = plan[0] == "rows" and any("Custom Scan (Gpu" in (r[0] or "") for r in plan[1])
        if same(off1, on, sql):
            counts["compared"] += 1
            counts["offloaded"] += offloaded
            counts["errors_alike"] += off1[0] == "error"
            continue
        # random sampling without REPEATABLE, or rows that differ again
        # between runs with pg_strom off, or a plan in which pg_strom runs
        # nothing: the statement's result is not a function of the data
        # a LIMIT or OFFSET without an ORDER BY of its query level takes
        # whichever rows come first (a sequential scan may start mid-table:
        # synchronize_seqscans)
        unordered_limit = off1[0] == on[0] == "rows" and limit_without_order(sql)
        if TABLESAMPLE_RE.search(sql) or SESSION_FN_RE.search(sql) or not offloaded or unordered_limit or not all(
                same(off1, run_once(sql, "off", a.timeout_ms), sql) for _ in range(2)):
            counts["nondeterministic"] += 1
            continue
        # the documented float aggregate overflow difference
        # (docs/gpupreagg.md): reported, counted apart, not a pass; with
        # pg_strom the statement may then fail later, on another error
        if off1[0] == "error" and FLOAT_OVERFLOW_RE.search(off1[1]) and on[0] in ("rows", "error") \
                and FLOAT_AGG_RE.search(sql):
            counts["known"] += 1
            print(f"soak: known difference (float aggregate overflow, docs/gpupreagg.md) at statement {n}", flush=True)
            continue
        counts["compared"] += 1
        counts["offloaded"] += offloaded
        diffs.append((n, sql, off1, on))
        print(f"soak: DIFFERENCE at statement {n} (seed {a.seed}):\n{sql};\n  pg_strom off: {_show(off1)}\n"
              f"  pg_strom on:  {_show(on)}", flush=True)
    print(f"soak: {len(stmts)} sqlsmith statements (seed {a.seed}): {counts['compared']} compared "
          f"({counts['offloaded']} with a pg_strom node, {counts['errors_alike']} failing alike), "
          f"{counts['nondeterministic']} nondeterministic, "
          f"{counts['known']} known (float aggregate overflow), {counts['timeout']} over {a.timeout_ms} ms; "
          f"{len(diffs)} differences, 0 crashes, "
          f"{time.time() - t0:.0f} s")
    return 1 if diffs else 0


def _show(r):
    if r[0] == "rows":
        return f"{len(r[1])} rows" + (f", first {r[1][0]!r}" if r[1] else "")
    return f"ERROR {r[1]}"


if __name__ == "__main__":
    sys.exit(main())
