"""test_table_edge_cases.py - edge cases of the SQL tables (the SQLite-layer
items of issues 11 and 12): a field named rowid does not hide the row
index (11.8), a table whose dataset is
gone can be dropped (11.11), relative paths survive a change of directory
(12.1), literal paths win over globs and comma lists (12.3), strict
columns= and CREATE-only options (12.7), datadings shard columns (12.10),
help in SQL (12.12), SQLITE_LIMIT_LENGTH before decompressing (11.13).
Datasets are written at test time into a temp dir.
Usage: test_table_edge_cases.py BUILD_DIR"""
import json
import os
import pickle
import shutil
import sqlite3
import struct
import sys
import tempfile

import msgpack
import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="table-edge-cases-")
T = TMP.name


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def rows(sql, *args, db=None):
    return (db or conn).execute(sql, args).fetchall()


def result(sql, *args, db=None):
    """The rows of sql, or the text of its error."""
    try:
        return rows(sql, *args, db=db)
    except sqlite3.Error as e:
        return str(e)


def error_of(fn):
    try:
        fn()
    except sqlite3.Error as e:
        return str(e)
    return None


def expect_error(fn, name, *needles):
    e = error_of(fn)
    if e is None:
        return C.check(False, name, "no error")
    missing = [n for n in needles if n not in e]
    return C.check(not missing, name, "error %r lacks %r" % (e, missing))


def datadings(path, samples):
    """A new-style datadings dataset (data, .offsets, .keys) of dict samples."""
    data = [msgpack.packb(s) for s in samples]
    offs = [0]
    for d in data:
        offs.append(offs[-1] + len(d))
    write(path, b"".join(data))
    write(path + ".offsets", b"".join(struct.pack(">Q", o) for o in offs))
    write(path + ".keys", msgpack.packb([s["key"] for s in samples]))
    return path


def atlas(root, examples, block_size=2):
    """A one-shard, strategy-0 (uncompressed pickles) atlas dataset."""
    shard = os.path.join(root, "0")
    blocks = [pickle.dumps(examples[i:i + block_size], protocol=4)
              for i in range(0, len(examples), block_size)]
    offs = [0]
    for b in blocks:
        offs.append(offs[-1] + len(b))
    write(os.path.join(shard, "data.bin"), b"".join(blocks))
    numpy.save(os.path.join(shard, "index.npy"), numpy.array(offs, dtype="<u8"))
    write(os.path.join(shard, "meta.json"), json.dumps(
        {"version": 1, "block_size": block_size, "stored_examples": len(examples),
         "compression_strategy": 0, "compression_level": 0,
         "compression_dict_size": 0.0}).encode())
    write(os.path.join(root, "meta.json"), json.dumps(
        {"version": 1, "shard_sizes": [len(examples)], "compression_strategy": 0}).encode())
    return root


# ------------------------------------------- 11.8 a field named rowid

SAMPLES = [{"key": "k%d" % i, "rowid": 100 + i, "ROWID": -i, "oid": i * 2, "x": i}
           for i in range(5)]
DD_ROWID = datadings(os.path.join(T, "rowid", "r.msgpack"), SAMPLES)
AT_ROWID = atlas(os.path.join(T, "rowid_atlas"),
                 [{"rowid": 100 + i, "x": i} for i in range(5)])
for mod, path, fields in (("datadings", DD_ROWID, ("rowid", "ROWID", "oid", "x")),
                          ("atlas", AT_ROWID, ("rowid", "x"))):
    conn.execute("CREATE VIRTUAL TABLE temp.rid_%s USING %s(%s)" % (mod, mod, sql_quote(path)))
    t = "rid_" + mod
    C.eq(result("SELECT rowid FROM %s" % t), [(i,) for i in range(5)],
         "%s: rowid is the row index with a field named rowid (11.8)" % mod)
    C.eq(result("SELECT x FROM %s WHERE rowid = 3" % t), [(3,)],
         "%s: WHERE rowid = 3 finds the row (11.8)" % mod)
    cols = [r[1] for r in rows("PRAGMA table_xinfo(%s)" % t)]
    C.check("rowid_2" in cols, "%s: the field rowid is the column rowid_2" % mod, cols)
    C.eq(result("SELECT rowid_2 FROM %s WHERE rowid = 1" % t), [(101,)],
         "%s: rowid_2 holds the field's values" % mod)
    C.check(not {"rowid", "oid", "_rowid_"} & {c.lower() for c in cols},
            "%s: no column is named like the row index" % mod, cols)
    if mod == "datadings":
        C.eq(result("SELECT ROWID_3, oid_2 FROM %s WHERE rowid = 2" % t), [(-2, 4)],
             "datadings: ROWID and oid become ROWID_3 and oid_2")

