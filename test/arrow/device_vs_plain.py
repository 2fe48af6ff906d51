#!/usr/bin/env python3
"""test/arrow/device_vs_plain.py DIR - the device paths over every readable
Arrow file gen.py wrote into DIR, against Arrow_Fdw's own scan.

Each file is imported; for every column whose type has an equality
operator (the types a device node can read), two queries run with pg_strom on (device plans forced) and off:

    SELECT md5(string_agg(c::text, ',' ORDER BY c::text)), count(*) FROM t WHERE c IS NOT NULL
        (GpuScan: the device reads c's NULLs to filter)
    SELECT count(*), count(c) FROM t
        (GpuPreAgg: the device counts c's non-NULL values)

and for numeric and date columns a filter on the values (with a sum of
the numeric), so that the device computes with the values it read.

Both answers must be equal.  A query PostgreSQL itself refuses (a type
without an equality operator, a value it cannot convert) must fail the
same way both times.  Prints how many queries ran on a device node; exit
status 1 on any difference, or when no query used one.  Runs against the
PG* environment.
"""
import os
import subprocess
import sys

d = sys.argv[1]
SKIP = {"short", "badmagic", "truncated", "badfooter", "badbuffer", "badutf8", "unaligned", "map", "union",
        "struct"}  # (a Struct column needs a composite type declared by hand)
names = sorted(f[:-6] for f in os.listdir(d) if f.endswith(".arrow") and f[:-6] not in SKIP)
FORCE = ("SET pg_strom.gpu_setup_cost = 0; SET pg_strom.gpu_context_cost = 0; SET pg_strom.gpu_tuple_cost = 0;"
         " SET pg_strom.gpu_operator_cost = 0; SET pg_strom.arrow_convert_cost = 0;"
         " SET max_parallel_workers_per_gather = 0;")


def psql(sql):
    p = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=0", "-F", "|"], input=sql, capture_output=True,
                       text=True)
    if "server closed the connection" in p.stderr:
        sys.exit(f"device_vs_plain: the server crashed: {p.stderr[-2000:]}")
    return p


setup = psql("DROP SCHEMA IF EXISTS arrow_dvp CASCADE; CREATE SCHEMA arrow_dvp;\n" + "".join(
    f"IMPORT FOREIGN SCHEMA {n} FROM SERVER arrow_fdw INTO arrow_dvp OPTIONS (file '{d}/{n}.arrow');\n"
    for n in names))
if setup.returncode != 0 or "ERROR" in setup.stderr:
    sys.exit(f"device_vs_plain: import failed: {setup.stderr}")
cols = psql("SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)"
            " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = 'arrow_dvp' AND a.attnum > 0 AND NOT a.attisdropped"
            # equality exists for the type (arrays and composites compare too)
            " AND EXISTS (SELECT 1 FROM pg_operator o WHERE o.oprname = '='"
            "   AND o.oprleft = a.atttypid AND o.oprright = a.atttypid)"
            " ORDER BY 1, a.attnum;\n").stdout.split("\n")
queries = []
for line in cols:
    if not line:
        continue
    t, c, typ = line.split("|")
    qt, qc = f'arrow_dvp."{t}"', f'"{c}"'
    queries.append(f"SELECT md5(string_agg({qc}::text, ',' ORDER BY {qc}::text)), count(*) FROM {qt} WHERE {qc} IS NOT NULL")
    queries.append(f"SELECT count(*), count({qc}) FROM {qt}")
    # the values themselves on the device: a filter, and a sum
    if typ.startswith("numeric"):
        queries.append(f"SELECT sum({qc}), count(*) FROM {qt} WHERE {qc} > 0")
    elif typ == "date":
        queries.append(f"SELECT count(*) FROM {qt} WHERE {qc} > '2000-01-01'")


def run_all(on):
    # one marker per query on stdout; an answer follows it unless the query failed
    script = [FORCE, "" if on else "SET pg_strom.enabled = off;"]
    for i, q in enumerate(queries):
        script.append(f"\\echo @@{i}\n{q};\n")
    out = psql("\n".join(script)).stdout.split("\n")
    res, cur = {}, None
    for line in out:
        if line.startswith("@@"):
            cur = int(line[2:])
            res[cur] = None
        elif cur is not None and line:
            res[cur] = line
    return res


def device_nodes():
    script = [FORCE] + [f"\\echo @@{i}\nEXPLAIN (COSTS OFF) {q};\n" for i, q in enumerate(queries)]
    out, n, cur, seen = psql("\n".join(script)).stdout.split("\n"), 0, None, set()
    for line in out:
        if line.startswith("@@"):
            cur = int(line[2:])
        elif cur is not None and cur not in seen and ("GpuScan" in line or "GpuPreAgg" in line):
            seen.add(cur)
            n += 1
    return n


on, off = run_all(True), run_all(False)
bad = [i for i in range(len(queries)) if on.get(i) != off.get(i)]
for i in bad[:20]:
    print(f"device_vs_plain: differs: {queries[i]}\n  on:  {on.get(i)}\n  off: {off.get(i)}")
ndev = device_nodes()
psql("DROP SCHEMA arrow_dvp CASCADE;\n")
print(f"device_vs_plain: {len(names)} files, {len(queries)} queries ({ndev} through GpuScan or GpuPreAgg), "
      f"{len(bad)} differences")
if bad or ndev == 0:
    sys.exit(1)
