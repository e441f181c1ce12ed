"""test_bcolz_corrupt.py - corrupt bcolz carrays and ctables fail cleanly.

Every dataset here is a copy of an upstream fixture (tests/fixtures/upstream/
bcolz) in a temporary folder, damaged with Python as docs/formats/bcolz.md
§5, §6 and §11 describe: bad "blpk" magic / blpk version / nchunks, Blosc
headers whose sizes disagree with the file, truncated chunk files, chunks
whose decompressed size disagrees with the rows they must hold, missing
chunk files, columns of different lengths, unparseable meta/storage,
meta/sizes and __rootdirs__, unsupported dtypes, a __rootdirs__ naming a
missing column. Each must give an sqlite3.Error whose message starts with
"bcolz: ", names the file (its basename at least) and says what is wrong, in
the table-valued form bcolz(path) and the CREATE VIRTUAL TABLE form -- never
a crash or a wrong value. Stale extra chunk files (and bytes after the Blosc
buffer) must be ignored: values still match expected/<name>.json. With one
damaged chunk in one column: the other columns read, count(*) works, the
rows of the other chunks of that column read exactly as expected, and every
query touching the bad chunk fails. Each damaged case has an intact control
(the same query on an undamaged copy must work), so a failure is caused by
the damage. Usage: test_bcolz_corrupt.py BUILD_DIR"""
import json
import math
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

D = os.path.join(FIXTURES, "bcolz")
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="bcolz-corrupt-")
T = TMP.name
_n = [0]


# ---------------------------------------------------------------- helpers

def fresh(name):
    """A private copy of fixture `name`; a new folder every call, so the
    extension never sees a dataset it opened before it was damaged."""
    _n[0] += 1
    d = os.path.join(T, "%03d-%s" % (_n[0], name))
    shutil.copytree(os.path.join(D, name), d)
    return d


def expected(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        return json.load(f)


def patch(path, off, data):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(data)


def u32(path, off):
    with open(path, "rb") as f:
        f.seek(off)
        return struct.unpack("<I", f.read(4))[0]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def edit_json(path, fn):
    with open(path) as f:
        v = json.load(f)
    fn(v)
    write(path, json.dumps(v) + "\n")


def vt(path):
    """CREATE VIRTUAL TABLE over path; returns the table name."""
    _n[0] += 1
    t = "temp.bz%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s)" % (t, sql_quote(path)))
    return t


def q(sql, *params):
    return conn.execute(sql, params).fetchall()


def fails(fn, name, *needles, prefix="bcolz: "):
    """fn() must raise sqlite3.Error starting with prefix ("bcolz: ") and
    holding every needle (a str, or a tuple of alternatives;
    case-insensitive)."""
    try:
        got = fn()
    except sqlite3.Error as e:
        msg = str(e)
        low = msg.lower()
        missing = []
        for n in needles:
            alts = n if isinstance(n, tuple) else (n,)
            if not any(a.lower() in low for a in alts):
                missing.append(n)
        ok = msg.startswith(prefix) and not missing
        return C.check(ok, name, "error %r (want prefix %r and %r)" % (msg, prefix, missing))
    return C.check(False, name, "no error, got %r" % (repr(got)[:300],))


def works(fn, name):
    """fn() must not raise; returns its result (None after an error)."""
    try:
        got = fn()
    except sqlite3.Error as e:
        C.check(False, name, "error %r" % (str(e),))
        return None
    C.check(True, name)
    return got


def both_fail(path, name, *needles, sql_tvf="SELECT row FROM bcolz(?)", sql_vt="SELECT * FROM %s"):
    """The damage is reported through the table-valued form and through
    CREATE VIRTUAL TABLE (+ a scan)."""
    fails(lambda: q(sql_tvf, path), name + " [bcolz()]", *needles)
    fails(lambda: q(sql_vt % vt(path)), name + " [CREATE]", *needles)


SPECIAL = {"NaN": None, "Infinity": float("inf"), "-Infinity": float("-inf")}