# ------------------------------ 11.11 dropping a table whose dataset is gone

def copy_fixture(rel, dst):
    src = os.path.join(FIXTURES, rel)
    dst = os.path.join(T, dst)
    if os.path.isdir(src):
        shutil.copytree(src, dst, copy_function=shutil.copyfile)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(src, dst)
        if rel.endswith(".msgpack"):
            for f in os.listdir(os.path.dirname(src)):
                if f.startswith(os.path.basename(src) + "."):
                    shutil.copyfile(os.path.join(os.path.dirname(src), f),
                                    os.path.join(os.path.dirname(dst), f))
    return dst


def open_db(path):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(os.path.join(BUILD, "datasets"))
    return db


GONE = os.path.join(T, "gone")
GONE_SETS = {
    "bagz": copy_fixture("bagz/mid.bagz", "gone/mid.bagz"),
    "datadings": copy_fixture("datadings/mid/mid.msgpack", "gone/dd/mid.msgpack"),
    "atlas": copy_fixture("atlas/mid", "gone/atlas_mid"),
    "bcolz": copy_fixture("bcolz/ctable_basic", "gone/ctable_basic"),
}
GONE_SETS["dataset"] = GONE_SETS["bagz"]
gone_db = os.path.join(T, "gone.db")
db = open_db(gone_db)
for mod, path in GONE_SETS.items():
    db.execute("CREATE VIRTUAL TABLE g_%s USING %s(%s)" % (mod, mod, sql_quote(path)))
counts = {mod: rows("SELECT count(*) FROM g_%s" % mod, db=db)[0][0] for mod in GONE_SETS}
db.close()
os.rename(GONE, GONE + ".moved")
db = open_db(gone_db)
for mod in GONE_SETS:
    expect_error(lambda: rows("SELECT count(*) FROM g_%s" % mod, db=db),
                 "%s: a query of a table whose dataset is gone says why (11.11)" % mod,
                 "cannot open", "DROP TABLE")
db.close()
os.rename(GONE + ".moved", GONE)
db = open_db(gone_db)
for mod in GONE_SETS:
    C.eq(result("SELECT count(*) FROM g_%s" % mod, db=db), [(counts[mod],)],
         "%s: the files back, the table reads again after a reopen" % mod)
db.close()
os.rename(GONE, GONE + ".moved")
db = open_db(gone_db)
for mod in GONE_SETS:
    e = error_of(lambda: db.execute("DROP TABLE g_%s" % mod))
    C.check(e is None, "%s: DROP TABLE of a table whose dataset is gone (11.11)" % mod, e)
C.eq(rows("SELECT name FROM sqlite_master WHERE name LIKE 'g\\_%' ESCAPE '\\'", db=db), [],
     "every table whose dataset was gone is dropped")
for mod, path in GONE_SETS.items():
    expect_error(lambda: db.execute("CREATE VIRTUAL TABLE h_%s USING %s(%s)"
                                    % (mod, mod, sql_quote(path))),
                 "%s: CREATE VIRTUAL TABLE over a missing path still fails" % mod, path)
db.close()

# ------------------------------ 12.1 relative paths survive a chdir

REL = os.path.join(T, "rel")
copy_fixture("bagz/mid.bagz", "rel/mid.bagz")
for k in range(4):
    copy_fixture("bagz/concat-%05d-of-00004.bagz" % k, "rel/concat-%05d-of-00004.bagz" % k)
