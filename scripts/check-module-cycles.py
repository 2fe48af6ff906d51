#!/usr/bin/env python3
"""Report import cycles between the top-level modules of a Rust crate.

Every `crate::NAME` path in a file under src/NAME2/ (or src/NAME2.rs) is an
edge NAME2 -> NAME.  Cycles among top-level modules make a crate hard to
read: a newcomer cannot learn one layer without the other.  The extension
crate is checked by `make lint`; exit status 1 when a cycle exists.

usage: check-module-cycles.py [SRC_DIR ...]   (default: crates/pg_strom/src)
"""
import re
import sys
from pathlib import Path

USE_BLOCK = re.compile(r"\buse\s+crate::\{([^;]*)\};", re.S)
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def top_module(src: Path, f: Path) -> str:
    rel = f.relative_to(src)
    return rel.parts[0].removesuffix(".rs")


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def edges(src: Path) -> dict:
    graph = {}
    for f in sorted(src.rglob("*.rs")):
        me = top_module(src, f)
        if me in ("lib", "main"):
            continue
        text = strip_comments(f.read_text())
        deps = set(PATH.findall(text))
        for block in USE_BLOCK.findall(text):
            # top-level names inside `use crate::{a, b::c, d::{e, f}}`
            depth = 0
            name = ""
            for ch in block + ",":
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                elif ch == "," and depth == 0:
                    head = name.strip().split("::")[0].split(" ")[0]
                    if head and head != "self":
                        deps.add(head)
                    name = ""
                    continue
                if depth == 0 and ch not in "{}":
                    name += ch
                elif depth > 0 and not name.strip():
                    pass
        deps.discard(me)
        graph.setdefault(me, set()).update(d for d in deps if d)
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    dirs = [Path(a) for a in sys.argv[1:]] or [Path("crates/pg_strom/src")]
    bad = 0
    for src in dirs:
        graph = edges(src)
        for comp in cycles(graph):
            bad += 1
            pairs = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
            print(f"{src}: import cycle among {', '.join(comp)}:")
            for p in pairs:
                print(f"  {p}")
    if bad == 0:
        print(f"no import cycles between top-level modules of {', '.join(map(str, dirs))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
