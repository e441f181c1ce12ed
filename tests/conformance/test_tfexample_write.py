"""test_tfexample_write.py - INSERT into a bagz writer table with
records=tfexample: each row becomes one tf.train.Example.

A table `bagz(path, mode=create, records=tfexample, columns='...')` gets
rows of every kind (INTEGER, REAL, TEXT, raw BLOBs, .npy BLOBs written by
numpy of int64/int8/uint16/bool/float32/float64 arrays, NULLs); after
COMMIT the bag is read back by Google's protobuf runtime (Debian's
python3-protobuf, tfexample_records.py: the records, the limits tail and,
for .bagz, python3-zstandard) and by a records=tfexample reading table.
Also: a whole record given in the record column (checked to be an
Example), errors naming the row (not an Example, a uint64 above
INT64_MAX), columns= required, and a copy of a bag of Examples written by
Google's runtime through INSERT ... SELECT * (same features back).
Usage: test_tfexample_write.py BUILD_DIR."""
import io
import math
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

from dstest import Checker, connect, write_tail_bag
from tfexample_records import Protos, make

try:
    import numpy as np
except ImportError:
    np = None
try:
    import zstandard
except ImportError:
    zstandard = None

BUILD = sys.argv[1]
C = Checker()
T = tempfile.mkdtemp(prefix="tfexample-write-")
P = Protos(T)
conn = connect(BUILD)


def read_bag(path):
    """The records of a one-file tail-limits bag (zstd frames for .bagz)."""
    data = open(path, "rb").read()
    if not data:
        return []
    first = struct.unpack("<Q", data[-8:])[0]
    n = (len(data) - first) // 8
    ends = struct.unpack("<%dQ" % n, data[first:])
    out, start = [], 0
    for e in ends:
        rec = data[start:e]
        if path.endswith(".bagz") and rec:
            rec = zstandard.ZstdDecompressor().decompress(rec)
        out.append(rec)
        start = e
    return out


