"""test_tfexample.py - tfexample_json against Google's protobuf runtime.

Records are written by Debian's python3-protobuf (tfexample_records.py:
packed, unpacked, with unknown fields in every message). The reference
parser is Google's runtime with Features declared as TensorFlow does
(map<string, Feature>): what it accepts must decode to the same features,
what it refuses must be an error. The expected features come from the values the test wrote, read back by
Google's runtime (floats compared as float32 bits; NaN and infinities must
be JSON null). Corrupt records (every truncation and seeded random byte
changes of valid ones) must give an error or the reference parser's
features, never a crash; with 'on_error=null' NULL. Usage:
test_tfexample.py BUILD_DIR."""
import base64
import json
import math
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import warnings

from dstest import Checker, connect
from tfexample_records import CASES, Protos, entry_record, make, wrap

BUILD = sys.argv[1]
C = Checker()
T = tempfile.mkdtemp(prefix="tfexample-")
P = Protos(T)
PB, UNPACKED, EXTRA_PB, TFMAP = P.PB, P.UNPACKED, P.EXTRA, P.TFMAP
conn = connect(BUILD)


def reference(record):
    """Google's runtime reading record as TensorFlow does: {name: (kind,
    values)}, or None when it refuses the record."""
    ex = TFMAP.Example()
    # its C++ parser logs refused UTF-8 on stderr: keep the test log clean
    saved = os.dup(2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "Unexpected end-group tag": refused
            ex.ParseFromString(record)
    except Exception:
        return None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    out = {}
    for name, f in ex.features.feature.items():
        kind = f.WhichOneof("kind")
        if kind is None:
            out[name] = ("none", [])
        else:
            out[name] = (kind[:-5], list(getattr(f, kind).value))
    return out


def f32(x):
    return struct.pack("<f", x)


def same_values(kind, got, want):
    """got: a decoded JSON list; want: the values Google's runtime read."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if kind == "int64":
            if type(g) is not int or g != w:
                return False
        elif kind == "float":
            if not math.isfinite(w):
                if g is not None:
                    return False
            elif type(g) is not float or f32(g) != f32(w):
                return False
        elif kind == "bytes":
            if not isinstance(g, str) or base64.b64decode(g) != w:
                return False
        else:
            return False
    return True


def decode(record, opts=None):
    """tfexample_json(record[, opts]) as (name, list) pairs in order."""
    if opts is None:
        (j,) = conn.execute("SELECT tfexample_json(?)", (record,)).fetchone()
    else:
        (j,) = conn.execute("SELECT tfexample_json(?, ?)", (record, opts)).fetchone()
    return None if j is None else json.loads(j, object_pairs_hook=lambda kv: [list(p) for p in kv])


def expect_features(record, want_order, label):
    """record must decode to the features of Google's runtime, in the
    order want_order (names)."""
    ref = reference(record)
    if not C.check(ref is not None, label + ": Google's runtime reads it"):
        return
    try:
        got = decode(record)
    except sqlite3.Error as e:
        C.check(False, label, "error %s" % e)
        return
    C.eq([n for n, _ in got], want_order, label + ": names in record order")
    bad = [n for n, v in got if n not in ref or not same_values(
        ref[n][0] if ref[n][0] != "none" else "int64", v, ref[n][1])]
    C.check(not bad and len(got) == len(ref), label + ": values as Google's runtime reads them",
            "differ: %r; got %r" % (bad, got))


# ------------------------------------------------------------ valid records


for label, feats in CASES:
    names = [n for n, _, _ in feats]
    expect_features(make(PB, feats), names, label + " (packed)")
    expect_features(make(UNPACKED, feats), names, label + " (unpacked)")
    expect_features(make(EXTRA_PB, feats, extra=True), names, label + " (unknown fields)")

# the bytes differ where they should: unpacked numbers, unknown fields
nums = [("i", "int64", [1, 2, 3]), ("f", "float", [1.0, 2.0])]
C.check(make(PB, nums) != make(UNPACKED, nums), "the unpacked module writes other bytes")
C.check(len(make(EXTRA_PB, nums, extra=True)) > len(make(PB, nums)),
        "the extra module writes unknown fields")

# an empty record is an Example without features
C.eq(decode(b""), [], "0-byte record: {}")
C.eq(conn.execute("SELECT tfexample_json(?)", (make(PB, []),)).fetchone()[0], "{}",
     "no features: JSON text {}")

# JSON text: floats shortest for float32, int64 exact, NaN null
(text,) = conn.execute("SELECT tfexample_json(?)", (make(PB, [
    ("s", "float", [0.1, 0.25, 1.0, float("nan")]), ("i", "int64", [2**63 - 1])]),)).fetchone()
C.eq(text, '{"s":[0.1,0.25,1.0,null],"i":[9223372036854775807]}', "JSON text of floats and int64")
C.eq(conn.execute("SELECT json_valid(tfexample_json(?))", (make(PB, CASES[0][1]),)).fetchone()[0],
     1, "json_valid accepts the result")
C.eq(conn.execute("SELECT tfexample_json(?) ->> '$.label[0]'", (make(PB, CASES[0][1]),)).fetchone()[0],
     3, "->> reads a value")

# ------------------------------------------------------------ merging
# Fields that occur twice are merged as protocol buffers merge: a repeated
# name keeps its last value (at its last place), two Examples concatenated
# are one Example, of two different lists in one Feature the last wins.



dup = make(PB, [("a", "int64", [1]), ("b", "bytes", [b"x"]), ("a", "float", [2.0])])
expect_features(dup, ["b", "a"], "repeated name: the last entry wins")
C.eq(decode(dup), [["b", ["eA=="]], ["a", [2.0]]], "repeated name: JSON")
many_dup = make(PB, [("k%d" % (i % 40), "int64", [i]) for i in range(200)])
expect_features(many_dup, ["k%d" % i for i in range(40)], "200 entries over 40 names")
C.eq(decode(many_dup)[0], ["k0", [160]], "200 entries over 40 names: last value of k0")

cat = make(PB, [("x", "int64", [1])]) + make(PB, [("y", "float", [0.5]), ("x", "int64", [9])])
expect_features(cat, ["y", "x"], "two Examples concatenated")

f_i1 = PB.Feature(int64_list=PB.Int64List(value=[1, 2]))
f_i2 = PB.Feature(int64_list=PB.Int64List(value=[3]))
f_b = PB.Feature(bytes_list=PB.BytesList(value=[b"q"]))
# Known difference: protobuf-c keeps only the last of one list given twice
# in a Feature (Google's runtime concatenates them); no writer does this.
C.eq(reference(entry_record("m", f_i1, f_i2)), {"m": ("int64", [1, 2, 3])},
     "one list twice in a Feature: Google's runtime concatenates")
C.eq(decode(entry_record("m", f_i1, f_i2)), [["m", [3]]],
     "one list twice in a Feature: protobuf-c keeps the last (README)")
expect_features(entry_record("o", f_i1, f_b), ["o"], "two kinds in a Feature: the last wins")

# ------------------------------------------------------------ errors


def error_of(record, opts=None):
    try:
        decode(record, opts)
    except sqlite3.Error as e:
        return str(e)
    return None


NOT = "tfexample_json: not a tf.train.Example: "
KNOWN = [
    (b"\x0a\x05\x0a\x03", "length 5 runs past the end of the Example at byte offset 1"),
    (b"\x0a", "truncated varint at byte offset 1"),
    (b"\x0a\x02\x0a\x80", "truncated varint at byte offset 3"),
    (b"\x08\x01", "field 1 of Example has wire type 0 at byte offset 0"),
    (b"\x0a\x05\x0a\x03\x0a\x01\xff", "feature name is not UTF-8 at byte offset 6"),
    (b"\x0f", "invalid wire type at byte offset 0"),
    (b"\x00", "field number 0 at byte offset 0"),
    (wrap(1, wrap(1, wrap(2, wrap(2, b"\x0a\x03\x00\x00\x80")))),
     "packed floats are not whole 4-byte values at byte offset 10"),
    (wrap(1, wrap(1, wrap(2, wrap(3, b"\x0a\x01\x80")))), "truncated varint at byte offset 10"),
    (b"\x2d\x01\x02", "truncated fixed-size field at byte offset 1"),
    (wrap(1, wrap(1, wrap(2, wrap(2, b"\x81\x00" + b"\x00" * 8)))),
     "field number 0 at byte offset 8"),
]
for rec, want in KNOWN:
    C.eq(error_of(rec), NOT + want, "error: " + want)
    if "has wire type" in want:  # known difference (README)
        C.check(reference(rec) is not None, "Google's runtime skips it as unknown: " + want)
    else:
        C.check(reference(rec) is None, "Google's runtime refuses it too: " + want)
    C.eq(decode(rec, "on_error=null"), None, "on_error=null: NULL for " + rec.hex())

C.eq(error_of(12345), "tfexample_json: record is not a BLOB", "INTEGER argument")
C.eq(decode(12345, "on_error=null"), None, "INTEGER argument with on_error=null")
C.eq(decode(None), None, "NULL record gives NULL")
C.eq(error_of(b"", "on_error=maybe"),
     "tfexample_json: unknown option 'on_error=maybe' (expected on_error=null or on_error=error)",
     "unknown option")
C.eq(decode(make(PB, CASES[0][1]), "on_error=null"), decode(make(PB, CASES[0][1])),
     "on_error=null leaves valid records alone")
C.eq(error_of(b"\x0a", "on_error=error"),
     NOT + "truncated varint at byte offset 1", "on_error=error raises")

# ------------------------------------------------------------ corrupt records
# Every truncation and 3000 seeded byte changes of valid records: an error
# that says where, or (when the reference still reads it) its features.

SEEDS = [make(PB, CASES[0][1]), make(UNPACKED, CASES[0][1] + CASES[4][1]),
         make(EXTRA_PB, CASES[2][1] + [("n", "int64", [5, -6])], extra=True), dup]
rng = random.Random(16)
mutants = []
for s in SEEDS:
    mutants += [s[:k] for k in range(len(s))]
    for _ in range(750):
        m = bytearray(s)
        for _ in range(rng.choice([1, 1, 2, 3])):
            m[rng.randrange(len(m))] = rng.randrange(256)
        mutants.append(bytes(m))
agree = disagree = bad_msgs = known = 0
examples = []
for m in mutants:
    ref = reference(m)
    err = error_of(m)
    if err is not None:
        if not err.startswith(NOT) or ("byte offset" not in err and "protobuf-c" not in err):
            bad_msgs += 1
            examples.append(("message", m.hex(), err))
        if ref is None:
            agree += 1
        elif "group" in err or "has wire type" in err:
            known += 1  # protobuf-c refuses, Google's runtime skips (README)
        else:
            disagree += 1
            examples.append(("refused", m.hex(), err))
        if decode(m, "on_error=null") is not None:
            bad_msgs += 1
        continue
    got = decode(m)
    ok = ref is not None and len(got) == len(ref) and all(
        n in ref and same_values(ref[n][0] if ref[n][0] != "none" else "int64", v, ref[n][1])
        for n, v in got)
    if ok:
        agree += 1
    else:
        disagree += 1
        examples.append(("accepted", m.hex(), got, ref))
C.check(bad_msgs == 0, "%d corrupt records: every error names what and where" % len(mutants),
        examples[:3])
C.check(disagree == 0, "%d corrupt records: %d as Google's runtime reads them, %d with a known "
        "field in another wire type or a group" % (len(mutants), agree, known),
        "%d differ, e.g. %r" % (disagree, examples[:3]))
C.check(agree > len(mutants) * 0.9, "most corrupt records agree outright (%d)" % agree)

# ------------------------------------------------------------ over bagz records


def u64(*vals):
    return b"".join(struct.pack("<Q", v) for v in vals)


recs = [make(PB, [("label", "int64", [i % 3]), ("score", "float", [i / 4])]) for i in range(10)]
recs[7] = b"\x0a\x05\x0a\x03"
ends, pos = [], 0
for r in recs:
    pos += len(r)
    ends.append(pos)
bag = os.path.join(T, "ex.bag")
with open(bag, "wb") as f:
    f.write(b"".join(recs) + u64(*ends))
for lib in ("bagz", "datasets"):
    c2 = sqlite3.connect(":memory:")
    c2.enable_load_extension(True)
    c2.load_extension(os.path.join(BUILD, lib))
    rows = c2.execute("SELECT rowid, tfexample_json(record, 'on_error=null') ->> '$.label[0]'"
                      " FROM bagz(?)", (bag,)).fetchall()
    C.eq(rows, [(i, None if i == 7 else i % 3) for i in range(10)],
         "%s.so: tfexample_json over a bag, on_error=null for record 7" % lib)
    try:
        c2.execute("SELECT tfexample_json(record) FROM bagz(?)", (bag,)).fetchall()
        C.check(False, "%s.so: a bad record stops the query" % lib)
    except sqlite3.Error as e:
        C.eq(str(e), NOT + "length 5 runs past the end of the Example at byte offset 1",
             "%s.so: a bad record stops the query" % lib)
    c2.close()

# ------------------------------------------------------------ fuzz regressions
# Every saved input of fuzz_tfexample, in a child process (a crash is a
# FAIL naming the file): JSON, or an error that says it is not an Example.

REG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "fuzz", "regressions", "tfexample")
CHILD = """import sqlite3, sys
c = sqlite3.connect(':memory:')
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
rec = open(sys.argv[2], 'rb').read()
try:
    print('ok', c.execute('SELECT tfexample_json(?)', (rec,)).fetchone()[0][:80])
except sqlite3.Error as e:
    print('error', e)
"""
names = sorted(f for f in os.listdir(REG) if not f.endswith(".md"))
C.check(len(names) >= 5, "fuzz_tfexample regression inputs exist (%d)" % len(names))
for name in names:
    p = subprocess.run([sys.executable, "-c", CHILD, os.path.join(BUILD, "datasets"),
                        os.path.join(REG, name)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    out = p.stdout.decode("utf-8", "replace")
    C.check(p.returncode == 0 and (out.startswith("ok {") or out.startswith("error " + NOT)
                                   or "max_value_bytes" in out),
            "regression %s: %s" % (name, out.strip()[:100]),
            "exit %d: %s %s" % (p.returncode, out, p.stderr.decode("utf-8", "replace")[-300:]))

shutil.rmtree(T)
C.exit()