copy_fixture("datadings/mid/mid.msgpack", "rel/dd/mid.msgpack")
copy_fixture("atlas/mid", "rel/atlas_mid")
copy_fixture("bcolz/ctable_basic", "rel/ctable_basic")
RELATIVE = [
    ("bagz", "mid.bagz"),
    ("bagz", "concat-00000-of-00004.bagz,concat-00001-of-00004.bagz"),
    ("bagz", "concat@4.bagz"),
    ("datadings", "dd/mid.msgpack"),
    ("datadings", "dd/m*.msgpack"),
    ("atlas", "atlas_mid"),
    ("bcolz", "ctable_basic"),
    ("dataset", "atlas_mid"),
]
here = os.getcwd()
os.chdir(REL)
want = {}
for k, (mod, path) in enumerate(RELATIVE):
    conn.execute("CREATE VIRTUAL TABLE temp.rel%d USING %s(%s)" % (k, mod, sql_quote(path)))
    want[k] = rows("SELECT * FROM temp.rel%d" % k)
    C.check(len(want[k]) > 0, "%s('%s'): rows before the chdir" % (mod, path))
os.chdir(T)
for k, (mod, path) in enumerate(RELATIVE):
    C.eq(result("SELECT * FROM temp.rel%d" % k), want[k],
         "%s('%s'): the table reads the same rows after a chdir (12.1)" % (mod, path))
os.chdir(here)

# ------------------------------ 12.2 the host's CPU affinity is left alone

import threading  # noqa: E402

mask = os.sched_getaffinity(0)  # this (the querying) thread's mask
MID = os.path.join(FIXTURES, "bagz", "mid.bagz")
for form in ("bagz(%s, 'threads=2')" % sql_quote(MID),):
    cur = conn.execute("SELECT length(record) FROM %s" % form)
    cur.fetchmany(2000)  # the read-ahead is running
    during = os.sched_getaffinity(0)
    seen = []
    th = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
    th.start()
    th.join()
    C.eq(during, mask, "threads=2 scan: the querying thread's CPU mask is unchanged during it (12.2)")
    C.eq(seen, [mask], "threads=2 scan: a thread started during it has the process's mask")
    cur.fetchall()
    C.eq(os.sched_getaffinity(0), mask, "threads=2 scan: the CPU mask is unchanged after it")

# ------------------------------ 12.3 literal paths win; one empty-path message

LIT = os.path.join(T, "lit")
lit_bagz = copy_fixture("bagz/mid.bagz", "lit/m,id.bagz")
lit_at = copy_fixture("bagz/mid.bagz", "lit/x@2.bagz")
lit_dd = copy_fixture("datadings/mid/mid.msgpack", "lit/dd[1]/mid.msgpack")
datadings(os.path.join(LIT, "dd1", "mid.msgpack"), [{"key": "other%d" % i} for i in range(3)])
want_bagz = rows("SELECT rowid, record FROM bagz(?) WHERE rowid < 50", MID)
want_dd = rows("SELECT key, sample FROM datadings(?) WHERE rowid < 50",
               os.path.join(FIXTURES, "datadings", "mid", "mid.msgpack"))
for label, path in (("a comma", lit_bagz), ("an @N", lit_at)):
    C.eq(result("SELECT rowid, record FROM bagz(?) WHERE rowid < 50", path), want_bagz,
         "bagz: a file whose name holds %s opens as written (12.3)" % label)
    conn.execute("DROP TABLE IF EXISTS temp.lit")
    e = error_of(lambda: conn.execute("CREATE VIRTUAL TABLE temp.lit USING bagz(%s)" % sql_quote(path)))
    C.eq(result("SELECT rowid, record FROM temp.lit WHERE rowid < 50") if e is None else e,
         want_bagz, "bagz CREATE form: a file whose name holds %s opens as written" % label)
