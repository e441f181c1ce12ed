"""test_tfexample_table.py - the bagz CREATE form with records=tfexample.

Bags of tf.train.Example records written by Debian's python3-protobuf
(tfexample_records.py; raw .bag and zstd .bagz shards, zstd through
python3-zstandard when present) are opened as
    CREATE VIRTUAL TABLE temp.t USING bagz(path, records=tfexample, ...)
and every cell is compared with the features Google's runtime reads back:
one-value lists as INTEGER / REAL (float32 exact) / BLOB (TEXT with
bytes=text), longer numeric lists as .npy BLOBs (numpy loads them: int64
or float32), longer bytes lists as JSON lists (base64, or text with
bytes=text), missing features and empty lists NULL. Also: inferred
declared types and first-seen order, infer=N, columns= by hand, the
HIDDEN record/shard/shard_index columns (renamed when a feature takes the
name), count(*) and the hidden columns of a record that is not an Example
(nothing decodes it), the error naming the file and record when a feature
of it is read, GROUP BY over the features, and option errors.
Usage: test_tfexample_table.py BUILD_DIR."""
import base64
import io
import json
import math
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

from dstest import Checker, connect
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
T = tempfile.mkdtemp(prefix="tfexample-table-")
P = Protos(T)
conn = connect(BUILD)


def u64(*vals):
    return b"".join(struct.pack("<Q", v) for v in vals)


def write_bag(path, records, compress=False):
    """A tail-limits bag; with compress, each non-empty record one zstd frame."""
    stored = []
    for r in records:
        if compress and r:
            r = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(r)
        stored.append(r)
    ends, pos = [], 0
    for s in stored:
        pos += len(s)
        ends.append(pos)
    with open(path, "wb") as f:
        f.write(b"".join(stored) + u64(*ends))
    return path


def reference(record):
    """{name: (kind, values)} as Google's runtime reads record."""
    ex = P.TFMAP.Example()
    ex.ParseFromString(record)
    out = {}
    for name, f in ex.features.feature.items():
        kind = f.WhichOneof("kind")
        out[name] = (kind[:-5] if kind else "none", list(getattr(f, kind).value) if kind else [])
    return out


def f32(x):
    return struct.pack("<f", x)


def expected_cell(kind, values, bytes_text=False):
    """What the table must give for a feature (a callable check of got)."""
    if kind == "none" or not values:
        return lambda g: g is None
    if len(values) == 1:
        v = values[0]
        if kind == "int64":
            return lambda g: type(g) is int and g == v
        if kind == "float":
            if not math.isfinite(v):
                return lambda g: g is None
            return lambda g: type(g) is float and f32(g) == f32(v)
        if bytes_text:
            try:
                s = v.decode("utf-8")
                return lambda g: g == s
            except UnicodeDecodeError:
                pass
        return lambda g: g == v
    if kind == "bytes":
        def check(g):
            items = json.loads(g)
            want = []
            for v in values:
                try:
                    want.append(v.decode("utf-8") if bytes_text else None)
                except UnicodeDecodeError:
                    want.append(None)
            return items == [w if w is not None else base64.b64encode(v).decode()
                             for w, v in zip(want, values)]
        return check
    if np is None:
        return lambda g: isinstance(g, bytes) and g[:6] == b"\x93NUMPY"

    def check_npy(g):
        a = np.load(io.BytesIO(g), allow_pickle=False)
        if kind == "int64":
            return a.dtype == np.dtype("<i8") and a.tolist() == values
        return a.dtype == np.dtype("<f4") and len(a) == len(values) and all(
            (math.isnan(x) and math.isnan(y)) or f32(x) == f32(y)
            for x, y in zip(a.tolist(), values))
    return check_npy


def columns(table):
    return [(r[1], r[2]) for r in conn.execute("PRAGMA table_xinfo(%s)" % table)]


def visible(table):
    return [(r[1], r[2]) for r in conn.execute("PRAGMA table_xinfo(%s)" % table) if r[6] == 0]


def error_of(sql, *args):
    try:
        conn.execute(sql, args).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


# ------------------------------------------------------------ a mixed bag

FEATS = [
    [("label", "int64", [3]), ("score", "float", [0.25]), ("image", "bytes", [b"\x89PNG"]),
     ("emb", "float", [0.5, -1.0, 0.1]), ("tags", "bytes", [b"cat", b"\xff"]),
     ("ids", "int64", [1, 2, 2**62])],
    [("label", "int64", [1]), ("score", "float", [float("nan")]), ("image", "bytes", [b""]),
     ("emb", "float", []), ("extra", "int64", [7])],
    [("score", "float", [1.5]), ("label", "int64", [3]), ("tags", "bytes", [b"dog"]),
     ("ids", "none", [])],
]
RECORDS = [make(P.PB, FEATS[0]), make(P.UNPACKED, FEATS[1]), make(P.EXTRA, FEATS[2], extra=True)]
bag = write_bag(os.path.join(T, "mix.bag"), RECORDS)
conn.execute("CREATE VIRTUAL TABLE temp.mix USING bagz(%r, records=tfexample)" % bag)
C.eq(visible("mix"), [("label", "INTEGER"), ("score", "REAL"), ("image", "BLOB"), ("emb", "BLOB"),
                      ("tags", ""), ("ids", "BLOB"), ("extra", "INTEGER")],
     "inferred columns: first-seen order, declared types")