def sql_value(cell, dtype):
    """The fixtures' typed JSON cell -> the value of the typed column (only
    the dtypes of the fixtures used here: ints, floats, bool, S, U)."""
    if isinstance(cell, dict) and "$bytes_hex" in cell:
        b = bytes.fromhex(cell["$bytes_hex"])
        try:
            return b.decode("utf-8")
        except UnicodeDecodeError:
            return b
    if isinstance(cell, bool):
        return int(cell)
    if isinstance(cell, str) and dtype[1] == "f" and cell in SPECIAL:
        return SPECIAL[cell]
    return cell


def json_value(cell, dtype):
    """The same cell as it appears in bcolz()'s row JSON."""
    v = sql_value(cell, dtype)
    if isinstance(cell, bool):
        return cell
    return v


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b) or (a == b and {type(a), type(b)} <= {int, float})


def check_rows(path, name, label, cols=None, rowids=None):
    """Every expected row (restricted to rowids / column names cols) read
    through the CREATE form and (all columns only) the row JSON of bcolz()
    equals upstream's."""
    e = expected(name)
    names = e["names"]
    dtypes = [c["dtype"] for c in e["columns"]]
    idx = [names.index(c) for c in (cols or names)]
    carray = e["kind"] == "carray"
    t = vt(path)
    sel = ", ".join('"%s"' % names[i] for i in idx)
    bad = []
    n = 0
    for rowid, cells in e["rows"]:
        if rowids is not None and rowid not in rowids:
            continue
        n += 1
        try:
            got = q("SELECT %s FROM %s WHERE rowid = ?" % (sel, t), rowid)
            js = q("SELECT row FROM bcolz(?) WHERE rowid = ?", path, rowid) if cols is None else [("{}",)]
        except sqlite3.Error as ex:
            bad.append((rowid, "error %s" % ex))
            continue
        if len(got) != 1 or len(js) != 1:
            bad.append((rowid, "rows %r %r" % (got, js)))
            continue
        obj = json.loads(js[0][0])
        for k, i in enumerate(idx):
            want = sql_value(cells[i], dtypes[i])
            if not same(got[0][k], want):
                bad.append((rowid, names[i], got[0][k], want))
            if cols is not None:
                continue
            jv = obj if carray else obj.get(names[i], "<absent>")
            jwant = json_value(cells[i], dtypes[i])
            if not same(jv, jwant) and not (carray and same(jv, str(jwant))):
                bad.append((rowid, names[i], "json", jv, jwant))
    C.check(n > 0 and not bad, "%s: %d expected rows match" % (label, n), bad[:5])


def count_is(path, want, label):
    try:
        a = q("SELECT count(*) FROM bcolz(?)", path)[0][0]
        b = q("SELECT count(*) FROM %s" % vt(path))[0][0]
    except sqlite3.Error as ex:
        return C.check(False, label, "error %s" % ex)
    return C.check(a == want and b == want, label, "got %r / %r, want %r" % (a, b, want))


# ---------------------------------------------------------------- controls
# The undamaged copies read: every failure below comes from the damage.

for name in ("carray_int32", "carray_zstd", "ctable_basic", "ctable_trimmed",
             "carray_trimmed_stale"):
    d = fresh(name)
    e = expected(name)
    count_is(d, e["len"], "control %s: count(*)" % name)
    check_rows(d, name, "control %s" % name)
    works(lambda: q("SELECT * FROM %s" % vt(d)), "control %s: full scan" % name)

# ---------------------------------------------------------------- chunk files

d = fresh("carray_int32")
patch(d + "/data/__0.blp", 0, b"blpx")
both_fail(d, "bad blpk magic", "__0.blp", "magic")

d = fresh("carray_zstd")
patch(d + "/data/__1.blp", 0, b"\0\0\0\0")
both_fail(d, "zstd: bad blpk magic (zeros)", "__1.blp", "magic")

d = fresh("carray_int32")
patch(d + "/data/__1.blp", 4, b"\x02")
both_fail(d, "blpk version 2", "__1.blp", "version")

d = fresh("carray_int32")
patch(d + "/data/__1.blp", 8, struct.pack("<q", 2))
both_fail(d, "blpk nchunks 2", "__1.blp", "nchunks")

for v in (0, 3):
    d = fresh("carray_zstd")
    patch(d + "/data/__0.blp", 16, bytes([v]))
    both_fail(d, "Blosc version %d" % v, "__0.blp", ("version", "blosc"))