C.eq(result("SELECT key, sample FROM datadings(?) WHERE rowid < 50", lit_dd), want_dd,
     "datadings: a file whose path holds [1] opens as written, not as a pattern (12.3)")
C.eq(result("SELECT value FROM dataset_info(?) WHERE property = 'format'", lit_dd), [("datadings",)],
     "dataset_info: a path holding [1] is the file as written")
C.eq(result("SELECT count(*) FROM datadings(?)", os.path.join(LIT, "dd[1-9]", "mid.msgpack")),
     result("SELECT count(*) FROM datadings(?)", os.path.join(LIT, "dd1", "mid.msgpack")),
     "datadings: a pattern naming no file as written is still a glob")
msgs = set()
for mod in ("bagz", "datadings", "atlas", "bcolz", "dataset_info", "datadings_verify",
            "bcolz_attrs", "bcolz_stats", "dataset_shards"):
    e = error_of(lambda: rows("SELECT * FROM %s('')" % mod))
    msgs.add((e or "no error").split(": ", 1)[-1].split(": use ")[0])
for mod in ("bagz", "datadings", "atlas", "bcolz", "dataset"):
    e = error_of(lambda: conn.execute("CREATE VIRTUAL TABLE temp.empty USING %s('')" % mod))
    msgs.add((e or "no error").split(": ", 1)[-1].split(": use ")[0])
C.eq(sorted(msgs), ["no path given"],
     "the empty path gets one message in every module and form (12.3)")

# ------------------------------ 12.12 help in SQL

v = result("SELECT datasets_version()")
C.check(isinstance(v, list) and v[0][0].startswith("sqlite-datasets ")
        and sqlite3.sqlite_version in v[0][0],
        "datasets_version() names the extension and the SQLite it runs in (12.12)", v)
for lib in ("bagz", "datadings", "atlas", "bcolz"):
    one = sqlite3.connect(":memory:")
    one.enable_load_extension(True)
    one.load_extension(os.path.join(BUILD, lib))
    C.eq(result("SELECT datasets_version()", db=one), v,
         "datasets_version() in the %s library" % lib)
    one.close()
for mod in ("bagz", "datadings", "atlas", "bcolz", "dataset_info", "datadings_verify",
            "bcolz_attrs", "bcolz_stats", "dataset_shards"):
    expect_error(lambda: rows("SELECT * FROM %s()" % mod),
                 "%s() with no arguments shows its usage (12.12)" % mod,
                 "%s: no path given: use %s('" % (mod, mod))

# ------------------------------ 12.7 strict columns=, infer=all, form-only options

DDM = os.path.join(FIXTURES, "datadings", "mid", "mid.msgpack")
ATM = os.path.join(FIXTURES, "atlas", "mid")
for mod, path in (("datadings", DDM), ("atlas", ATM)):
    expect_error(lambda: conn.execute("CREATE VIRTUAL TABLE temp.s1_%s USING %s(%s, "
                                      "columns='n INTEGER c INTEGER')" % (mod, mod, sql_quote(path))),
                 "%s: columns= with a missing comma is an error (12.7)" % mod,
                 "column 'n' has type 'INTEGER c INTEGER'", "separated by commas")
    expect_error(lambda: rows("SELECT * FROM %s(?, 'infer=5')" % mod, path),
                 "%s: infer= in the table-valued form says it is for the CREATE form" % mod,
                 "'infer' is only for the CREATE form")
    expect_error(lambda: rows("SELECT * FROM %s(?, 'columns=a')" % mod, path),
                 "%s: columns= in the table-valued form says it is for the CREATE form" % mod,
                 "'columns' is only for the CREATE form")
    expect_error(lambda: conn.execute("CREATE VIRTUAL TABLE temp.s2_%s USING %s(%s, 'infer=5, "
                                      "max_value_bytes=9999')" % (mod, mod, sql_quote(path))),
                 "%s: one quoted string of options says to give each as its own argument" % mod,
                 "give each option as its own argument")
conn.execute("CREATE VIRTUAL TABLE temp.kc USING datadings(%s, columns='key TEXT, n INTEGER')"
             % sql_quote(DDM))
