#!/usr/bin/env python3
"""test/arrow/gen.py DIR - the Arrow files of Arrow_Fdw's tests, written by
pyarrow, and expected.sql: the same values as a heap table built from
PostgreSQL literals, so `EXCEPT ALL` both ways proves every value reads
back exactly as pyarrow wrote it.

Files: types.arrow (every mapped type, NULLs, 3 batches), types_lz4.arrow
and types_zstd.arrow (the same, compressed bodies), struct.arrow (a Struct
column), sorted.arrow (10 batches sorted by ymd, with min_values /
max_values statistics as pg2arrow writes them), map.arrow and union.arrow
(unsupported types), nostats.arrow (a copy of types.arrow the server may
rewrite: statistics added to its footer), and damaged files: short.arrow, badmagic.arrow,
edgeconv.arrow (char(n) with multibyte characters, 38-digit
decimals), decnull.arrow / decover.arrow (a decimal longer than its
precision and a date past PostgreSQL's last in a NULL slot / in a row),
truncated.arrow (the last batch cut off), badfooter.arrow, badbuffer.arrow
(a buffer offset past the body), badutf8.arrow (invalid UTF-8 in Utf8).
"""
import datetime as dt
import decimal
import os
import struct
import sys

import pyarrow as pa
import pyarrow.ipc as ipc

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

N = 9  # rows per batch; 3 batches


def rows(i):
    """Row i of types.arrow as Python values (None: NULL)."""
    n = i % 9 == 4  # a row of NULLs in every batch
    s = ["", "abc", "日本語テキスト", "ÄÖÜ ß", "x" * 300, "O'Reilly", "tab\there", "末尾 ", "z"][i % 9]
    return {
        "id": i,
        "i8": None if n else [-128, 127, 0, -1, 5, 7, 9, 11, 13][i % 9],
        "i16": None if n else [-32768, 32767, 0, -1, 0, 2, 3, 4, 5][i % 9] + (i % 3 if i % 9 > 1 else 0),
        "i32": None if n else [-2**31, 2**31 - 1, 0, i * 1000, 0, -i, 42, 43, 44][i % 9],
        "i64": None if n else [-2**63, 2**63 - 1, 0, i * 10**12, 0, -i, 1, 2, 3][i % 9],
        "u8": None if n else [0, 255, 1, 2, 0, 3, 4, 5, 6][i % 9],
        "u16": None if n else [0, 65535, 1, 2, 0, 3, 4, 5, 6][i % 9],
        "u32": None if n else [0, 2**32 - 1, 1, 2, 0, 3, 4, 5, 6][i % 9],
        "u64": None if n else [0, 2**64 - 1, 2**63, 2, 0, 3, 4, 5, i][i % 9],
        "f16": None if n else [1.5, -2.25, 65504.0, 0.0, 0, 0.125, float("inf"), 1024.0, -0.5][i % 9],
        "f32": None if n else [0.5, -1.25, 3.4e38, float("nan"), 0, 1e-30, float("-inf"), 7.0, i / 4][i % 9],
        "f64": None if n else [0.1, -1e308, 1e-300, float("nan"), 0, 2.5, float("inf"), 1 / 3, i * 1.5][i % 9],
        "b": None if n else (i % 2 == 0),
        "s": None if n else s,
        "ls": None if n else s[::-1],
        "bin": None if n else bytes([i % 256, 0, 255, 10])[: i % 5],
        "lbin": None if n else bytes(range(i % 7)),
        "fsb": None if n else bytes([i, 0, 1, 255]),
        "bp": None if n else ["ab   ", "abcde", "     ", "x    ", "", "q r  ", "12345", "zz   ", "y    "][i % 9].encode(),
        "dec": None if n else decimal.Decimal([
            "0.000", "-123456789.123", "999999999.999", "1.500", "0", "-0.001", "42.420", "7.000", "3.141"][i % 9]),
        "d32": None if n else dt.date(2000, 1, 1) + dt.timedelta(days=[0, -1, 1, 10000, 0, -730000, 2900000, 365, i][i % 9]),
        "d64": None if n else dt.date(1970, 1, 1) + dt.timedelta(days=[0, -1, 1, 20000, 0, -3, 5, 7, i][i % 9]),
        "t32s": None if n else dt.time(i % 24, i % 60, (i * 7) % 60),
        "t32ms": None if n else dt.time(23, 59, 59, 999000 if i % 2 else 1000),
        "t64us": None if n else dt.time(0, 0, 0, i),
        "t64ns": None if n else (i * 3_600_000_000_123 + 999) % 86_400_000_000_000,
        "ts_s": None if n else dt.datetime(1999, 12, 31, 23, 59, 59) + dt.timedelta(seconds=i * 86_399),
        "ts_ms": None if n else dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=i * 123_456_789 - 10**9),
        "ts_us": None if n else dt.datetime(2024, 2, 29, 12, 0, 0, i),
        "ts_ns": None if n else 1_700_000_000_123_456_789 + i * 1_001 - (10**18 if i % 2 else 0),
        "tstz": None if n else dt.datetime(2021, 6, 1, 0, 0, i, tzinfo=dt.timezone.utc),
        "iv": None if n else pa.MonthDayNano([i - 5, i * 3, i * 1_000_000_123]),
        "dict": None if n else ["red", "green", "blue", "日本"][i % 4],
        "lst": None if n else [[], [1, None, 3], [i], [None], [], [2**31 - 1, -2**31], [7, 8, 9, 10], [0], [i, i]][i % 9],
        "llst": None if n else [["a", None], [], ["日本", "b"], [None], [], ["x"], ["y", "z"], [""], ["q"]][i % 9],
    }


