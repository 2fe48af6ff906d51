"""scripts/pgregress_split.py - split a psql script and its `psql -X -a -q`
output into statements (used by scripts/pg-regress-diff.py).

units(sql_text) cuts the script into units: groups of whole lines that
psql runs as one step (one or more statements ending on the same line, a
backslash command, a COPY ... FROM STDIN with its data), each with the
lines psql echoes for it.  align(units, output_text) finds each unit's
echo in the output and returns the text between the end of one unit's
echo and the start of the next one's: that unit's result.
"""

import hashlib
import re

_IDENT = re.compile(r"[A-Za-z0-9_$\x80-\uffff]")
_DOLLAR = re.compile(r"\$([A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*)?\$")
# backslash commands that send the query buffer
_SENDS = re.compile(r"\\(g|gx|gset|gexec|gdesc|crosstabview|watch|bind|bind_named|sendpipeline)\b")


class Unit:
    __slots__ = ("first", "last", "echo", "sql", "stdin")

    def __init__(self, first, last, echo, sql, stdin):
        self.first, self.last, self.echo, self.sql, self.stdin = first, last, echo, sql, stdin

    def fingerprint(self):
        return hashlib.md5(normalise_sql(self.sql).encode()).hexdigest()[:10]


def normalise_sql(sql):
    """The statement without comments and with whitespace collapsed."""
    return " ".join(strip_comments(sql).split())


def units(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    # lexer state carried over lines
    quote = None          # "'", 'E', '"', or a dollar tag "$x$"
    comment = 0           # /* */ nesting depth
    depth = 0             # parentheses
    buf = False           # a statement has started
    start = 0             # first line of the current unit
    copy_data = False     # inside COPY ... FROM STDIN data
    unit_stdin = False
    echo = []
    sql_lines = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if copy_data:
            if line == "\\.":
                copy_data = False
                out.append(Unit(start, i, echo, "\n".join(sql_lines), True))
                start, echo, sql_lines = i + 1, [], []
            i += 1
            continue
        # psql skips empty lines outside quotes and comments unechoed
        if line != "" or quote is not None or comment:
            echo.append(line)
        sql_lines.append(line)
        sent = False      # the buffer was sent on this line
        meta_alone = False
        j, n = 0, len(line)
        while j < n:
            c = line[j]
            if comment:
                if line.startswith("*/", j):
                    comment -= 1
                    j += 2
                    continue
                if line.startswith("/*", j):
                    comment += 1
                    j += 2
                    continue
                j += 1
                continue
            if quote is not None:
                if quote == "'":
                    if c == "'":
                        quote = None
                elif quote == "E":
                    if c == "\\":
                        j += 2
                        continue
                    if c == "'":
                        quote = None
                elif quote == '"':
                    if c == '"':
                        quote = None
                else:  # dollar tag
                    if line.startswith(quote, j):
                        j += len(quote)
                        quote = None
                        continue
                j += 1
                continue
            if line.startswith("--", j):
                break
            if line.startswith("/*", j):
                comment = 1
                j += 2
                continue
            if c == "'":
                prev = line[j - 1] if j else ""
                if prev in "eE" and (j < 2 or not _IDENT.match(line[j - 2])):
                    quote = "E"
                else:
                    quote = "'"
                buf = True
                j += 1
                continue
            if c == '"':
                quote = '"'
                buf = True
                j += 1
                continue
            if c == "$" and (j == 0 or not _IDENT.match(line[j - 1])):
                m = _DOLLAR.match(line, j)
                if m:
                    quote = m.group(0)
                    buf = True
                    j = m.end()
                    continue
            if c == "\\":
                rest = line[j:]
                if rest.startswith("\\;"):
                    j += 2
                    continue
                if buf and _SENDS.match(rest):
                    sent = True
                    buf = False
                    depth = 0
                elif not buf:
                    meta_alone = True
                break
            if c == "(":
                depth += 1
            elif c == ")":
                depth = max(0, depth - 1)
            elif c == ";" and depth == 0:
                if buf:
                    sent = True
                buf = False
            elif not c.isspace():
                buf = True
            j += 1
        if (sent or meta_alone) and not buf and quote is None and not comment:
            joined = "\n".join(sql_lines)
            # COPY ... FROM STDIN (or STDOUT, its alias) and \copy ...
            # from stdin: the data lines that follow are not echoed
            if re.search(r"\bfrom\s+(stdin|stdout)\b", strip_comments(joined), re.I):
                copy_data = True
                unit_stdin = True
                i += 1
                continue
            out.append(Unit(start, i, echo, joined, unit_stdin))
            start, echo, sql_lines, unit_stdin = i + 1, [], [], False
        i += 1
    if echo or sql_lines:
        out.append(Unit(start, len(lines) - 1, echo, "\n".join(sql_lines), unit_stdin))
    return out


def strip_comments(sql):
    """Remove -- and /* */ comments (outside quotes)."""
    res, j, n = [], 0, len(sql)
    quote = None
    while j < n:
        c = sql[j]
        if quote:
            res.append(c)
            if quote.startswith("$"):
                if sql.startswith(quote, j):
                    res.append(quote[1:])
                    j += len(quote)
                    quote = None
                    continue
            elif c == quote:
                quote = None
            j += 1
            continue
        if sql.startswith("--", j):
            k = sql.find("\n", j)
            j = n if k < 0 else k
            continue
        if sql.startswith("/*", j):
            d, j = 1, j + 2
            while j < n and d:
                if sql.startswith("/*", j):
                    d, j = d + 1, j + 2
                elif sql.startswith("*/", j):
                    d, j = d - 1, j + 2
                else:
                    j += 1
            res.append(" ")
            continue
        if c in "'\"":
            quote = c
        elif c == "$" and (j == 0 or not _IDENT.match(sql[j - 1])):
            m = _DOLLAR.match(sql, j)
            if m:
                quote = m.group(0)
                res.append(quote)
                j = m.end()
                continue
        res.append(c)
        j += 1
    return "".join(res)


def top_level(sql):
    """The SQL without comments, quoted text and anything in parentheses."""
    s = strip_comments(sql)
    res, depth, quote, j = [], 0, None, 0
    while j < len(s):
        c = s[j]
        if quote:
            if quote.startswith("$"):
                if s.startswith(quote, j):
                    j += len(quote)
                    quote = None
                    continue
            elif c == quote:
                quote = None
            j += 1
            continue
        if c in "'\"":
            quote = c
        elif c == "$" and (j == 0 or not _IDENT.match(s[j - 1])):
            m = _DOLLAR.match(s, j)
            if m:
                quote = m.group(0)
                j = m.end()
                continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            res.append(c)
        j += 1
    return "".join(res)


def align(us, output):
    """Results per unit: a list of (unit_index, [result lines]).  Units whose
    echo is not found (psql did not echo them: ECHO none, a lost
    connection) are merged into the unit before."""
    out = output.split("\n")
    if out and out[-1] == "":
        out.pop()
    res = [[] for _ in us]
    found = [False] * len(us)
    pos = 0
    prev = None          # index of the last unit found
    for k, u in enumerate(us):
        e = u.echo
        if not e:
            continue
        m = len(e)
        j = pos
        hit = -1
        while j + m <= len(out):
            if out[j] == e[0] and out[j:j + m] == e:
                hit = j
                break
            j += 1
        if hit < 0:
            continue
        if prev is not None:
            res[prev] = out[pos:hit]
        found[k] = True
        pos = hit + m
        prev = k
    if prev is not None:
        res[prev] = out[pos:]
    return res, found