C.eq([r[1] for r in rows("PRAGMA table_info(kc)")], ["key", "n"],
     "datadings: columns='key TEXT, ...' names the key column, no key_2 (12.7)")
C.eq(rows("SELECT key, n FROM kc WHERE rowid < 3"),
     rows("SELECT key, sample ->> '$.n' FROM datadings(?) WHERE rowid < 3", DDM),
     "datadings: columns='key TEXT, n INTEGER' reads the keys and n")
conn.execute("CREATE VIRTUAL TABLE temp.cs USING datadings(%s, columns='n INTEGER, c')"
             % sql_quote(DDM))
C.eq([r[1] for r in rows("PRAGMA table_info(cs)")], ["key", "n", "c"],
     "datadings: a well-formed columns= still works")
late = [{"key": "s%d" % i, "a": i} for i in range(150)] + [{"key": "last", "late": 7}]
LATE = datadings(os.path.join(T, "late", "late.msgpack"), late)
for infer, has in (("infer=100", False), ("infer=all", True)):
    conn.execute("DROP TABLE IF EXISTS temp.inf")
    e = error_of(lambda: conn.execute("CREATE VIRTUAL TABLE temp.inf USING datadings(%s, %s)"
                                      % (sql_quote(LATE), infer)))
    cols = [r[1] for r in rows("PRAGMA table_info(inf)")] if e is None else e
    C.check(isinstance(cols, list) and ("late" in cols) == has,
            "datadings %s: a field first seen in the last sample is %s column (12.7)"
            % (infer, "a" if has else "not a"), cols)

# ------------------------------ 12.10 datadings shard and shard_index

SH = os.path.join(FIXTURES, "datadings", "sharded")
parts = sorted(f for f in os.listdir(SH) if f.endswith(".msgpack"))
want = []
for k, f in enumerate(parts):
    want += [(key, k, i) for i, key in rows("SELECT rowid, key FROM datadings(?)",
                                           os.path.join(SH, f))]
glob_path = os.path.join(SH, "part-*.msgpack")
C.eq(result("SELECT key, shard, shard_index FROM datadings(?)", glob_path), want,
     "datadings glob: shard and shard_index of every row, as each shard file gives (12.10)")
conn.execute("CREATE VIRTUAL TABLE temp.shd USING datadings(%s)" % sql_quote(glob_path))
C.eq(result("SELECT key, shard, shard_index FROM temp.shd"), want,
     "datadings glob, CREATE form: shard and shard_index")
C.eq(result("SELECT shard, count(*) FROM temp.shd GROUP BY shard"),
     [(k, n) for k, n in ((k, sum(1 for w in want if w[1] == k)) for k in range(len(parts))) if n],
     "datadings: rows per shard")
C.eq(result("SELECT shard, shard_index FROM datadings(?) WHERE rowid = 3", DDM), [(0, 3)],
     "datadings: one file is shard 0")

# ------------------------------ 11.13 SQLITE_LIMIT_LENGTH before decompressing

BIG = os.path.join(FIXTURES, "bagz", "bigframe.bagz")
lim = sqlite3.connect(":memory:")
lim.enable_load_extension(True)
lim.load_extension(os.path.join(BUILD, "datasets"))
biggest = rows("SELECT max(length(record)) FROM bagz(?)", BIG, db=lim)[0][0]
lim.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 5000)
C.check(biggest > 5000, "bigframe.bagz holds a record longer than the limit", biggest)
expect_error(lambda: rows("SELECT max(length(record)) FROM bagz(?)", BIG, db=lim),
             "a record over the connection's SQLITE_LIMIT_LENGTH fails naming the file and "
             "the cap, before decompressing (11.13)", "bigframe.bagz", "max_value_bytes=5000")
C.eq(result("SELECT count(*) FROM bagz(?)", BIG, db=lim),
     rows("SELECT count(*) FROM bagz(?)", BIG),
     "rows that fit still read under a low SQLITE_LIMIT_LENGTH")
lim.close()

C.exit()
