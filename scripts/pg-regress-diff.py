#!/usr/bin/env python3
"""scripts/pg-regress-diff.py - PostgreSQL's own regression SQL with
pg_strom off and on, compared statement by statement (docs/testing.md,
"pg-regress tier").

    scripts/pg-regress-diff.py [--only NAME[,NAME...]] [--shapes LIST]
                               [--planner-shapes] [--port N] [--keep]

The files are PostgreSQL 18.6's src/test/regress (scripts/pg-regress-fetch.sh
caches them outside the clone).  test/pg-regress/files names the set-up
files and the compared files.  The set-up files run once, with
pg_strom.enabled = off, in a template cluster ($RUN/pg-regress/base, made
by scripts/cluster.sh); each pass then copies its data directory twice,
one cluster per mode, started side by side:
  off: pg_strom.enabled = off
  on:  pg_strom.enabled = on, pg_strom.gpu_setup_cost = 0,
       pg_strom.heap_gather_cost = 0, pg_strom.gpu_context_cost = 0,
       pg_strom.gpu_operator_cost and gpu_tuple_cost a GPU's
       (device plans forced), and auto_explain logging every plan, which
       counts the statements whose plan has a GpuScan, GpuJoin or GpuPreAgg
Both modes plan with parallel plans encouraged (parallel_setup_cost = 0,
parallel_tuple_cost = 0, min_parallel_table_scan_size = 0,
min_parallel_index_scan_size = 0) and jit off, so that the only difference
between them is pg_strom.  Each compared file runs in both, in
parallel_schedule order, as pg_regress runs it (`psql -X -a -q` reading
the file on stdin, PGTZ, PGDATESTYLE, lc_* as pg_regress sets them); the
outputs are cut into statements (scripts/pgregress_split.py) and compared:
  same       identical text (a "CONTEXT:  parallel worker" line aside: a
             parallel plan's error comes from the leader or a worker)
  explain    the statement shows a plan (EXPLAIN, a function wrapping it,
             a QUERY PLAN column): only its ERROR lines are compared
  order      the same rows in another order, and the statement has no
             ORDER BY at its top level, or its ORDER BY names output
             columns (or positions) whose values come in the same order
             in both: only rows whose sort keys tie were swapped
  float      numbers of at most 17 significant digits equal within a
             relative 1e-12 (float sums added in another order)
  excepted   listed in test/pg-regress/exceptions (file, fingerprint,
             reason)
  slow       the statement ran past statement_timeout with pg_strom on
             only: reported, not a failure (the "on" mode prices a GPU's
             costs whatever engine runs the plans: on the CPU engine a
             device nested loop over 10^8 pairs of join.sql takes tens of
             seconds, past the timeout on a loaded 2-core machine)
  DIFF       anything else
  CRASH      the connection was lost, or the server log says a process
             died (terminated by signal, PANIC, reinitializing); the rest
             of the file is not compared
Passes (--shapes, default "default"): default, geqo (geqo_threshold = 2),
nohash, nomerge, nonestloop (that join method disabled), each also as
NAME-serial (max_parallel_workers_per_gather = 0), service (the CPU
engine in the GPU service process: pg_strom.cpu_engine_in_service), and
rewrites (pg_strom.debug_prefer_rewrites: every query rewrite kept where
it applies) and exchange (pg_strom.debug_prefer_parallel_finalize, with
parallel plans made cheap: every parallel GpuPreAgg's partial groups
exchanged between the processes); --planner-shapes runs all thirteen.  A pass's settings go into both modes' postgresql.conf.
Full outputs and per-statement diffs go to $results/pg-regress/PASS/.
Exit status 1 on any DIFF or CRASH, 2 when the run itself fails.
"""

import argparse
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.dont_write_bytecode = True  # no scripts/__pycache__ in the checkout
import pgregress_split as ps  # noqa: E402

