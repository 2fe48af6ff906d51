#!/usr/bin/env python3
"""test/mysql2arrow/compare.py - two result sets compared value by value.

    compare.py KINDS MARIADB.tsv POSTGRES.tsv

Each file holds one row per line, tab-separated, the first column the
row's key, NULL written as NULL (the mariadb client's batch output; psql
with `\\pset null NULL`).  KINDS names each column's comparison,
comma-separated: `s` the text exactly, `f4` / `f8` the values as
single / double precision floats (MariaDB prints a FLOAT with 6 digits,
PostgreSQL the shortest text that reads back), `n` as decimal numbers
(`-3600.5` equals `-3600.500000`).  Prints the differences (at most 10)
and the count; exits 1 when any.
"""

import struct
import sys
from decimal import Decimal


def f4(t):
    return struct.unpack("f", struct.pack("f", float(t)))[0]


CMP = {
    "s": lambda a, b: a == b,
    "f4": lambda a, b: f4(a) == f4(b),
    "f8": lambda a, b: float(a) == float(b),
    "n": lambda a, b: Decimal(a) == Decimal(b),
}


def rows(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            cells = line.rstrip("\n").split("\t")
            out[cells[0]] = cells
    return out


def main():
    kinds = sys.argv[1].split(",")
    a, b = rows(sys.argv[2]), rows(sys.argv[3])
    diffs = []
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            diffs.append(f"row {key}: only in {'MariaDB' if key in a else 'PostgreSQL'}")
            continue
        ra, rb = a[key], b[key]
        if len(ra) != len(kinds) or len(rb) != len(kinds):
            diffs.append(f"row {key}: {len(ra)} / {len(rb)} columns, {len(kinds)} expected")
            continue
        for i, k in enumerate(kinds):
            x, y = ra[i], rb[i]
            same = x == y if "NULL" in (x, y) else CMP[k](x, y)
            if not same:
                diffs.append(f"row {key} column {i + 1}: MariaDB {x!r}, PostgreSQL {y!r}")
    for d in diffs[:10]:
        print(d)
    print(f"{len(a)} rows, {len(kinds)} columns: {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