def features(record):
    """[(name, kind, values)] as Google's runtime reads record (entry order)."""
    ex = P.PB.Example()
    ex.ParseFromString(record)
    out = []
    for e in ex.features.feature:
        kind = e.value.WhichOneof("kind")
        out.append((e.key.decode(), kind[:-5] if kind else "none",
                    list(getattr(e.value, kind).value) if kind else []))
    return out


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def npy(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def error_of(sql, *args):
    try:
        conn.execute(sql, args)
    except sqlite3.Error as e:
        return str(e)
    return None


# ------------------------------------------------------------ rows of every kind
ext = ".bagz" if zstandard is not None else ".bag"
out = os.path.join(T, "out" + ext)
conn.execute("CREATE VIRTUAL TABLE temp.w USING bagz(%r, mode=create, records=tfexample, "
             "columns='label INTEGER, score REAL, name TEXT, image BLOB, emb BLOB')" % out)
rows = [(3, 0.1, "cat", b"\x89PNG\x00", None), (None, -2.5, None, b"", None),
        (2**62, None, "é", None, None)]
if np is not None:
    rows += [(1, 1.0, "x", b"raw", npy(np.array([1.5, -2.25, 0.1], dtype="<f4"))),
             (2, 2.0, "y", None, npy(np.arange(-3, 3, dtype="<i8"))),
             (3, 3.0, "z", None, npy(np.array([[1, 2], [3, 4]], dtype=">u2"))),
             (4, 4.0, "w", None, npy(np.array([True, False]))),
             (5, 5.0, "v", None, npy(np.array([0.5, 1e-3], dtype="<f8"))),
             (6, 6.0, "u", None, npy(np.array([-7], dtype="i1")))]
conn.execute("BEGIN")
for r in rows:
    conn.execute("INSERT INTO w(label, score, name, image, emb) VALUES (?, ?, ?, ?, ?)", r)
conn.execute("COMMIT")
recs = read_bag(out)
C.eq(len(recs), len(rows), "one record a row")


def want_features(r):
    names = ["label", "score", "name", "image", "emb"]
    w = []
    for name, v in zip(names, r):
        if v is None:
            continue
        if isinstance(v, int):
            w.append((name, "int64", [v]))
        elif isinstance(v, float):
            w.append((name, "float", [f32(v)]))
        elif isinstance(v, str):
            w.append((name, "bytes", [v.encode()]))
        elif np is not None and v[:6] == b"\x93NUMPY":
            a = np.load(io.BytesIO(v))
            if a.dtype.kind == "f":
                w.append((name, "float", [f32(x) for x in a.ravel().tolist()]))
            else:
                w.append((name, "int64", [int(x) for x in a.ravel().tolist()]))
        else:
            w.append((name, "bytes", [v]))
    return w


for i, (r, rec) in enumerate(zip(rows, recs)):
    got = features(rec)
    C.eq(got, want_features(r), "row %d as Google's runtime reads it" % i)

# read back through a records=tfexample table (the writer table reads what it published)
back = conn.execute("SELECT label, score, name, image FROM w").fetchall()
C.eq([b[0] for b in back], [r[0] for r in rows], "label read back")
C.eq([b[2] for b in back], [r[2].encode() if r[2] is not None else None for r in rows],
     "name read back (bytes: a BLOB without bytes=text)")
C.eq([b[3] for b in back], [r[3] for r in rows],
     "image read back (an empty BLOB is one empty bytes value)")

# ------------------------------------------------------------ whole records, errors
out2 = os.path.join(T, "whole.bag")
conn.execute("CREATE VIRTUAL TABLE temp.w2 USING bagz(%r, mode=create, records=tfexample, "
             "columns='label INTEGER')" % out2)
given = make(P.UNPACKED, [("label", "int64", [9]), ("other", "float", [0.5])])
conn.execute("INSERT INTO w2(record) VALUES (?)", (given,))
C.eq(error_of("INSERT INTO w2(record) VALUES (?)", b"\x0a\x05"),
     "bagz: %s: row 1: not a tf.train.Example: length 5 runs past the end of the Example "
     "at byte offset 1" % out2, "a record that is not an Example is an error naming the row")
if np is not None:
    C.eq(error_of("INSERT INTO w2(label) VALUES (?)", npy(np.array([2**64 - 1], dtype="<u8"))),
         "bagz: %s: row 1: label: uint64 value 18446744073709551615 does not fit an int64 "
         "list" % out2,
         "a uint64 above INT64_MAX is an error naming the row and column")
conn.commit()
C.eq(read_bag(out2), [given], "the given record is written as is (failed rows are not)")
C.check("needs columns=" in (error_of(
    "CREATE VIRTUAL TABLE temp.w3 USING bagz(%r, mode=create, records=tfexample)"
    % os.path.join(T, "w3.bag")) or ""), "a writer with records=tfexample needs columns=")

# ------------------------------------------------------------ copy a bag of Examples
src = [make(P.PB, [("label", "int64", [i]), ("emb", "float", [i, i / 4]),
                   ("img", "bytes", [bytes([i]) * 5])]) for i in range(20)]
src_path = write_tail_bag(os.path.join(T, "src.bag"), src)
conn.execute("CREATE VIRTUAL TABLE temp.s USING bagz(%r, records=tfexample)" % src_path)
cp = os.path.join(T, "copy.bag")
conn.execute("CREATE VIRTUAL TABLE temp.cp USING bagz(%r, mode=create, records=tfexample, "
             "columns='label INTEGER, emb BLOB, img BLOB')" % cp)
conn.execute("INSERT INTO cp SELECT label, emb, img FROM s")
conn.commit()
copied = read_bag(cp)
C.eq([features(r) for r in copied], [features(r) for r in src],
     "INSERT ... SELECT from a records=tfexample table gives the same features")

shutil.rmtree(T)
C.exit()