SHAPES = {
    "default": [],
    "geqo": ["geqo = on", "geqo_threshold = 2"],
    "nohash": ["enable_hashjoin = off"],
    "nomerge": ["enable_mergejoin = off"],
    "nonestloop": ["enable_nestloop = off"],
}
for _k in list(SHAPES):
    SHAPES[_k + "-serial"] = SHAPES[_k] + ["max_parallel_workers_per_gather = 0"]
# without a GPU: the CPU engine run by the GPU service process instead of
# the backend (on a GPU machine the service's GPU runs every pass)
SHAPES["service"] = ["pg_strom.cpu_engine_in_service = on"]
# the query rewrites (correlated sub-queries as a grouped join, aggregation
# below joins) kept wherever they apply, whatever they cost: their answers
# against PostgreSQL's on every query of the suite
SHAPES["rewrites"] = ["pg_strom.debug_prefer_rewrites = on"]
# a parallel GpuPreAgg's partial groups exchanged between the processes,
# each finalizing its share, kept wherever it applies (parallel plans made
# cheap so that there are parallel GpuPreAggs to exchange)
SHAPES["exchange"] = ["pg_strom.debug_prefer_parallel_finalize = on", "parallel_setup_cost = 0",
                      "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0"]
ALL_SHAPES = ["default", "default-serial", "geqo", "geqo-serial", "nohash", "nohash-serial",
              "nomerge", "nomerge-serial", "nonestloop", "nonestloop-serial", "service", "rewrites",
              "exchange"]

COMMON_CONF = """
# --- pg-regress-diff.py: both modes
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
min_parallel_index_scan_size = 0
max_parallel_workers_per_gather = 2
jit = off
statement_timeout = '120s'
"""
MODE_CONF = {
    "off": "pg_strom.enabled = off\n",
    "on": """pg_strom.enabled = on
pg_strom.gpu_setup_cost = 0
pg_strom.heap_gather_cost = 0
pg_strom.gpu_context_cost = 0
pg_strom.gpu_operator_cost = 0.00015625
pg_strom.gpu_tuple_cost = 0.002
session_preload_libraries = 'auto_explain'
auto_explain.log_min_duration = 0
""",
}
CRASH_OUT = re.compile(r"server closed the connection unexpectedly|terminating connection because of crash"
                       r"|connection to server was lost|no connection to the server")
CRASH_LOG = re.compile(r"terminated by signal|was terminated by exception|PANIC:"
                       r"|all server processes terminated; reinitializing|exited with exit code [1-9]")
# the statement ran past statement_timeout (psql's line for it)
TIMEOUT_ERR = "ERROR:  canceling statement due to statement timeout"
# a parallel worker exits with code 1 whenever its query fails: no crash
NOT_CRASH_LOG = re.compile(r'"parallel worker" \(PID \d+\) exited with exit code 1')
SEP = re.compile(r"^-+(\+-+)*$")
ROWS = re.compile(r"^\(\d+ rows?\)$")
NUM = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
GPU_NODE = re.compile(r"Gpu(Scan|Join|PreAgg)")