FIELDS = [
    pa.field("id", pa.int32(), nullable=False),
    pa.field("i8", pa.int8()), pa.field("i16", pa.int16()), pa.field("i32", pa.int32()), pa.field("i64", pa.int64()),
    pa.field("u8", pa.uint8()), pa.field("u16", pa.uint16()), pa.field("u32", pa.uint32()), pa.field("u64", pa.uint64()),
    pa.field("f16", pa.float16()), pa.field("f32", pa.float32()), pa.field("f64", pa.float64()),
    pa.field("b", pa.bool_()), pa.field("s", pa.utf8()), pa.field("ls", pa.large_utf8()),
    pa.field("bin", pa.binary()), pa.field("lbin", pa.large_binary()), pa.field("fsb", pa.binary(4)),
    pa.field("bp", pa.binary(5), metadata={"pg_type": "bpchar"}),
    pa.field("dec", pa.decimal128(12, 3)),
    pa.field("d32", pa.date32()), pa.field("d64", pa.date64()),
    pa.field("t32s", pa.time32("s")), pa.field("t32ms", pa.time32("ms")),
    pa.field("t64us", pa.time64("us")), pa.field("t64ns", pa.time64("ns")),
    pa.field("ts_s", pa.timestamp("s")), pa.field("ts_ms", pa.timestamp("ms")),
    pa.field("ts_us", pa.timestamp("us")), pa.field("ts_ns", pa.timestamp("ns")),
    pa.field("tstz", pa.timestamp("us", tz="UTC")),
    pa.field("iv", pa.month_day_nano_interval()),
    pa.field("dict", pa.dictionary(pa.int32(), pa.utf8())),
    pa.field("lst", pa.list_(pa.int32())), pa.field("llst", pa.large_list(pa.utf8())),
]
SCHEMA = pa.schema(FIELDS)