# Blosc cbytes (header offset 12, file offset 28) vs the file size.
for name, chunk in (("carray_int32", "__1.blp"), ("carray_zstd", "__2.blp")):
    d = fresh(name)
    p = d + "/data/" + chunk
    size = os.path.getsize(p)
    patch(p, 28, struct.pack("<I", size - 16 + 1))
    both_fail(d, "%s: Blosc cbytes one past the file" % name, chunk, ("cbytes", "compressed", "blosc"))
    d = fresh(name)
    p = d + "/data/" + chunk
    patch(p, 28, struct.pack("<I", 0x7FFFFFF0))
    both_fail(d, "%s: Blosc cbytes 2 GiB" % name, chunk, ("cbytes", "compressed", "blosc"))
    # cbytes below the stream's real end: the bytes it leaves out are still
    # in the file, so an error or exactly the right values are both fine.
    d = fresh(name)
    p = d + "/data/" + chunk
    patch(p, 28, struct.pack("<I", size - 16 - 8))
    try:
        q("SELECT * FROM %s" % vt(d))
        check_rows(d, name, "%s: Blosc cbytes 8 short of the data: values exact" % name)
    except sqlite3.Error:
        both_fail(d, "%s: Blosc cbytes 8 short of the data" % name, chunk, ("cbytes", "compressed", "blosc"))
    d = fresh(name)
    p = d + "/data/" + chunk
    patch(p, 28, struct.pack("<I", 15))
    both_fail(d, "%s: Blosc cbytes below its header" % name, chunk, ("cbytes", "compressed", "blosc"))
    d = fresh(name)
    p = d + "/data/" + chunk
    patch(p, 24, struct.pack("<I", 0))
    both_fail(d, "%s: Blosc blocksize 0" % name, chunk, "blosc")

# Bytes after 16 + cbytes are ignored (§5): values as upstream.
d = fresh("carray_int32")
with open(d + "/data/__1.blp", "ab") as f:
    f.write(b"trailing junk" * 7)
check_rows(d, "carray_int32", "bytes after the Blosc buffer ignored")

# Truncated chunk files.
for cut in ("minus 100", "minus 1", 31, 20, 16, 0):
    d = fresh("carray_int32")
    p = d + "/data/__1.blp"
    size = os.path.getsize(p)
    n = size - int(cut.split()[1]) if isinstance(cut, str) else cut
    os.truncate(p, n)
    both_fail(d, "chunk truncated to %d bytes (%s)" % (n, cut), "__1.blp",
              ("short", "truncat", "compressed bytes", "cbytes"))
