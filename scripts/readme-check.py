#!/usr/bin/env python3
"""scripts/readme-check.py - the README's examples run as written.

Runs, in the README's order, every ```sql block and every shell block that
calls pg2arrow, in a fresh database copied from one that holds the Star
Schema Benchmark's tables (the demo's cluster has them; `make test` uses
the differential harness's database at SF 0.01), with the README's
/tmp/lineorder.arrow replaced by a file in a temporary folder.  Fails on
any ERROR except those the README itself says a machine may answer with
(ALLOWED_ERRORS, where the machine has no GPU), and on an EXPLAIN whose
README output names a node or field the plan does not show: the EXPLAIN
is run again with the device plans forced (gpu_setup_cost, heap_gather_cost
and gpu_tuple_cost 0: a machine without a GPU keeps PostgreSQL's plan as
written) and each `Custom Scan (X)` and `Field:` of the README's comment
lines must appear.

    scripts/readme-check.py [--db TEMPLATE_DB]     (PG* environment)
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import pgcompare as pc  # noqa: E402

# what a README statement may answer on a machine without a GPU (it says so)
ALLOWED_ERRORS = ["no GPU found to build device code for"]
FORCE = [("pg_strom.gpu_setup_cost", 0), ("pg_strom.heap_gather_cost", 0), ("pg_strom.gpu_tuple_cost", 0)]
README_GSTORE = "/tmp/fpoints."  # the gstore_fdw example's files: .base, .redo
README_ARROW = "/tmp/lineorder.arrow"


def blocks(text):
    """The README's fenced blocks: (language, body), in order."""
    out = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.M | re.S):
        out.append((m.group(1), m.group(2)))
    return out


def statements(sql):
    """A block's statements, each with the comment lines that follow it
    (the README shows EXPLAIN output as comments); comments after code on
    a line are dropped."""
    out, cur = [], []
    for line in sql.splitlines():
        if line.lstrip().startswith("--"):
            if not cur and out:
                out[-1][1].append(line)
            continue
        code = re.sub(r"\s+--\s.*$", "", line)
        if not code.strip():
            continue
        cur.append(code)
        if code.rstrip().endswith(";"):
            out.append(("\n".join(cur).strip(), []))
            cur = []
    return out


def expected_marks(comments):
    """The node names and field names a README EXPLAIN output shows."""
    marks = []
    for c in comments:
        body = c.lstrip()[2:]
        m = re.search(r"Custom Scan \((\w+)\)", body)
        if m:
            marks.append(f"Custom Scan ({m.group(1)})")
        m = re.match(r"\s+([A-Za-z][A-Za-z0-9 -]*?):\s", body)
        if m and not m.group(1).startswith("Custom Scan"):
            marks.append(m.group(1) + ":")
    return marks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", default=os.environ.get("PGDATABASE", "postgres"),
                    help="database holding SSB's lineorder, copied for the check (default: $PGDATABASE)")
    a = ap.parse_args()
    text = open(os.path.join(ROOT, "README.md")).read()
    tmp = tempfile.mkdtemp(prefix="readme-check-")
    os.chmod(tmp, 0o755)
    arrow = os.path.join(tmp, "lineorder.arrow")
    # the gstore_fdw example's files, new on every run, where the server
    # may write them
    gstore = os.path.join(tmp, "gstore")
    os.mkdir(gstore)
    os.chmod(gstore, 0o1777)
    db = "pgstrom_readme_check"
    pc.psql(f"DROP DATABASE IF EXISTS {db};", csv_out=False, extra_args=("-d", "postgres"))
    pc.psql(f"CREATE DATABASE {db} TEMPLATE {a.db};", csv_out=False, extra_args=("-d", "postgres"))
    # the README's own objects are created afresh (the template may hold
    # tables of the same names: the harness's t0)
    sql = "\n".join(body for lang, body in blocks(text) if lang == "sql")
    names = (re.findall(r"CREATE TABLE (\w+)", sql) + re.findall(r"CREATE FOREIGN TABLE (\w+)", sql)
             + re.findall(r"IMPORT FOREIGN SCHEMA (\w+)", sql))
    for n in dict.fromkeys(names):
        pc.psql(f"DROP TABLE IF EXISTS {n} CASCADE; DROP FOREIGN TABLE IF EXISTS {n} CASCADE;",
                csv_out=False, extra_args=("-d", db))
    env = dict(os.environ, PGDATABASE=db)
    failures, nstmt, nexplain, nshell = [], 0, 0, 0
    try:
        for lang, body in blocks(text):
            body = body.replace(README_ARROW, arrow).replace(README_GSTORE, gstore + "/fpoints.")
            if lang == "" and "pg2arrow " in body:
                # the shell lines (continuations joined), `. .run/env` left out:
                # the environment is this one's
                cmd = body.replace("\\\n", " ")
                for line in cmd.splitlines():
                    line = line.strip()
                    if not line.startswith("pg2arrow "):
                        continue
                    args = shlex.split(line)
                    args = [x if x != "postgres" else db for x in args]
                    r = subprocess.run(args, capture_output=True, text=True, env=env)
                    nshell += 1
                    if r.returncode != 0:
                        failures.append(f"{line}: {r.stderr.strip()}")
                continue
            if lang != "sql":
                continue
            for stmt, comments in statements(body):
                nstmt += 1
                p = pc.run_psql(stmt + "\n", csv_out=False, extra_args=("-d", db))
                if p.returncode != 0:
                    err = p.stderr.strip()
                    if not any(x in err for x in ALLOWED_ERRORS):
                        failures.append(f"{stmt.splitlines()[0]} ...: {err.splitlines()[0] if err else p.returncode}")
                    continue
                marks = expected_marks(comments)
                if not marks or not stmt.upper().startswith("EXPLAIN"):
                    continue
                nexplain += 1
                try:
                    out, _ = pc.psql(stmt + "\n", settings=FORCE, csv_out=False, extra_args=("-d", db))
                except pc.PsqlError as e:
                    failures.append(f"{stmt.splitlines()[0]} ... (device plan forced): {e}")
                    continue
                missing = [m for m in marks if m not in out]
                if missing:
                    failures.append(f"{stmt.splitlines()[0]} ...: the plan lacks {', '.join(missing)}")
    finally:
        pc.run_psql(f"DROP DATABASE IF EXISTS {db};", csv_out=False, extra_args=("-d", "postgres"))
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print(f"readme-check: FAIL {f}")
    print(f"readme-check: {nstmt} SQL statements and {nshell} pg2arrow commands of README.md, "
          f"{nexplain} EXPLAIN outputs checked: " + ("all ran as written" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