def f16_array(vals):
    valid = [v is not None for v in vals]
    bits = bytearray((len(vals) + 7) // 8)
    for k, ok in enumerate(valid):
        if ok:
            bits[k // 8] |= 1 << (k % 8)
    data = struct.pack("<%de" % len(vals), *[v if v is not None else 0.0 for v in vals])
    return pa.Array.from_buffers(pa.float16(), len(vals), [pa.py_buffer(bytes(bits)), pa.py_buffer(data)],
                                 null_count=valid.count(False))


def batch(start):
    rs = [rows(i) for i in range(start, start + N)]
    cols = []
    for f in FIELDS:
        vals = [r[f.name] for r in rs]
        if f.name == "f16":
            cols.append(f16_array(vals))
        elif f.name == "dict":
            words = pa.array(["red", "green", "blue", "日本"])
            idx = [None if v is None else words.to_pylist().index(v) for v in vals]
            cols.append(pa.DictionaryArray.from_arrays(pa.array(idx, pa.int32()), words))
        else:
            cols.append(pa.array(vals, f.type))
    return pa.record_batch(cols, schema=SCHEMA)


def write(name, batches, schema=SCHEMA, **opts):
    path = os.path.join(out, name)
    with ipc.new_file(path, schema, options=ipc.IpcWriteOptions(**opts)) as w:
        for b in batches:
            w.write_batch(b)
    return path


batches = [batch(0), batch(N), batch(2 * N)]
write("types.arrow", batches)
write("types_lz4.arrow", batches, compression="lz4")
write("types_zstd.arrow", batches, compression="zstd")


# --- expected values as PostgreSQL literals ------------------------------
def lit(name, v):
    if v is None:
        return "NULL"

    def q(s):
        return "'" + s.replace("'", "''") + "'"

    if name in ("f16", "f32", "f64"):
        s = "NaN" if v != v else ("Infinity" if v == float("inf") else "-Infinity" if v == float("-inf") else repr(v))
        return q(s)
    if name in ("s", "ls", "dict"):
        return q(v)
    if name in ("bin", "lbin", "fsb"):
        return q("\\x" + v.hex())
    if name == "bp":
        return q(v.decode())
    if name in ("d32", "d64", "t32s", "t32ms", "t64us", "ts_s", "ts_ms", "ts_us", "tstz"):
        return q(v.isoformat())
    if name == "t64ns":
        us = v // 1000
        return q("%02d:%02d:%02d.%06d" % (us // 3_600_000_000, us // 60_000_000 % 60, us // 1_000_000 % 60, us % 1_000_000))
    if name == "ts_ns":
        us = v // 1000
        t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=us)
        return q(t.isoformat())
    if name == "iv":
        return "(interval '%d months' + interval '%d days' + %d * interval '1 microsecond')" % (
            v.months, v.days, int(v.nanoseconds / 1000))
    if name == "lst":
        return q("{" + ",".join("NULL" if x is None else str(x) for x in v) + "}")
    if name == "llst":
        return "ARRAY[" + ",".join("NULL" if x is None else q(x) for x in v) + "]::text[]"
    if name == "b":
        return "true" if v else "false"
    return str(v)


PGTYPES = {
    "id": "int4", "i8": "int2", "i16": "int2", "i32": "int4", "i64": "int8", "u8": "int2", "u16": "int4",
    "u32": "int8", "u64": "numeric", "f16": "float2", "f32": "float4", "f64": "float8", "b": "bool", "s": "text",
    "ls": "text", "bin": "bytea", "lbin": "bytea", "fsb": "bytea", "bp": "bpchar(5)", "dec": "numeric(12,3)",
    "d32": "date", "d64": "date", "t32s": "time", "t32ms": "time", "t64us": "time", "t64ns": "time",
    "ts_s": "timestamp", "ts_ms": "timestamp", "ts_us": "timestamp", "ts_ns": "timestamp", "tstz": "timestamptz",
    "iv": "interval", "dict": "text", "lst": "int4[]", "llst": "text[]",
}
with open(os.path.join(out, "expected.sql"), "w") as f:
    f.write("CREATE TABLE arrow_expected (%s);\n" % ", ".join(f"{n} {t}" for n, t in PGTYPES.items()))
    for i in range(3 * N):
        r = rows(i)
        f.write("INSERT INTO arrow_expected VALUES (%s);\n" % ", ".join(lit(n, r[n]) for n in PGTYPES))

# --- a Struct column --------------------------------------------------------
st_type = pa.struct([("a", pa.int32()), ("b", pa.utf8())])
st = pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": "日本"}, {"a": 4, "b": None}], st_type)
write("struct.arrow", [pa.record_batch([pa.array([1, 2, 3, 4], pa.int32()), st], names=["id", "st"])],
      schema=pa.schema([("id", pa.int32()), ("st", st_type)]))

# --- sorted with statistics (pg2arrow --stat) --------------------------------
nb, per = 10, 1000
ymd = [19940101 + (k // per) * 100 + (k % per) % 28 for k in range(nb * per)]  # batch b = month b+1 of 1994
val = [k % 97 for k in range(nb * per)]
mins = ",".join(str(min(ymd[b * per:(b + 1) * per])) for b in range(nb))
maxs = ",".join(str(max(ymd[b * per:(b + 1) * per])) for b in range(nb))
sschema = pa.schema([pa.field("ymd", pa.int32(), metadata={"min_values": mins, "max_values": maxs}),
                     pa.field("val", pa.int64())])
write("sorted.arrow", [pa.record_batch([pa.array(ymd[b * per:(b + 1) * per], pa.int32()),
                                        pa.array(val[b * per:(b + 1) * per], pa.int64())], schema=sschema)
                       for b in range(nb)], schema=sschema)

# --- unsupported types --------------------------------------------------------
m = pa.array([[("k", 1)], []], pa.map_(pa.utf8(), pa.int32()))
write("map.arrow", [pa.record_batch([pa.array([1, 2], pa.int32()), m], names=["id", "m"])],
      schema=pa.schema([("id", pa.int32()), ("m", m.type)]))
u = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2], pa.int32()), pa.array(["a", "b"])])
write("union.arrow", [pa.record_batch([pa.array([1, 2], pa.int32()), u], names=["id", "u"])],
      schema=pa.schema([("id", pa.int32()), ("u", u.type)]))

# --- dictionaries whose values hold NULLs ------------------------------------
# a row is NULL when its index is NULL or when the value it points at is
# (the Arrow project's integration files have such dictionaries)
dn_idx = pa.array([0, 1, 2, None, 1, 0, 2, 2], pa.int32())
dn_i = pa.DictionaryArray.from_arrays(dn_idx, pa.array([10, None, 30], pa.int64()))
dn_s = pa.DictionaryArray.from_arrays(dn_idx, pa.array(["x", None, "zz"], pa.utf8()))
write("dictnull.arrow", [pa.record_batch([pa.array(range(1, 9), pa.int32()), dn_i, dn_s], names=["id", "k", "s"])],
      schema=pa.schema([("id", pa.int32()), ("k", dn_i.type), ("s", dn_s.type)]))

# --- values the device's one-pass conversions must leave to the value-by-value
# one: char(n) holding a multibyte character (n bytes are fewer than n
# characters, which bpchar's input pads), and decimals of 38 digits
bpmb = pa.array([b"ab    ", "\u00f1    ".encode(), None, b"      ", "\u65e5\u672c".encode()], pa.binary(6))
wide = pa.array([decimal.Decimal("123456789012345678901234567890123456.78"), None,
                 decimal.Decimal("-99999999999999999999999999999999999.99"), decimal.Decimal("0.01"),
                 decimal.Decimal("1.00")], pa.decimal128(38, 2))
write("edgeconv.arrow", [pa.record_batch([pa.array(range(1, 6), pa.int32()), bpmb, wide], names=["id", "bp", "w"])],
      schema=pa.schema([("id", pa.int32()), pa.field("bp", pa.binary(6), metadata={"pg_type": "bpchar"}),
                        ("w", pa.decimal128(38, 2))]))

# decimals longer than their type allows (Arrow does not check): in a NULL
# slot, whose bytes are never read (decnull.arrow), and in a row
# (decover.arrow: numeric(5,2)'s "numeric field overflow", with pg_strom
# on and off); 130 rows, so that the long value lies in the second
# 64-row stretch an engine reads from the file
dmant = [(i * 7919) % 99999 - 49999 for i in range(130)]
dmant[100] = 10 ** 7
dbytes = pa.py_buffer(b"".join(m.to_bytes(16, "little", signed=True) for m in dmant))
dvalid = bytearray(b"\xff" * 17)
dvalid[100 // 8] &= ~(1 << (100 % 8)) & 0xff
# (and a date past PostgreSQL's last in the same row)
days = [i * 97 - 5000 for i in range(130)]
days[100] = 2 ** 31 - 1
tbytes = pa.py_buffer(struct.pack("<130i", *days))
dnull = pa.Array.from_buffers(pa.decimal128(5, 2), 130, [pa.py_buffer(bytes(dvalid)), dbytes], null_count=1)
dover = pa.Array.from_buffers(pa.decimal128(5, 2), 130, [None, dbytes], null_count=0)
tnull = pa.Array.from_buffers(pa.date32(), 130, [pa.py_buffer(bytes(dvalid)), tbytes], null_count=1)
tover = pa.Array.from_buffers(pa.date32(), 130, [None, tbytes], null_count=0)
for name, arr, darr in (("decnull.arrow", dnull, tnull), ("decover.arrow", dover, tover)):
    write(name, [pa.record_batch([pa.array(range(130), pa.int32()), arr, darr], names=["id", "d", "dt"])],
          schema=pa.schema([("id", pa.int32()), ("d", pa.decimal128(5, 2)), ("dt", pa.date32())]))

# --- damaged files --------------------------------------------------------------
good = open(os.path.join(out, "types.arrow"), "rb").read()
def damaged(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
damaged("short.arrow", good[:12])
damaged("badmagic.arrow", b"ARROW2" + good[6:])
# the footer survives, but the body of the last batch is gone
footer_len = struct.unpack("<i", good[-10:-6])[0]
damaged("truncated.arrow", good[:len(good) // 3] + good[-10 - footer_len:])
damaged("badfooter.arrow", good[:-10 - footer_len] + bytes(b ^ 0x5a for b in good[-10 - footer_len:-10]) + good[-10:])
# a buffer offset far past the body: rewrite the first batch's first
# buffer offset in its message header (found by its little-endian value)
two = pa.record_batch([pa.array([1, 2, 3], pa.int64())], names=["x"])
small = bytearray(write("small.arrow", [two], schema=two.schema) and open(os.path.join(out, "small.arrow"), "rb").read())
# the values buffer of x: the Buffer struct {offset, length 24} in the
# batch's message header; make its length reach far past the body
k = max(small.find(struct.pack("<qq", 0, 24)), small.find(struct.pack("<qq", 8, 24)))
if k < 0:
    raise SystemExit("gen.py: cannot find the buffer to damage")
small[k + 8:k + 16] = struct.pack("<q", 1 << 40)
damaged("badbuffer.arrow", bytes(small))
# a footer Block moved by 4 bytes (no longer on the 8-byte boundary the
# format requires): the record batch's Block {offset, metaDataLength} is
# found in the footer by its values
una = bytearray(small)
fl = struct.unpack("<i", una[-10:-6])[0]
fstart = len(una) - 10 - fl
cont = una.find(b"\xff\xff\xff\xff", 8)                   # the schema message
rb_at = cont + 8 + struct.unpack("<i", una[cont + 4:cont + 8])[0]  # the record batch message
rb_meta = 8 + struct.unpack("<i", una[rb_at + 4:rb_at + 8])[0]
j = una.find(struct.pack("<qi", rb_at, rb_meta), fstart)
if j < 0:
    raise SystemExit("gen.py: cannot find the record batch block")
una[j:j + 8] = struct.pack("<q", rb_at + 4)
damaged("unaligned.arrow", bytes(una))
bad = pa.Array.from_buffers(pa.utf8(), 2, [None, pa.py_buffer(struct.pack("<3i", 0, 2, 4)), pa.py_buffer(b"ok\xff\xfe")])
write("badutf8.arrow", [pa.record_batch([pa.array([1, 2], pa.int32()), bad], names=["id", "s"])],
      schema=pa.schema([("id", pa.int32()), ("s", pa.utf8())]))
# a copy pgstrom.arrow_fdw_write_stats may rewrite (the server's user
# writes it)
with open(os.path.join(out, "nostats.arrow"), "wb") as f:
    f.write(good)
os.chmod(out, 0o755)
for name in os.listdir(out):
    os.chmod(os.path.join(out, name), 0o666 if name == "nostats.arrow" else 0o644)
# a folder the server's user writes (writable Arrow_Fdw tables, their
# undo files): test/sql/arrow_fdw_write.sql
os.makedirs(os.path.join(out, "w"), exist_ok=True)
os.chmod(os.path.join(out, "w"), 0o1777)
print(f"gen.py: wrote {len(os.listdir(out))} files to {out}")
