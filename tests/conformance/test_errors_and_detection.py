"""test_errors_and_detection.py - what a new user tripped over (issue 12): error
text that Python can decode, errors that say the likely cause, detection
that does not take a tar file or zero bytes for a bag, numpy S values as
base64 inside JSON, and a demo whose rows do not surprise.
Usage: test_errors_and_detection.py BUILD_DIR"""
import base64
import io
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tarfile
import tempfile

import numpy
import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, ROOT, Checker, connect  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="errors-detection-")
T = TMP.name


def rows(sql, *args):
    return conn.execute(sql, args).fetchall()


def error_of(fn):
    """The sqlite3.Error text fn() raises; None when it raises nothing.
    A UnicodeDecodeError (an error text that is not UTF-8) is returned as
    such, for the caller to fail on."""
    try:
        fn()
    except sqlite3.Error as e:
        return str(e)
    except UnicodeDecodeError as e:
        return e
    return None


def expect_error(fn, name, *needles):
    e = error_of(fn)
    if isinstance(e, UnicodeDecodeError):
        return C.check(False, name, "error text is not UTF-8: %r" % (e.object,))
    if e is None:
        return C.check(False, name, "no error")
    missing = [n for n in needles if n not in e]
    return C.check(not missing, name, "error %r lacks %r" % (e, missing))


