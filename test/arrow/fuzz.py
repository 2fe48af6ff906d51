#!/usr/bin/env python3
"""test/arrow/fuzz.py DIR [--seconds S] [--seed N] - mutated Arrow files
through Arrow_Fdw: every one must read or fail with an ERROR; the server
must never crash.  Mutations of DIR/types.arrow and DIR/sorted.arrow
(written by gen.py), read as the undamaged file's columns: flipped bytes, overwritten 4/8-byte words (lengths,
offsets), truncations, spliced ranges.  Each file that reads is read
twice more, through GpuScan (device plans forced) and through Arrow_Fdw's
own scan: when both answer, the answers must be equal (a damaged file
one path rejects and the other reads is counted, not failed: the device
path checks a column's buffers as a whole, the plain scan value by value).
Runs against the PG* environment for a bounded time (default 20 s).  Exit
status 1 on a crash, on a scan running over 10 s, or on a device answer
that differs from the plain scan's.
"""
import argparse
import os
import random
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("dir")
ap.add_argument("--seconds", type=float, default=20)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
rng = random.Random(a.seed)
work = os.path.join(a.dir, "fuzz")
os.makedirs(work, exist_ok=True)
os.chmod(work, 0o755)
NAMES = ("types", "sorted")
sources = [open(os.path.join(a.dir, n + ".arrow"), "rb").read() for n in NAMES]


def mutate(data):
    d = bytearray(data)
    footer = int.from_bytes(data[-10:-6], "little")
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        k = rng.randrange(6)
        # mostly inside the batches (headers and bodies), so that decoding
        # is exercised, not only the checks made when a file is opened
        end = min(len(d), len(data) - 10 - footer)
        i = rng.randrange(8, end) if end > 8 and rng.random() < 0.8 else rng.randrange(len(d))
        if k == 0:
            d[i] ^= 1 << rng.randrange(8)
        elif k == 1:
            d[i:i + 4] = rng.choice([0, 0x7FFFFFFF, 0xFFFFFFFF, 8, rng.randrange(1 << 32)]).to_bytes(4, "little")
        elif k == 2:
            d[i:i + 8] = rng.choice([0, 1 << 40, (1 << 64) - 1, rng.randrange(1 << 64)]).to_bytes(8, "little")
        elif k == 3:
            d = d[:i] + d[-10:] if rng.random() < 0.5 else d[:i]
        elif k == 4:
            j = rng.randrange(len(d))
            d[i:i + 16] = d[j:j + 16]
        else:
            d[i] = rng.randrange(256)
    return bytes(d)


def psql(sql):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0"], input=sql, capture_output=True,
                          text=True)


setup = psql("DROP SCHEMA IF EXISTS arrow_fuzz CASCADE; CREATE SCHEMA arrow_fuzz;\n" + "".join(
    f"IMPORT FOREIGN SCHEMA {n} FROM SERVER arrow_fdw INTO arrow_fuzz OPTIONS (file '{a.dir}/{n}.arrow');\n"
    for n in NAMES))
if setup.returncode != 0:
    sys.exit(f"fuzz: setup failed: {setup.stderr}")
started, files, errors, scans = time.time(), 0, 0, 0
compared, one_sided = 0, 0
while time.time() - started < a.seconds:
    # the WHERE query goes through GpuScan (the device columns' path), the
    # others through the Foreign Scan
    script = ["SET statement_timeout = '10s'; SET pg_strom.gpu_setup_cost = 0; SET pg_strom.gpu_context_cost = 0;"
              " SET pg_strom.gpu_tuple_cost = 0; SET pg_strom.gpu_operator_cost = 0;"
              " SET pg_strom.arrow_convert_cost = 0;\n"]
    for k in range(40):
        path = os.path.join(work, f"m{k}.arrow")
        n = rng.randrange(len(sources))
        with open(path, "wb") as f:
            f.write(mutate(sources[n]))
        os.chmod(path, 0o644)
        files += 1
        scans += 3
        # the undamaged file's columns: every value converted, then none read
        script.append(f"DROP FOREIGN TABLE IF EXISTS arrow_fuzz.t{k};\n"
                      f"CREATE FOREIGN TABLE arrow_fuzz.t{k} (LIKE arrow_fuzz.{NAMES[n]}) SERVER arrow_fdw"
                      f" OPTIONS (file '{path}');\n"
                      f"SELECT count(*) FROM (SELECT * FROM arrow_fuzz.t{k}) x;\n"
                      f"SELECT count(*) FROM arrow_fuzz.t{k};\n"
                      f"SELECT * FROM arrow_fuzz.t{k} WHERE id = 5 OR ymd = 19940301;\n".replace(
                          "id = 5 OR ymd = 19940301", "id = 5" if n == 0 else "ymd = 19940301"))
        # the device path (GpuScan) against the plain scan
        key = "id" if n == 0 else "ymd"
        cmp = (f"SELECT count(*), md5(string_agg(x::text, ',' ORDER BY x::text)) FROM arrow_fuzz.t{k} x"
               f" WHERE {key} IS NOT NULL;\n")
        script.append(f"\\echo @@{k} on\n{cmp}SET pg_strom.enabled = off;\n\\echo @@{k} off\n{cmp}"
                      "SET pg_strom.enabled = on;\n")
    p = psql("".join(script))
    answers, cur = {}, None
    for line in p.stdout.split("\n"):
        if line.startswith("@@"):
            cur = tuple(line[2:].split())
            answers[cur] = None
        elif cur is not None and "|" in line:
            answers[cur], cur = line, None  # the answer right after the marker only
    for k in range(40):
        on, off = answers.get((str(k), "on")), answers.get((str(k), "off"))
        if on is not None and off is not None:
            compared += 1
            if on != off:
                sys.exit(f"fuzz: {work}/m{k}.arrow reads differently through GpuScan ({on}) and the plain scan "
                         f"({off}) (seed {a.seed})")
        elif (on is None) != (off is None):
            one_sided += 1
    errors += p.stderr.count("ERROR:")
    alive = psql("SELECT 1;\n")
    if "statement timeout" in p.stderr:
        sys.exit(f"fuzz: a scan of one of the last 40 files in {work} ran over 10 s (seed {a.seed})")
    if p.returncode == 2 or alive.returncode != 0 or "server closed the connection" in p.stderr:
        print(p.stderr[-3000:])
        sys.exit(f"fuzz: the server crashed on one of the last 40 files in {work} (seed {a.seed})")
psql("DROP SCHEMA arrow_fuzz CASCADE;\n")
print(f"fuzz: {files} mutated Arrow files in {time.time() - started:.0f} s: {scans} scans, "
      f"{scans - errors} read without error, {errors} ERRORs, no crash; {compared} read alike through GpuScan and "
      f"the plain scan, {one_sided} rejected by only one of them")
