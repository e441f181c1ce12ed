"""test_vtab_fixes.py - the SQLite-layer items of issues 11 and 12: a field
named rowid does not hide the row index (11.8), a table whose dataset is
gone can be dropped (11.11), relative paths survive a change of directory
(12.1), literal paths win over globs and comma lists (12.3), strict
columns= and CREATE-only options (12.7), datadings shard columns (12.10),
help in SQL (12.12), SQLITE_LIMIT_LENGTH before decompressing (11.13).
Datasets are written at test time into a temp dir.
Usage: test_vtab_fixes.py BUILD_DIR"""
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
TMP = tempfile.TemporaryDirectory(prefix="vtab-fixes-")
T = TMP.name


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def rows(sql, *args, db=None):
    return (db or conn).execute(sql, args).fetchall()


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
    C.eq(rows("SELECT rowid FROM %s" % t), [(i,) for i in range(5)],
         "%s: rowid is the row index with a field named rowid (11.8)" % mod)
    C.eq(rows("SELECT x FROM %s WHERE rowid = 3" % t), [(3,)],
         "%s: WHERE rowid = 3 finds the row (11.8)" % mod)
    cols = [r[1] for r in rows("PRAGMA table_xinfo(%s)" % t)]
    C.check("rowid_2" in cols, "%s: the field rowid is the column rowid_2" % mod, cols)
    C.eq(rows("SELECT rowid_2 FROM %s WHERE rowid = 1" % t), [(101,)],
         "%s: rowid_2 holds the field's values" % mod)
    C.check(not {"rowid", "oid", "_rowid_"} & {c.lower() for c in cols},
            "%s: no column is named like the row index" % mod, cols)
    if mod == "datadings":
        C.eq(rows("SELECT ROWID_3, oid_2 FROM %s WHERE rowid = 2" % t), [(-2, 4)],
             "datadings: ROWID and oid become ROWID_3 and oid_2")

C.exit()
