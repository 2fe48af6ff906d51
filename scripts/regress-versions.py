#!/usr/bin/env python3
"""Judge pg_regress results of an older PostgreSQL against the expected
output written on PostgreSQL 18, after normalizing what only the version
changes in the output (not what a query returns):

- EXPLAIN ANALYZE's row counts: 18 prints `rows=1.00` (two decimals),
  older versions `rows=1` (rounded);
- an InitPlan's output: 18 names it `(InitPlan 1).col1`, older versions
  `$0`, and print `InitPlan 1 (returns $0)`;
- `Memory Usage: 32kB` of a hash aggregate (allocation sizes differ);
- the width of psql's table layout (headers are centered, cells padded to
  the widest value): runs of spaces, and the dashes of a header rule.

usage: regress-versions.py EXPECTED_DIR RESULTS_DIR MAJOR [--skip NAME=WHY]...
Each result file (RESULTS_DIR/NAME.out) is compared with EXPECTED_DIR/NAME.out;
a test named with --skip is reported with its reason and not judged (it
uses SQL the version does not have).  Prints the normalized differences;
exit status 1 when any test differs.
"""

import difflib
import re
import sys
from pathlib import Path

ROWS = re.compile(r"\brows=(\d+(?:\.\d+)?)")
INITPLAN_REF = re.compile(r"\(InitPlan \d+\)\.col\d+|\$\d+")
INITPLAN_HEAD = re.compile(r"(InitPlan \d+) \(returns \$\d+(?:,\$\d+)*\)")
MEMORY = re.compile(r"Memory Usage: \d+kB")
RULE = re.compile(r"^[-+]+$")


def normalize(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = ROWS.sub(lambda m: "rows=%d" % round(float(m.group(1))), line)
        line = INITPLAN_HEAD.sub(r"\1", line)
        line = INITPLAN_REF.sub("$P", line)
        line = MEMORY.sub("Memory Usage: NkB", line)
        line = " ".join(line.split())
        if RULE.match(line):
            line = "--"
        out.append(line)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    expected, results, major = Path(argv[1]), Path(argv[2]), argv[3]
    skip = {}
    rest = argv[4:]
    while rest:
        if rest[0] != "--skip" or len(rest) < 2 or "=" not in rest[1]:
            print(__doc__, file=sys.stderr)
            return 2
        name, why = rest[1].split("=", 1)
        skip[name] = why
        rest = rest[2:]
    failed, passed = [], 0
    for res in sorted(results.glob("*.out")):
        name = res.stem
        if name in skip:
            print(f"regress-versions: {name}: not judged on PostgreSQL {major}: {skip[name]}")
            continue
        exp = expected / res.name
        if not exp.exists():
            print(f"regress-versions: {name}: no expected output")
            failed.append(name)
            continue
        a, b = normalize(exp.read_text()), normalize(res.read_text())
        if a == b:
            passed += 1
            continue
        failed.append(name)
        print(f"regress-versions: {name} differs on PostgreSQL {major} (normalized):")
        for line in difflib.unified_diff(a, b, str(exp), str(res), n=2, lineterm=""):
            print("  " + line)
    verdict = f"FAILED: {', '.join(failed)}" if failed else "passed"
    print(
        f"regress-versions: PostgreSQL {major}: {passed} tests equal to 18's expected output "
        f"(normalized), {len(skip)} not judged; {verdict}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
