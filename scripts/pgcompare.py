"""scripts/pgcompare.py - run SQL through psql and compare result sets.

Shared by the differential harness (scripts/diff-check.py) and the SSB
benchmark (bench/ssb/ssb.py).  Python standard library only; psql comes
from PATH and connects with the usual PG* environment (`. .run/env`).

The comparison rule, everywhere: two results are equal when they hold the
same rows as multisets (order is ignored: the harness sorts both sides);
values compare exactly as text, except in float4/float8 columns (or, for
DuckDB, Python floats), which compare within a relative tolerance
(FLOAT_RTOL) because parallel float sums differ in the last bits.
Trailing blanks of text are ignored only when a side is DuckDB (it has no
char(n) padding).
"""

import math
import re
import subprocess

FLOAT_RTOL = 1e-9
FLOAT_TYPES = ("real", "double precision", "float4", "float8")


class PsqlError(Exception):
    """psql failed; the message holds its stderr."""


def run_psql(script, *, csv_out=True, extra_args=()):
    """Run a psql script (ON_ERROR_STOP, --csv with NULL_MARK for NULL unless
    csv_out is false); returns the CompletedProcess, whatever its status."""
    args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-P", "pager=off"]
    if csv_out:
        args += ["--csv", "-P", "null=" + NULL_MARK]
    args += list(extra_args)
    # an error message may quote a value cut in the middle of a multibyte
    # character (sqlsmith makes such values): undecodable bytes become
    # U+FFFD, the same way for pg_strom on and off
    return subprocess.run(args, input=script, capture_output=True, text=True, encoding="utf-8", errors="replace")


def psql(sql, *, settings=(), csv_out=True, timing=False, extra_args=()):
    """Run `sql` (one or more statements) in one psql session after the SET
    commands of `settings` ((name, value) pairs).  Returns (stdout, stderr);
    raises PsqlError when psql fails."""
    script = "".join(f"SET {n} = {v};\n" for n, v in settings)
    if timing:
        script += "\\timing on\n"
    p = run_psql(script + sql, csv_out=csv_out, extra_args=extra_args)
    if p.returncode != 0:
        raise PsqlError(p.stderr.strip() or f"psql exited with {p.returncode}")
    return p.stdout, p.stderr


def scalar(sql):
    """The single value `sql` returns, as text."""
    out, _ = psql(sql + "\n", csv_out=False, extra_args=("-A", "-t"))
    return out.strip()


# What psql prints for NULL (--csv writes the empty string and the default
# NULL alike).
NULL_MARK = "\u2400NULL\u2400"


def parse_csv(text):
    """psql --csv output -> (header, rows of text); NULL is None."""
    if not text.strip():
        return [], []
    records = list(_split_records(text.splitlines(keepends=True)))
    header = ["" if f is _NULL else f for f in _parse_record(records[0])]
    rows = [tuple(None if f is _NULL else f for f in _parse_record(r)) for r in records[1:]]
    return header, rows


_NULL = object()


def _split_records(lines):
    """Join physical lines into CSV records (quoted fields may hold newlines)."""
    buf = ""
    for line in lines:
        buf += line
        if buf.count('"') % 2 == 0:
            yield buf.rstrip("\r\n")
            buf = ""
    if buf:
        yield buf.rstrip("\r\n")


def _parse_record(rec):
    out, i, n = [], 0, len(rec)
    while True:
        if i < n and rec[i] == '"':
            j, val = i + 1, []
            while j < n:
                if rec[j] == '"':
                    if j + 1 < n and rec[j + 1] == '"':
                        val.append('"')
                        j += 2
                        continue
                    break
                val.append(rec[j])
                j += 1
            out.append("".join(val))
            i = j + 1
        else:
            j = rec.find(",", i)
            j = n if j < 0 else j
            field = rec[i:j]
            out.append(_NULL if field == NULL_MARK else field)
            i = j
        if i >= n:
            break
        i += 1  # the comma
        if i == n:
            out.append("")
            break
    return out


def column_types(query, settings=()):
    """The result column types of `query`, from psql's \\gdesc."""
    out, _ = psql(query.rstrip().rstrip(";") + "\n\\gdesc\n", settings=settings)
    _, rows = parse_csv(out)
    return [r[1] for r in rows]


def _floatish(v):
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def values_equal(a, b, is_float):
    if a is None or b is None:
        return a is None and b is None
    if a == b:
        return True
    if is_float and _floatish(a) and _floatish(b):
        fa, fb = float(a), float(b)
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if math.isinf(fa) or math.isinf(fb):
            return fa == fb
        return abs(fa - fb) <= FLOAT_RTOL * max(abs(fa), abs(fb))
    return False


def _sort_key(row):
    return tuple((v is None, v or "") for v in row)


def compare_rows(expected, actual, float_cols=(), strip=False):
    """Compare two lists of text tuples as multisets.  Returns None when
    equal, else a short description of the first difference."""
    if len(expected) != len(actual):
        return f"{len(expected)} rows expected, {len(actual)} returned"
    if strip:
        expected = [tuple(None if v is None else v.rstrip(" ") for v in r) for r in expected]
        actual = [tuple(None if v is None else v.rstrip(" ") for v in r) for r in actual]
    es, as_ = sorted(expected, key=_sort_key), sorted(actual, key=_sort_key)
    for n, (e, a) in enumerate(zip(es, as_, strict=True)):
        if len(e) != len(a):
            return f"row {n}: {len(e)} columns expected, {len(a)} returned"
        for c, (ev, av) in enumerate(zip(e, a, strict=True)):
            if not values_equal(ev, av, c in float_cols):
                return f"sorted row {n}, column {c + 1}: expected {ev!r}, got {av!r}"
    return None


_TIME_RE = re.compile(r"^Time: ([0-9.]+) ms", re.M)


def timings(stderr_or_stdout):
    """The `Time: N ms` lines of \\timing output, in ms."""
    return [float(m) for m in _TIME_RE.findall(stderr_or_stdout)]


def plan_nodes(query, settings=()):
    """EXPLAIN (COSTS OFF) of `query` as text lines."""
    out, _ = psql("EXPLAIN (COSTS OFF) " + query.rstrip().rstrip(";") + ";\n", settings=settings, csv_out=False,
                  extra_args=("-A", "-t"))
    return out.splitlines()