d = fresh("carray_zstd")
os.truncate(d + "/data/__0.blp", os.path.getsize(d + "/data/__0.blp") // 2)
both_fail(d, "zstd chunk cut in half", "__0.blp", ("short", "truncat", "compressed bytes", "cbytes"))

# Decompressed size (Blosc nbytes) vs the rows the chunk must hold.
d = fresh("carray_int32")  # the leftover (34467 rows) where full chunk 0 (65536) must be
shutil.copy(d + "/data/__1.blp", d + "/data/__0.blp")
both_fail(d, "full chunk holding the leftover's rows", "__0.blp", ("must hold", "nbytes", "rows"))
d = fresh("carray_zstd")  # full chunk 0 in its header 4 bytes short
p = d + "/data/__0.blp"
patch(p, 20, struct.pack("<I", u32(p, 20) - 4))
both_fail(d, "full chunk: header nbytes 4 short", "__0.blp", ("must hold", "nbytes", "rows"))
d = fresh("carray_zstd")  # and 4 bytes long
p = d + "/data/__1.blp"
patch(p, 20, struct.pack("<I", u32(p, 20) + 4))
both_fail(d, "full chunk: header nbytes 4 long", "__1.blp", ("must hold", "nbytes", "rows", "blosc"))
d = fresh("carray_int32")  # meta/sizes asks 7 more rows than the leftover holds
edit_json(d + "/meta/sizes", lambda v: v.update(shape=[100010], nbytes=400040))
both_fail(d, "leftover chunk shorter than meta/sizes needs", "__1.blp", ("must hold", "nbytes", "rows"))
d = fresh("ctable_trimmed")  # 8 full chunks of 1000: make column b need a 9th (stale __8, 250 rows)
for c in ("a", "b", "s"):
    edit_json(d + "/%s/meta/sizes" % c, lambda v: v.update(shape=[8600]))
both_fail(d, "stale leftover of 250 rows asked for 600", "__8.blp", ("must hold", "nbytes", "rows"))

# Missing chunk files.
d = fresh("carray_int32")
os.remove(d + "/data/__1.blp")
both_fail(d, "missing leftover chunk file", "__1.blp", ("not found", "missing", "no such"))
d = fresh("carray_zstd")
os.remove(d + "/data/__0.blp")
both_fail(d, "missing full chunk file", "__0.blp", ("not found", "missing", "no such"))
d = fresh("carray_zstd")
os.remove(d + "/data/__1.blp")
os.mkdir(d + "/data/__1.blp")
both_fail(d, "chunk file is a directory", "__1.blp")

# ---------------------------------------------------------------- metadata

d = fresh("ctable_basic")
edit_json(d + "/x/meta/sizes", lambda v: v.update(shape=[49999]))
both_fail(d, "one column a row short", "x", ("rows", "length"))
d = fresh("ctable_basic")
edit_json(d + "/small/meta/sizes", lambda v: v.update(shape=[50001]))
both_fail(d, "one column a row long", "small", ("rows", "length"))
d = fresh("ctable_basic")
edit_json(d + "/id/meta/sizes", lambda v: v.update(shape=[0]))
both_fail(d, "first column empty", "id", ("rows", "length"))

for label, text in (("truncated JSON", '{"dtype": "int32", '), ("empty file", ""),
                    ("not JSON", "dtype: int32\n"), ("a JSON list", "[1, 2]\n")):
    d = fresh("carray_int32")
    write(d + "/meta/storage", text)
    both_fail(d, "meta/storage: %s" % label, "storage", ("json", "invalid", "object"))
for label, text in (("truncated JSON", '{"shape": [100003,'), ("empty file", ""),
                    ("not JSON", "shape=100003\n")):
    d = fresh("ctable_basic")
    write(d + "/label/meta/sizes", text)
    both_fail(d, "column meta/sizes: %s" % label, "sizes", ("json", "invalid"))
d = fresh("carray_int32")
write(d + "/meta/sizes", '{"nbytes": 400012}\n')
both_fail(d, "meta/sizes without shape", "sizes", "shape")
d = fresh("carray_int32")
write(d + "/meta/sizes", '{"shape": [-5]}\n')
both_fail(d, "meta/sizes negative shape", "sizes", "shape")
d = fresh("carray_int32")
write(d + "/meta/sizes", '{"shape": "100003"}\n')
both_fail(d, "meta/sizes shape a string", "sizes", "shape")
d = fresh("carray_int32")
os.remove(d + "/meta/sizes")
both_fail(d, "meta/sizes missing", "sizes")
d = fresh("carray_int32")
edit_json(d + "/meta/storage", lambda v: v.update(chunklen=0))
both_fail(d, "meta/storage chunklen 0", "storage", "chunklen")
d = fresh("carray_int32")
edit_json(d + "/meta/storage", lambda v: v.pop("chunklen"))
both_fail(d, "meta/storage without chunklen", "storage", "chunklen")
d = fresh("carray_int32")
edit_json(d + "/meta/storage", lambda v: v.pop("dtype"))
both_fail(d, "meta/storage without dtype", "storage", "dtype")

for dt in ("complex128", "float128", "|V8", "[('a', '<i4'), ('b', '<f8')]", "int33",
           "datetime64", "<c16", "", "string"):
    d = fresh("carray_int32")
    edit_json(d + "/meta/storage", lambda v: v.update(dtype=dt))
    both_fail(d, "unsupported dtype %r" % dt, "storage", "dtype", "'%s'" % dt)
d = fresh("ctable_basic")
edit_json(d + "/flag/meta/storage", lambda v: v.update(dtype="complex64"))
both_fail(d, "ctable column with unsupported dtype", "flag", "complex64")
d = fresh("carray_int32")  # a dtype whose size disagrees with the chunks' bytes
edit_json(d + "/meta/storage", lambda v: v.update(dtype="int64"))
both_fail(d, "int32 chunks read as int64", "__0.blp", ("must hold", "nbytes", "rows", "typesize"))

d = fresh("ctable_basic")
write(d + "/__rootdirs__", '{"names": ["id", "ghost", "x"]}\n')
both_fail(d, "__rootdirs__ names a missing column", "ghost", ("directory", "missing", "not found"))
d = fresh("ctable_basic")
shutil.rmtree(d + "/label")
both_fail(d, "column directory removed", "label", ("directory", "missing", "not found"))
d = fresh("ctable_basic")
shutil.rmtree(d + "/name/meta")
both_fail(d, "column without meta/", "name", ("storage", "sizes", "meta"))
d = fresh("ctable_basic")
write(d + "/__rootdirs__", '{"names": ["id", "x"')
both_fail(d, "__rootdirs__ truncated JSON", "__rootdirs__", ("json", "invalid"))
d = fresh("ctable_basic")
write(d + "/__rootdirs__", '{"names": "id"}\n')
both_fail(d, "__rootdirs__ names not a list", "__rootdirs__", "names")
d = fresh("ctable_basic")
write(d + "/__rootdirs__", '{"names": ["id", "../x"]}\n')
both_fail(d, "__rootdirs__ name escaping the root", "__rootdirs__", "name")
d = fresh("ctable_basic")
write(d + "/__attrs__", '{"title": ')
both_fail(d, "invalid table __attrs__", "__attrs__", ("json", "invalid"))
fails(lambda: q("SELECT * FROM bcolz_attrs(?)", d), "invalid table __attrs__ [bcolz_attrs()]",
      "__attrs__", ("json", "invalid"), prefix="bcolz_attrs: ")
d = fresh("ctable_basic")
write(d + "/x/__attrs__", '[1, 2')
both_fail(d, "invalid column __attrs__", "__attrs__", ("json", "invalid"))
os.mkdir(os.path.join(T, "empty-dir"))
both_fail(os.path.join(T, "empty-dir"), "not a bcolz directory", "empty-dir", ("not a bcolz", "storage"))

# ---------------------------------------------------------------- stale files
# Extra chunk files beyond what meta/sizes needs are ignored.

d = fresh("carray_int32")
shutil.copy(d + "/data/__0.blp", d + "/data/__2.blp")
write(d + "/data/__3.blp", "garbage, not a chunk")
write(d + "/data/__1.blp.tmp", "garbage")
count_is(d, 100003, "stale extra chunks: count(*)")
check_rows(d, "carray_int32", "stale extra chunks (copy + garbage) ignored")
works(lambda: q("SELECT sum(value) FROM %s" % vt(d)), "stale extra chunks: full scan")

d = fresh("carray_trimmed_stale")
write(d + "/data/__2.blp", "garbage in place of the stale leftover")
count_is(d, 14, "garbage stale leftover: count(*)")
check_rows(d, "carray_trimmed_stale", "garbage stale leftover ignored")
got = works(lambda: q("SELECT value FROM %s ORDER BY rowid" % vt(d)), "garbage stale leftover: scan")
C.eq(got, [(100 + i,) for i in range(14)], "garbage stale leftover: scan values")

d = fresh("ctable_trimmed")
os.truncate(d + "/a/data/__8.blp", 3)
write(d + "/b/data/__8.blp", "")
os.remove(d + "/s/data/__8.blp")
shutil.copy(d + "/a/data/__0.blp", d + "/a/data/__9.blp")
count_is(d, 8000, "ctable stale chunks damaged: count(*)")
check_rows(d, "ctable_trimmed", "ctable stale chunks damaged/removed ignored")
got = works(lambda: q("SELECT count(*), sum(a) FROM %s WHERE a IS NOT NULL" % vt(d)),
            "ctable stale chunks: full scan of a")
C.eq(got, [(8000, sum(10 * i for i in range(8000)))], "ctable stale chunks: sum(a)")

# ---------------------------------------------------------------- one bad chunk
# ctable_basic column name (S16, chunklen 16384): chunk 1 = rows 16384..32767
# damaged; the other columns and chunks still read.

E = expected("ctable_basic")
NAMES = E["names"]
LO, HI = 16384, 32768
IN_BAD = [r for r, _ in E["rows"] if LO <= r < HI]
OUT_BAD = [r for r, _ in E["rows"] if not LO <= r < HI]
assert IN_BAD and OUT_BAD


def wrong_size(p):
    shutil.copy(os.path.join(os.path.dirname(p), "__3.blp"), p)


DAMAGES = (
    ("bad magic", lambda p: patch(p, 0, b"XXXX"), ("magic",)),
    ("truncated", lambda p: os.truncate(p, os.path.getsize(p) - 50), (("short", "truncat", "compressed bytes"),)),
    ("missing", os.remove, (("not found", "missing"),)),
    ("wrong decompressed size", wrong_size, (("must hold", "nbytes"),)),
    ("cbytes past the file", lambda p: patch(p, 28, struct.pack("<I", os.path.getsize(p))),
     (("compressed", "cbytes", "blosc"),)),
)

for label, damage, needles in DAMAGES:
    d = fresh("ctable_basic")
    damage(d + "/name/data/__1.blp")
    L = "name chunk 1 " + label
    t = vt(d)
    count_is(d, 50000, L + ": count(*)")
    others = [c for c in NAMES if c != "name"]
    got = works(lambda: q("SELECT count(*), count(id), sum(small), sum(flag) FROM %s" % t),
                L + ": scan of the other columns")
    if got:
        C.check(got[0][0] == 50000 and got[0][1] == 50000, L + ": other columns' row count", got)
    check_rows(d, "ctable_basic", L + ": other columns, every expected row", cols=others,
               rowids=None)
    # rows of the other chunks of the damaged column
    want = {r: sql_value(cells[NAMES.index("name")], "|S16") for r, cells in E["rows"]}
    bad = []
    for r in OUT_BAD:
        try:
            g = q("SELECT name FROM %s WHERE rowid = ?" % t, r)
            j = q("SELECT row FROM bcolz(?) WHERE rowid = ?", d, r)
            if g != [(want[r],)] or json.loads(j[0][0])["name"] != want[r]:
                bad.append((r, g, j, want[r]))
        except sqlite3.Error as ex:
            bad.append((r, str(ex)))
    C.check(not bad, L + ": %d rows outside the chunk read" % len(OUT_BAD), bad[:3])
    check_rows(d, "ctable_basic", L + ": whole rows outside the chunk", rowids=set(OUT_BAD))
    got = works(lambda: q("SELECT count(name), min(rowid), max(rowid) FROM %s WHERE rowid < %d" % (t, LO)),
                L + ": range scan of chunk 0")
    C.eq(got, [(LO, 0, LO - 1)], L + ": range scan of chunk 0 values")
    got = works(lambda: q("SELECT count(name) FROM %s WHERE rowid >= %d" % (t, HI)),
                L + ": range scan after the chunk")
    C.eq(got, [(50000 - HI,)], L + ": range scan after the chunk values")
    # anything touching the bad chunk fails, naming the chunk file
    for r in (IN_BAD[0], IN_BAD[-1], LO, HI - 1):
        fails(lambda: q("SELECT name FROM %s WHERE rowid = ?" % t, r),
              L + ": name of row %d" % r, "__1.blp", *needles)
    fails(lambda: q("SELECT row FROM bcolz(?) WHERE rowid = ?", d, IN_BAD[0]),
          L + ": bcolz() row %d" % IN_BAD[0], "__1.blp", *needles)
    fails(lambda: q("SELECT name FROM %s" % t), L + ": scan of name", "__1.blp", *needles)
    fails(lambda: q("SELECT count(name) FROM %s WHERE rowid BETWEEN %d AND %d" % (t, LO - 5, LO + 5)),
          L + ": range across the chunk edge", "__1.blp", *needles)
    fails(lambda: q("SELECT row FROM bcolz(?)", d), L + ": bcolz() scan", "__1.blp", *needles)
    fails(lambda: q("SELECT max(length(name)) FROM %s WHERE rowid IN (0, %d, 40000)" % (t, LO + 7)),
          L + ": IN list touching the chunk", "__1.blp", *needles)
    # the column the error names is the damaged one
    fails(lambda: q("SELECT name FROM %s WHERE rowid = ?" % t, LO), L + ": names the column dir",
          os.path.join("name", "data", "__1.blp"))

print("bcolz corrupt: %d passed, %d failed" % (C.passed, C.failed))
C.exit()