def sh_env():
    """The variables of scripts/env.sh."""
    out = subprocess.run(["bash", "-c", '. "$1/scripts/env.sh" && printf "%s\\n" "$RUN" "$PG_BINDIR" '
                          '"$PG_OS_USER" "$PG_CONFIG" "${PGSTROM_RESULTS:-$PGSTROM_ROOT/results}"', "-", ROOT],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    # (out ends with the empty string after the last newline: not strict)
    return dict(zip(["RUN", "PG_BINDIR", "PG_OS_USER", "PG_CONFIG", "RESULTS"], out, strict=False))


def read_list(path, schedule):
    setup, tests = [], []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        kw, _, names = line.partition(":")
        {"setup": setup, "test": tests}[kw.strip()].extend(names.split())
    order = {}
    for line in open(schedule):
        if line.startswith("test:"):
            for n in line.split(":", 1)[1].split():
                order.setdefault(n, len(order))
    for n in setup + tests:
        if n not in order:
            sys.exit(f"pg-regress: {n} is not in parallel_schedule")
    return sorted(setup, key=order.get), sorted(tests, key=order.get)


def read_exceptions(path):
    exc = {}
    if not os.path.exists(path):
        return exc
    for line in open(path):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split(None, 2)
        if len(parts) < 3:
            sys.exit(f"pg-regress: {path}: needs FILE FINGERPRINT REASON: {s}")
        exc[(parts[0], parts[1])] = parts[2]
    return exc


class Cluster:
    def __init__(self, h, name, port):
        self.h, self.name, self.port = h, name, port
        self.dir = os.path.join(h.work, name)
        self.log = os.path.join(self.dir, "server.log")

    def env(self, builddir):
        e = dict(os.environ)
        for k in ("PGDATABASE", "PGSERVICE", "PGPASSWORD", "LC_ALL", "LANGUAGE", "PGCLIENTENCODING"):
            e.pop(k, None)
        e.update(PGHOST=os.path.join(self.dir, "sock"), PGPORT=str(self.port), PGUSER=self.h.pguser,
                 PGAPPNAME="pg_regress", PGTZ="America/Los_Angeles", PGDATESTYLE="Postgres, MDY",
                 LC_MESSAGES="C", PG_ABS_SRCDIR=self.h.src, PG_ABS_BUILDDIR=builddir,
                 PG_LIBDIR=self.h.libdir, PG_DLSUFFIX=".so")
        e["PATH"] = self.h.bindir + ":" + e.get("PATH", "")
        return e

    def cluster_sh(self, cmd, extra_conf=None):
        e = dict(os.environ)
        if extra_conf is not None:
            e["PGSTROM_EXTRA_CONF"] = extra_conf
        r = subprocess.run([os.path.join(ROOT, "scripts/cluster.sh"), cmd, self.dir, str(self.port)],
                           env=e, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cluster.sh {cmd} {self.dir}: {r.stdout}{r.stderr}")

    def psql(self, sql, db="postgres"):
        return subprocess.run([os.path.join(self.h.bindir, "psql"), "-XAtq", "-v", "ON_ERROR_STOP=1",
                               "-d", db, "-c", sql], env=self.env(self.h.src),
                              capture_output=True, text=True)

    def wait_ready(self, seconds=90):
        for _ in range(seconds * 2):
            if self.psql("SELECT 1").returncode == 0:
                return True
            time.sleep(0.5)
        return False

    def log_size(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_since(self, off):
        try:
            with open(self.log, "rb") as f:
                f.seek(off)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


def as_pg_user_owned(h, path):
    if os.getuid() == 0:
        shutil.chown(path, h.pguser)


def count_plans(logtext):
    """(plans logged by auto_explain, of which with a pg_strom node)."""
    total = gpu = 0
    cur = None
    for line in logtext.split("\n"):
        if "duration:" in line and "plan:" in line:
            if cur is not None:
                gpu += bool(GPU_NODE.search(cur))
            total += 1
            cur = ""
        elif cur is not None and line.startswith("\t"):
            cur += line
        elif cur is not None:
            gpu += bool(GPU_NODE.search(cur))
            cur = None
    if cur is not None:
        gpu += bool(GPU_NODE.search(cur))
    return total, gpu


def run_file(cl, sqlfile, outfile, builddir, timeout):
    off = cl.log_size()
    t = time.time()
    timed_out = False
    with open(sqlfile, "rb") as fin, open(outfile, "wb") as fout:
        p = subprocess.Popen([os.path.join(cl.h.bindir, "psql"), "-X", "-a", "-q", "-d", "regression"],
                             stdin=fin, stdout=fout, stderr=subprocess.STDOUT, env=cl.env(builddir))
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            p.kill()
            p.wait()
            cl.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = 'regression' AND pid <> pg_backend_pid()")
    logtext = cl.log_since(off)
    crash_lines = [line for line in logtext.split("\n") if CRASH_LOG.search(line) and not NOT_CRASH_LOG.search(line)]
    if crash_lines:
        cl.wait_ready()
    return dict(seconds=time.time() - t, timed_out=timed_out, crash_log=crash_lines,
                plans=count_plans(logtext))


def blocks(lines):
    """An output as blocks: (header line, separator, row lines) for each
    result table, (line, None, None) for every other line."""
    i, n = 0, len(lines)
    while i < n:
        if i + 1 < n and SEP.match(lines[i + 1]) and lines[i + 1]:
            j = i + 2
            while j < n and not ROWS.match(lines[j]):
                j += 1
            yield lines[i], lines[i + 1], lines[i + 2:j]
            i = j
        else:
            yield lines[i], None, None
            i += 1


def sort_rows(lines):
    out = []
    for head, sep, rows in blocks(lines):
        out += [head] if sep is None else [head, sep, *sorted(rows)]
    return out


def sig_digits(tok):
    m = tok.lstrip("+-").split("e")[0].split("E")[0].replace(".", "").lstrip("0")
    return len(m)


def close_lines(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        px, py = NUM.split(x), NUM.split(y)
        if len(px) != len(py):
            return False
        for k, (u, v) in enumerate(zip(px, py, strict=True)):
            if u == v:
                continue
            if k % 2 == 0:
                return False
            if not (any(c in u for c in ".eE") and any(c in v for c in ".eE")):
                return False
            if sig_digits(u) > 17 or sig_digits(v) > 17:
                return False
            fu, fv = float(u), float(v)
            if abs(fu - fv) > 1e-12 * max(abs(fu), abs(fv)):
                return False
    return True


_ORDER_TAIL = re.compile(r"\b(limit|offset|fetch|for\s+(update|share|no\s+key\s+update|key\s+share))\b", re.I)
_COLUMN_REF = re.compile(r"[a-z_][\w$]*(\.[a-z_][\w$]*)?", re.I)


def order_keys(sql):
    """The top-level ORDER BY items of `sql` as output column names (lower
    case) or 1-based positions; None where an item is anything else (an
    expression, a quoted name): then ties cannot be told apart."""
    # (a marker before each parenthesis survives top_level, which drops
    # what is inside: a function call or sub-expression shows)
    top = ps.top_level(ps.strip_comments(sql).replace("(", "\x01("))
    found = list(re.finditer(r"\border\s+by\b", top, re.I))
    if not found:
        return None
    tail = top[found[-1].end():].split(";")[0]
    t = _ORDER_TAIL.search(tail)
    if t:
        tail = tail[:t.start()]
    keys = []
    for item in tail.split(","):
        item = re.sub(r"\b(asc|desc|nulls\s+first|nulls\s+last)\b", "", item, flags=re.I).strip()
        if re.fullmatch(r"\d+", item):
            keys.append(int(item))
        elif _COLUMN_REF.fullmatch(item):
            keys.append(item.split(".")[-1].lower())
        else:
            return None
    return keys or None


def ties_only(a, b, keys):
    """True when the result tables of outputs `a` and `b` list the same
    ORDER BY key values in the same order, and each run of tied keys holds
    the same rows: the outputs differ only in how ties were broken."""
    ta, tb = tables(a), tables(b)
    if len(ta) != len(tb) or not ta:
        return False
    for (head_a, rows_a), (head_b, rows_b) in zip(ta, tb, strict=True):
        if head_a != head_b or len(rows_a) != len(rows_b):
            return False
        cols = [c.strip().lower() for c in head_a.split("|")]
        idx = []
        for k in keys:
            if isinstance(k, int):
                if not 1 <= k <= len(cols):
                    return False
                idx.append(k - 1)
            elif cols.count(k) == 1:
                idx.append(cols.index(k))
            else:
                return False

        def key_runs(rows, cols=cols, idx=idx):
            runs = []
            for r in rows:
                f = r.split("|")
                if len(f) != len(cols):
                    return None  # a value holds "|": cannot tell columns apart
                k = tuple(f[i].strip() for i in idx)
                if runs and runs[-1][0] == k:
                    runs[-1][1].append(r)
                else:
                    runs.append((k, [r]))
            return [(k, sorted(rs)) for k, rs in runs]

        ra, rb = key_runs(rows_a), key_runs(rows_b)
        if ra is None or ra != rb:
            return False
    return True


def tables(lines):
    """The result tables of an output: (header line, row lines) each."""
    return [(head, rows) for head, sep, rows in blocks(lines) if sep is not None]


def plan_functions(us):
    """Names of the functions the file defines that run EXPLAIN (wrappers
    that filter or pick fields of a plan, e.g. join_hash's
    hash_join_batches)."""
    names = set()
    for u in us:
        s = ps.strip_comments(u.sql)
        m = re.search(r"create\s+(?:or\s+replace\s+)?function\s+([\w.\"]+)", s, re.I)
        if m and re.search(r"\bexplain\b", s, re.I):
            names.add(m.group(1).split(".")[-1].strip('"').lower())
    return names


def is_plan(unit, lines, planfns=()):
    s = ps.strip_comments(unit.sql)
    if re.search(r"explain", s, re.I):
        return True
    if any(re.search(r"\b" + re.escape(f) + r"\s*\(", s, re.I) for f in planfns):
        return True
    return any(line.strip() == "QUERY PLAN" for line in lines[:3])


def classify(unit, a, b, planfns=()):
    if a == b:
        return "same", None
    # an error of a parallel plan is raised by whichever process meets
    # its row first, the leader or a worker (a race in both modes)
    a = [line for line in a if line != "CONTEXT:  parallel worker"]
    b = [line for line in b if line != "CONTEXT:  parallel worker"]
    if a == b:
        return "same", None
    if any(CRASH_OUT.search(line) for line in a + b):
        return "CRASH", "the connection was lost"
    if TIMEOUT_ERR in b and TIMEOUT_ERR not in a:
        return "slow", "pg_strom on ran past statement_timeout"
    if is_plan(unit, a + b, planfns):
        ea = [line for line in a if line.startswith("ERROR:")]
        eb = [line for line in b if line.startswith("ERROR:")]
        if ea == eb:
            return "explain", None
        return "DIFF", "a plan statement's errors differ"
    sa, sb = sort_rows(a), sort_rows(b)
    ordered = re.search(r"\border\s+by\b", ps.top_level(unit.sql), re.I)
    if sa == sb:
        if not ordered:
            return "order", None
        keys = order_keys(unit.sql)
        if keys and ties_only(a, b, keys):
            return "order", None
        return "DIFF", "row order differs under ORDER BY"
    if close_lines(a, b):
        return "float", None
    if not ordered and close_lines(sa, sb):
        return "float", None
    return "DIFF", None


def compare_file(name, sqltext, out_off, out_on, exceptions, diffout, tolout):
    us = ps.units(sqltext)
    r_off, f_off = ps.align(us, out_off)
    r_on, f_on = ps.align(us, out_on)
    counts = {}
    problems = []
    crashed = False
    planfns = plan_functions(us)
    for k, u in enumerate(us):
        if not ps.normalise_sql(u.sql):
            continue
        if crashed:
            counts["after crash"] = counts.get("after crash", 0) + 1
            continue
        a, b = r_off[k], r_on[k]
        if f_off[k] != f_on[k]:
            # echoed in one mode only: psql stopped (lost connection)
            lost = any(CRASH_OUT.search(line) for line in out_on.split("\n") + out_off.split("\n"))
            st, why = ("CRASH" if lost else "DIFF"), "echoed in one mode only"
        else:
            st, why = classify(u, a, b, planfns)
        fp = u.fingerprint()
        if st == "DIFF" and (name, fp) in exceptions:
            st = "excepted"
        counts[st] = counts.get(st, 0) + 1
        if st in ("order", "float"):
            body = "\n".join(difflib.unified_diff(a, b, "off", "on", lineterm="", n=1))
            tolout.write(f"{name}.sql:{u.first + 1} fingerprint {fp}: {st}\n{u.sql}\n{body}\n\n")
        if st in ("DIFF", "CRASH", "excepted", "slow"):
            head = f"{name}.sql:{u.first + 1} fingerprint {fp}: {st}" + (f" ({why})" if why else "")
            if st == "excepted":
                head += f" [{exceptions[(name, fp)]}]"
            body = "\n".join(difflib.unified_diff(a, b, "off", "on", lineterm="", n=3))
            diffout.write(head + "\n" + u.sql + "\n" + body + "\n\n")
            if st != "excepted":
                problems.append((head, u.sql, a if st != "slow" else [], b if st != "slow" else []))
        if st == "CRASH":
            crashed = True
    return counts, problems


def run_pass(args, h, base, shape, pres, test_files, regress):
    """One pass: copy the template into an off and an on cluster, run the
    files in both, keep the outputs in pres/{off,on}/; the per-file stats."""
    clusters = {}
    for mode, port in (("off", args.port + 1), ("on", args.port + 2)):
        c = Cluster(h, f"{shape}-{mode}", port)
        c.cluster_sh("stop") if os.path.exists(os.path.join(c.dir, "data", "PG_VERSION")) else None
        shutil.rmtree(c.dir, ignore_errors=True)
        os.makedirs(os.path.join(c.dir, "sock"))
        os.makedirs(os.path.join(c.dir, "build", "results"))
        subprocess.run(["cp", "-a", os.path.join(base.dir, "data"), os.path.join(c.dir, "data")], check=True)
        for d in (c.dir, os.path.join(c.dir, "sock"), os.path.join(c.dir, "build"),
                  os.path.join(c.dir, "build", "results")):
            as_pg_user_owned(h, d)
        with open(os.path.join(c.dir, "data", "postgresql.conf"), "a") as f:
            f.write(f"\n# --- pg-regress-diff.py: mode {mode}, pass {shape}\n"
                    f"port = {port}\nunix_socket_directories = '{os.path.join(c.dir, 'sock')}'\n"
                    + MODE_CONF[mode] + "\n".join(SHAPES[shape]) + "\n")
        c.cluster_sh("start")
        clusters[mode] = c
        os.makedirs(os.path.join(pres, mode))
    stats = {"off": {}, "on": {}}

    def run_mode(mode):
        c = clusters[mode]
        for f in test_files:
            stats[mode][f] = run_file(c, os.path.join(regress, "sql", f + ".sql"),
                                      os.path.join(pres, mode, f + ".out"),
                                      os.path.join(c.dir, "build"), args.file_timeout)
    if args.serial_modes:
        run_mode("off")
        run_mode("on")
    else:
        th = [threading.Thread(target=run_mode, args=(m,)) for m in ("off", "on")]
        for t in th:
            t.start()
        for t in th:
            t.join()
    if not args.keep:
        for c in clusters.values():
            c.cluster_sh("stop")

    json.dump(stats, open(os.path.join(pres, "stats.json"), "w"))
    return stats


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated file names (after the set-up)")
    ap.add_argument("--shapes", default="default", help="comma-separated passes: " + ", ".join(ALL_SHAPES))
    ap.add_argument("--planner-shapes", action="store_true", help="all passes")
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGSTROM_PG_REGRESS_PORT", 54340)),
                    help="first of three ports (template, off, on)")
    ap.add_argument("--src", help="src/test/regress folder (default: scripts/pg-regress-fetch.sh)")
    ap.add_argument("--file-timeout", type=int, default=300, help="seconds a file may run")
    ap.add_argument("--keep", action="store_true", help="leave the clusters running")
    ap.add_argument("--reuse-setup", action="store_true", help="keep the template of an earlier run")
    ap.add_argument("--serial-modes", action="store_true", help="run the two modes one after the other")
    ap.add_argument("--compare-only", action="store_true",
                    help="compare the outputs of the last run again (after editing the exceptions)")
    args = ap.parse_args()
    t0 = time.time()

    v = sh_env()
    if args.src:
        regress = os.path.abspath(args.src)
    else:
        r = subprocess.run([os.path.join(ROOT, "scripts/pg-regress-fetch.sh")], capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr, end="")
            print("pg-regress: cannot fetch PostgreSQL's regression files")
            return 2
        regress = os.path.join(r.stdout.strip(), "regress")
    source = ""
    try:
        source = open(os.path.join(os.path.dirname(regress), "SOURCE")).read().strip()
    except OSError:
        pass
    setup_files, test_files = read_list(os.path.join(ROOT, "test/pg-regress/files"),
                                        os.path.join(regress, "parallel_schedule"))
    if args.only:
        only = args.only.split(",")
        test_files = [f for f in test_files if f in only]
    shapes = ALL_SHAPES if args.planner_shapes else args.shapes.split(",")
    for s in shapes:
        if s not in SHAPES:
            sys.exit(f"pg-regress: unknown pass {s} (known: {', '.join(ALL_SHAPES)})")
    exceptions = read_exceptions(os.path.join(ROOT, "test/pg-regress/exceptions"))

    class H:
        pass
    h = H()
    h.work = os.path.join(v["RUN"], "pg-regress")
    h.bindir, h.pguser = v["PG_BINDIR"], v["PG_OS_USER"]
    results = os.path.join(v["RESULTS"], "pg-regress")
    os.makedirs(h.work, exist_ok=True)
    os.chmod(h.work, 0o755)
    # the server reads data/*.data (COPY) and loads regress.so: copies it can reach
    h.src = os.path.join(h.work, "src")
    h.libdir = os.path.join(h.work, "lib")
    base = Cluster(h, "base", args.port)
    reuse = (args.reuse_setup or args.compare_only) and os.path.exists(os.path.join(base.dir, "data", "PG_VERSION"))
    if not reuse:
        for d in (h.src, h.libdir):
            shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(os.path.join(regress, "data"), os.path.join(h.src, "data"))
        os.makedirs(h.libdir)
        def cfg(*a):
            return subprocess.run([v["PG_CONFIG"], *a], capture_output=True, text=True).stdout.strip()

        # the server's code-generation flags; its warning flags may be another
        # compiler's
        flags = [x for x in cfg("--cflags").split() if not x.startswith("-W")]
        cc = subprocess.run(["gcc", "-shared", "-fPIC", *flags, "-I" + cfg("--includedir-server"),
                             "-I" + cfg("--includedir"), os.path.join(regress, "regress.c"),
                             "-o", os.path.join(h.libdir, "regress.so")], capture_output=True, text=True)
        if cc.returncode != 0:
            print("pg-regress: regress.so did not build (its functions will fail in both modes):")
            print(cc.stderr[-2000:])
        for d in (h.src, h.libdir):
            subprocess.run(["chmod", "-R", "a+rX", d])
    if not args.compare_only:
        shutil.rmtree(results, ignore_errors=True)
        os.makedirs(os.path.join(results, "setup"))
    else:
        try:
            os.remove(os.path.join(results, "summary.txt"))
        except OSError:
            pass

    # --- the template: set-up files with pg_strom off ---
    if not reuse:
        base.cluster_sh("stop")
        shutil.rmtree(base.dir, ignore_errors=True)
        base.cluster_sh("start", COMMON_CONF + MODE_CONF["off"])
        r = base.psql(
            "CREATE DATABASE regression TEMPLATE = template0")
        if r.returncode != 0:
            print(r.stderr)
            return 2
        for s in ["lc_messages TO 'C'", "lc_monetary TO 'C'", "lc_numeric TO 'C'", "lc_time TO 'C'",
                  "bytea_output TO 'hex'", "timezone_abbreviations TO 'Default'"]:
            base.psql(f"ALTER DATABASE regression SET {s}")
        base.psql("CREATE EXTENSION IF NOT EXISTS pg_strom", db="regression")
        bdir = os.path.join(base.dir, "build")
        os.makedirs(os.path.join(bdir, "results"), exist_ok=True)
        for d in (bdir, os.path.join(bdir, "results")):
            as_pg_user_owned(h, d)
        for f in setup_files:
            st = run_file(base, os.path.join(regress, "sql", f + ".sql"),
                          os.path.join(results, "setup", f + ".out"), bdir, args.file_timeout)
            if st["crash_log"] or st["timed_out"]:
                print(f"pg-regress: set-up file {f} failed: {st}")
                return 2
        base.psql("CHECKPOINT")
        base.cluster_sh("stop")
    if not args.compare_only:
        print(f"pg-regress: [{time.time() - t0:.0f} s] set-up ({len(setup_files)} files, pg_strom off) done;"
              f" {source or regress}")

    failed = False
    grand = {}
    for shape in shapes:
        pres = os.path.join(results, shape)
        if args.compare_only:
            stats = json.load(open(os.path.join(pres, "stats.json")))
            test_files = [f for f in test_files if f in stats["on"] and f in stats["off"]]
        else:
            stats = run_pass(args, h, base, shape, pres, test_files, regress)

        # --- compare ---
        totals = {}
        plans = [0, 0]
        problems = []
        with open(os.path.join(pres, "diffs.txt"), "w") as diffout, \
                open(os.path.join(pres, "tolerated.txt"), "w") as tolout:
            for f in test_files:
                sqltext = open(os.path.join(regress, "sql", f + ".sql"), errors="replace").read()
                outs = [open(os.path.join(pres, m, f + ".out"), errors="replace").read() for m in ("off", "on")]
                counts, probs = compare_file(f, sqltext, outs[0], outs[1], exceptions, diffout, tolout)
                for m in ("off", "on"):
                    s = stats[m][f]
                    if s["crash_log"]:
                        seen = [k for k, p in enumerate(probs) if "CRASH" in p[0]]
                        logline = f"server log ({m}): {s['crash_log'][0].strip()}"
                        if seen:
                            k = seen[0]
                            probs[k] = (probs[k][0] + "; " + logline,) + probs[k][1:]
                        else:
                            probs.append((f"{f}.sql: CRASH ({m}): {logline}", "", [], []))
                            counts["CRASH"] = counts.get("CRASH", 0) + 1
                    if s["timed_out"]:
                        probs.append((f"{f}.sql: TIMEOUT ({m}) after {args.file_timeout} s", "", [], []))
                        counts["DIFF"] = counts.get("DIFF", 0) + 1
                p = stats["on"][f]["plans"]
                plans[0] += p[0]
                plans[1] += p[1]
                for k, n in counts.items():
                    totals[k] = totals.get(k, 0) + n
                problems += probs
                line = " ".join(f"{k}={n}" for k, n in sorted(counts.items()))
                print(f"pg-regress [{shape}] {f}: {line}; {p[1]} of {p[0]} plans with a pg_strom node;"
                      f" {stats['off'][f]['seconds']:.1f} s off, {stats['on'][f]['seconds']:.1f} s on")
        for head, sql, a, b in problems:
            print(f"pg-regress [{shape}] {head}")
            if sql:
                print("    " + ps.normalise_sql(sql)[:300])
                for dline in list(difflib.unified_diff(a, b, "off", "on", lineterm="", n=1))[2:14]:
                    print("    " + dline)
        nstmt = sum(n for k, n in totals.items())
        bad = totals.get("DIFF", 0) + totals.get("CRASH", 0)
        summary = (f"pg-regress [{shape}]: {len(test_files)} files, {nstmt} statements: "
                   + ", ".join(f"{k} {n}" for k, n in sorted(totals.items()))
                   + f"; {plans[1]} of {plans[0]} plans (pg_strom on) had a pg_strom node")
        print(f"pg-regress: [{time.time() - t0:.0f} s] " + summary)
        with open(os.path.join(results, "summary.txt"), "a") as f:
            f.write(summary + "\n")
        grand[shape] = bad
        failed |= bad > 0
    if failed:
        print("pg-regress: FAILED: " + ", ".join(f"{s}: {n} differences or crashes" for s, n in grand.items() if n)
              + f" (diffs in {results}/PASS/diffs.txt)")
        return 1
    print(f"pg-regress: passed ({', '.join(shapes)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