C.eq([c for c, _ in columns("mix")][-3:], ["record", "shard", "shard_index"],
     "HIDDEN record, shard, shard_index")
rows = conn.execute("SELECT rowid, * FROM mix").fetchall()
C.eq(len(rows), 3, "three rows")
names = [c for c, _ in visible("mix")]
for rowid, *cells in rows:
    ref = reference(RECORDS[rowid])
    for name, got in zip(names, cells):
        kind, values = ref.get(name, ("none", []))
        C.check(expected_cell(kind, values)(got), "row %d %s" % (rowid, name),
                "got %r, Google's runtime read %r %r" % (got, kind, values))
C.eq([r[0] for r in conn.execute("SELECT record FROM mix")], RECORDS,
     "record holds the raw bytes")
C.eq(conn.execute("SELECT shard, shard_index FROM mix WHERE rowid = 2").fetchone(), (0, 2),
     "shard and shard_index")

conn.execute("CREATE VIRTUAL TABLE temp.mixt USING bagz(%r, records=tfexample, bytes=text)" % bag)
C.eq(dict(visible("mixt"))["image"], "", "bytes=text: a bytes column of BLOB and TEXT")
for rowid, *cells in conn.execute("SELECT rowid, * FROM mixt").fetchall():
    ref = reference(RECORDS[rowid])
    for name, got in zip(names, cells):
        kind, values = ref.get(name, ("none", []))
        C.check(expected_cell(kind, values, bytes_text=True)(got),
                "bytes=text row %d %s" % (rowid, name), "got %r" % (got,))
C.eq(conn.execute("SELECT tags FROM mixt WHERE rowid = 2").fetchone()[0], "dog",
     "bytes=text: one UTF-8 value is TEXT")

# ------------------------------------------------------------ infer, columns=
conn.execute("CREATE VIRTUAL TABLE temp.mix1 USING bagz(%r, records=tfexample, infer=1)" % bag)
C.eq([c for c, _ in visible("mix1")], ["label", "score", "image", "emb", "tags", "ids"],
     "infer=1: the first record's features only")
conn.execute("CREATE VIRTUAL TABLE temp.mixc USING bagz(%r, records=tfexample, "
             "columns='extra INTEGER, score REAL, absent')" % bag)
C.eq(visible("mixc"), [("extra", "INTEGER"), ("score", "REAL"), ("absent", "")],
     "columns= names and types by hand")
got = conn.execute("SELECT extra, score, absent FROM mixc").fetchall()
C.eq([g[0] for g in got], [None, 7, None], "columns=: a feature by name, NULL where missing")
C.eq(got[2][1], 1.5, "columns=: score of row 2")

# ------------------------------------------------------------ zstd, shards, GROUP BY
if zstandard is not None:
    recs = [make(P.PB, [("label", "int64", [i % 4]), ("score", "float", [i / 8])])
            for i in range(40)]
    for s in range(2):
        write_bag(os.path.join(T, "z-%05d-of-00002.bagz" % s), recs[s * 20:(s + 1) * 20],
                  compress=True)
    conn.execute("CREATE VIRTUAL TABLE temp.z USING bagz(%r, records=tfexample)"
                 % os.path.join(T, "z@2.bagz"))
    want = {}
    for i in range(40):
        n, t = want.get(i % 4, (0, 0.0))
        want[i % 4] = (n + 1, t + i / 8)
    got = conn.execute("SELECT label, count(*), sum(score) FROM z GROUP BY label").fetchall()
    C.eq(got, [(k, n, t) for k, (n, t) in sorted(want.items())],
         "GROUP BY label over two zstd shards")
    C.eq(conn.execute("SELECT count(*) FROM z WHERE score > 2.0").fetchone()[0], 23,
         "WHERE score > 2.0")
    # 1000 rows: scans of 512 rows or more decompress ahead (threads=2)
    big = [make(P.PB, [("label", "int64", [i % 7]), ("emb", "float", [i, -i / 2])])
           for i in range(1000)]
    for s in range(2):
        write_bag(os.path.join(T, "big-%05d-of-00002.bagz" % s), big[s::2], compress=True)
    spec = os.path.join(T, "big@2.bagz")
    results = []
    for threads in (1, 2):
        conn.execute("CREATE VIRTUAL TABLE temp.big%d USING bagz(%r, records=tfexample, "
                     "layout=interleaved, threads=%d)" % (threads, spec, threads))
        results.append(conn.execute(
            "SELECT label, count(*), sum(npy_sum(emb)) FROM big%d GROUP BY label" % threads
        ).fetchall())
    want = [(k, len(range(k, 1000, 7)), sum(i / 2 for i in range(k, 1000, 7)))
            for k in range(7)]
    C.eq(results[0], want, "1000 rows, interleaved shards, threads=1")
    C.eq(results[1], want, "1000 rows, interleaved shards, threads=2 (read-ahead)")
    C.eq(conn.execute("SELECT count(*) FROM big2 WHERE rowid % 100 = 0 AND "
                      "tfexample_json(record) ->> '$.label[0]' = label").fetchone()[0], 10,
         "tfexample_json(record) agrees with the label column")