def write(name, data):
    p = os.path.join(T, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def npy_bytes(a):
    b = io.BytesIO()
    numpy.save(b, a)
    return b.getvalue()


# ------------------------------------------------- 4: error text is UTF-8

raw = bytearray(npy_bytes(numpy.arange(3, dtype="<i4")))
at = raw.index(b"fortran_order") + 2
raw[at] = 0xFF  # 'fo\xfftran_order': an unknown key the error quotes
expect_error(lambda: rows("SELECT npy_shape(?)", bytes(raw)),
             "npy header byte 0xFF: sqlite3.Error quoting it as \\xff", "npy_shape", "fo\\xfftran_order")

d = os.path.join(T, "md5")
os.makedirs(d)
for f in os.listdir(os.path.join(FIXTURES, "datadings", "basic")):
    shutil.copy(os.path.join(FIXTURES, "datadings", "basic", f), d)
md5 = os.path.join(d, "basic.msgpack.md5")
with open(md5, "wb") as f:
    f.write(b"\xff\xfe not an md5 line \xe9\n")
expect_error(lambda: rows("SELECT * FROM datadings_verify(?)", os.path.join(d, "basic.msgpack")),
             "datadings_verify: a non-UTF-8 .md5 line is quoted escaped", "line 1", "\\xff\\xfe",
             "\\xe9")

a = os.path.join(T, "atlas_mid")
shutil.copytree(os.path.join(FIXTURES, "atlas", "mid"), a)
idx = os.path.join(a, "1", "index.npy")
with open(idx, "rb") as f:
    head = bytearray(f.read())
head[head.index(b"'shape'") + 2] = 0xFF  # 'shape' becomes 's\xffape'
with open(idx, "wb") as f:
    f.write(head)
expect_error(lambda: rows("SELECT count(*) FROM atlas(?)", a),
             "atlas: a damaged index.npy header is quoted escaped", "index.npy", "s\\xffape")

# ------------------------------------------------- 5: the likely cause

BAGZ = os.path.join(FIXTURES, "bagz")
expect_error(lambda: rows("SELECT count(*) FROM bagz(?)",
                          os.path.join(FIXTURES, "datadings", "basic", "basic.msgpack")),
             "a datadings file opened with bagz: not a bagz file", "basic.msgpack",
             "not a bagz file (no valid limits tail)")
expect_error(lambda: rows("SELECT count(*) FROM bagz(?)", os.path.join(BAGZ, "separate.bagz")),
             "limits.NAME beside a bag opened as tail: add limits=separate",
             "limits.separate.bagz exists beside it: add limits=separate")

# a bag whose frames name a trained dictionary, read without dictionary=
samples = [("sample %d: " % i).encode() + b"the quick brown fox jumps " * (i % 5 + 1) +
           bytes([i % 251]) * (i % 7) for i in range(400)]
zdict = zstandard.train_dictionary(2048, samples)
cctx = zstandard.ZstdCompressor(dict_data=zdict)
records = samples[:20]
frames = [cctx.compress(r) for r in records]
limits, end = [], 0
for fr in frames:
    end += len(fr)
    limits.append(end)
bag = write("trained.bagz", b"".join(frames) + b"".join(struct.pack("<Q", x) for x in limits))
dict_path = write("trained.dict", zdict.as_bytes())
expect_error(lambda: rows("SELECT record FROM bagz(?)", bag),
             "frames with a dictionary ID, no dictionary=: say which dictionary",
             "the frames need zstd dictionary ID %d: pass dictionary=" % zdict.dict_id())
other = zstandard.train_dictionary(2048, [s[::-1] for s in samples])
if other.dict_id() != zdict.dict_id():
    other_path = write("other.dict", other.as_bytes())
    expect_error(lambda: rows("SELECT record FROM bagz(?, ?)", bag, "dictionary=" + other_path),
                 "frames with a dictionary ID, the wrong dictionary given: both IDs",
                 "need zstd dictionary ID %d" % zdict.dict_id(), "has ID %d" % other.dict_id())
got = [bytes(r[0]) for r in rows("SELECT record FROM bagz(?, ?)", bag, "dictionary=" + dict_path)]
C.check(got == records, "the same bag with dictionary= reads back the records")
expect_error(lambda: rows("SELECT record FROM bagz(?)", os.path.join(BAGZ, "dict.bagz")),
             "raw-content dictionary bag read without one: suggest dictionary=", "dict.bagz",
             "pass dictionary=")

dd = os.path.join(FIXTURES, "datadings", "sharded")
want = sorted(f for f in os.listdir(dd) if f.endswith(".msgpack"))
expect_error(lambda: rows("SELECT count(*) FROM datadings(?)", dd),
             "a directory where a datadings file is expected names the .msgpack files",
             "a directory", *want)

# ------------------------------------------------- 6: detection


def detected(path):
    """dataset_info's format and rows, or the error text."""
    e = error_of(lambda: rows("SELECT 1 FROM dataset_info(?)", path))
    if e is not None:
        return str(e)
    info = dict(rows("SELECT property, value FROM dataset_info(?)", path))
    return (info.get("format"), info.get("rows"))


tar_path = os.path.join(T, "records.tar")
with tarfile.open(tar_path, "w") as tf:
    tf.add(os.path.join(BAGZ, "plain.bag"), arcname="plain.bag")
got = detected(tar_path)
C.check(isinstance(got, str) and "not a dataset" in got, "a .tar file is not a dataset", got)
got = detected(write("zeros", bytes(800)))
C.check(isinstance(got, str) and "not a dataset" in got, "800 zero bytes are not a dataset", got)
# limits that decrease, or pass the records' end, are no tail
recs = b"abcdefgh"
got = detected(write("decreasing", recs + struct.pack("<3Q", 5, 3, 8)))
C.check(isinstance(got, str) and "not a dataset" in got, "a decreasing limits tail is not a bag", got)
got = detected(write("pastrecords", recs + struct.pack("<3Q", 3, 9, 8)))
C.check(isinstance(got, str) and "not a dataset" in got, "a limit past the records' end is not a bag", got)
# controls: the same checks accept a real bag without its .bag name
shutil.copy(os.path.join(BAGZ, "plain.bag"), os.path.join(T, "plainbag"))
n = rows("SELECT count(*) FROM bagz(?)", os.path.join(BAGZ, "plain.bag"))[0][0]
C.eq(detected(os.path.join(T, "plainbag")), ("bagz", n), "an unnamed real bag is still detected")
C.eq(detected(write("consistent", recs + struct.pack("<3Q", 3, 3, 8))), ("bagz", 3),
     "an unnamed consistent tail (with an empty record) is still a bag")

# ------------------------------------------------- 8: numpy S is bytes in JSON


def b64_items(ndarray_json):
    """Expected JSON of an S array from the fixtures' typed JSON."""
    nd = ndarray_json["$ndarray"]
    arr = numpy.frombuffer(base64.b64decode(nd["data_b64"]), dtype=nd["dtype"])
    return [base64.b64encode(x.rstrip(b"\0")).decode() for x in arr.tolist()]


with open(os.path.join(FIXTURES, "datadings", "expected", "ndarrays.json")) as f:
    sample = json.load(f)["samples"][22]
got = rows("SELECT sample FROM datadings(?) WHERE rowid = 22",
           os.path.join(FIXTURES, "datadings", "ndarrays", "ndarrays.msgpack"))[0][0]
C.eq(json.loads(got)["a"], b64_items(sample["a"]), "datadings ndarrays row 22: S4 items are base64")
with open(os.path.join(FIXTURES, "atlas", "expected", "exotic.json")) as f:
    value = [e for e in json.load(f)["examples"] if e["i"] == 9][0]["value"]
got = rows("SELECT example FROM atlas(?) WHERE rowid = 9", os.path.join(FIXTURES, "atlas", "exotic"))[0][0]
C.eq(json.loads(got), b64_items(value), "atlas exotic row 9: a |S2 array's items are base64")
s2 = numpy.array([b"ab", b"c"], dtype="S2")
C.eq(json.loads(rows("SELECT npy_json(?)", npy_bytes(s2))[0][0]),
     [base64.b64encode(x).decode() for x in s2.tolist()], "npy_json of a |S2 array: base64 items")

# ------------------------------------------------- 9: the demo's rows

demo = subprocess.run(["sqlite3", "-bail", "-header", "-column", ":memory:", "-cmd",
                       ".load " + os.path.join(os.path.abspath(BUILD), "datasets")],
                      stdin=open(os.path.join(ROOT, "sql", "demo.sql")), cwd=ROOT,
                      capture_output=True, text=True, env=dict(os.environ))
C.check(demo.returncode == 0, "make demo's sql/demo.sql runs", demo.stderr[-300:])
C.check("null" not in demo.stdout, "the demo shows no JSON null (no NaN or infinity in its rows)",
        [ln for ln in demo.stdout.splitlines() if "null" in ln])

conn.close()
TMP.cleanup()
C.exit()