else:
    print("PASS zstd part skipped: python3-zstandard missing")

# ------------------------------------------------------------ not an Example
bad = [make(P.PB, [("label", "int64", [i])]) for i in range(5)]
bad[3] = b"\x0a\x05\x0a\x03"
badbag = write_bag(os.path.join(T, "bad.bag"), bad)
C.eq(error_of("CREATE VIRTUAL TABLE temp.bad USING bagz(%r, records=tfexample)" % badbag),
     "bagz: %s: record 3: not a tf.train.Example: length 5 runs past the end of the Example "
     "at byte offset 1 (records=tfexample reads serialized tf.train.Example records; this one "
     "is not)" % badbag, "a bad record among the first infer fails CREATE, naming it")
plain = write_bag(os.path.join(T, "plain.bag"), [b"hello", b"world"])
C.check("record 0: not a tf.train.Example" in
        error_of("CREATE VIRTUAL TABLE temp.plain USING bagz(%r, records=tfexample)" % plain),
        "a bag of other records fails CREATE, naming record 0")
empty = write_bag(os.path.join(T, "noex.bag"), [b"", b""])
C.check("hold no tf.train.Example feature" in
        error_of("CREATE VIRTUAL TABLE temp.noex USING bagz(%r, records=tfexample)" % empty),
        "records with no feature at all fail CREATE (no table of no columns)")
conn.execute("CREATE VIRTUAL TABLE temp.bad USING bagz(%r, records=tfexample, infer=3)" % badbag)
C.eq(conn.execute("SELECT count(*) FROM bad").fetchone()[0], 5, "count(*) decodes nothing")
C.eq(conn.execute("SELECT length(record), shard_index FROM bad WHERE rowid = 3").fetchone(),
     (4, 3), "record and shard_index of a bad record decode nothing")
C.eq(conn.execute("SELECT label FROM bad WHERE rowid = 4").fetchone()[0], 4,
     "a good record after a bad one")
C.eq(error_of("SELECT label FROM bad"),
     "bagz: %s: record 3: not a tf.train.Example: length 5 runs past the end of the "
     "Example at byte offset 1" % badbag, "reading a feature of a bad record names it")
small = make(P.PB, [("v", "int64", list(range(20)))])  # decodes to more than 64 bytes
sbag = write_bag(os.path.join(T, "small.bag"), [small])
conn.execute("CREATE VIRTUAL TABLE temp.badm USING bagz(%r, records=tfexample, "
             "columns='v', max_value_bytes=64)" % sbag)
C.check(len(small) <= 64, "the record itself is under max_value_bytes")
C.eq(error_of("SELECT v FROM badm"), "bagz: %s: record 0: value needs more than "
     "max_value_bytes=64 bytes" % sbag, "max_value_bytes caps decoding")

# ------------------------------------------------------------ names
clash = [make(P.PB, [("record", "int64", [1]), ("Shard", "int64", [2]), ("x", "int64", [3])])]
cbag = write_bag(os.path.join(T, "clash.bag"), clash)
conn.execute("CREATE VIRTUAL TABLE temp.clash USING bagz(%r, records=tfexample)" % cbag)
C.eq([c for c, _ in columns("clash")], ["record", "Shard", "x", "_record", "_shard",
                                        "shard_index"],
     "features keep their names, the hidden columns move aside")
C.eq(conn.execute('SELECT record, "Shard", length(_record) FROM clash').fetchone(),
     (1, 2, len(clash[0])), "renamed hidden record still holds the bytes")

# ------------------------------------------------------------ option errors
C.check("records=tfexample needs the CREATE VIRTUAL TABLE form" in
        (error_of("SELECT * FROM bagz(?, 'records=tfexample')", bag) or ""),
        "records=tfexample in the table-valued form is an error")
C.check("needs records=tfexample" in
        (error_of("CREATE VIRTUAL TABLE temp.e1 USING bagz(%r, bytes=text)" % bag) or ""),
        "bytes= without records=tfexample is an error")
C.check("records" in (error_of("CREATE VIRTUAL TABLE temp.e2 USING bagz(%r, records=json)"
                               % bag) or ""), "unknown records= value is an error")
conn.execute("CREATE VIRTUAL TABLE temp.plain USING bagz(%r, records=none)" % bag)
C.eq([c for c, _ in visible("plain")], ["record", "shard", "shard_index"],
     "records=none: the usual columns")

shutil.rmtree(T)
C.exit()
