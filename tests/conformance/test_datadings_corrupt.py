"""test_datadings_corrupt.py - corrupt and misused datadings inputs fail cleanly.

Every dataset here lives in a temporary folder: copies of the upstream
fixtures (tests/fixtures/upstream/datadings) damaged with Python, or small
datasets written by the helper writer below (msgpack by hand, .offsets,
.keys, salted .key_hashes, simplebloom .filter and .md5 exactly as
docs/formats/datadings.md describes them). Each damaged case must give an
sqlite3.Error whose message starts with "datadings: ", names the file and
says what is wrong (with the sample index and byte offset where the reader
reports one), in the table-valued form and, where it makes sense, the
CREATE VIRTUAL TABLE form -- never a wrong row. Also: with a damaged sample,
count(*), key and raw still work (they never decode samples), a query that
touches it fails, and its neighbours still read exactly as in the intact
fixture; hostile container counts fail without allocating; key lookups
never return a row for an absent key (Bloom filter with every bit set, a
forged key hash) and still find every key with .filter, .key_hashes or both
removed, with only the legacy .index, or with .keys served from the .index;
datadings_verify reports modified and missing files.
Usage: test_datadings_corrupt.py BUILD_DIR"""
import hashlib
import json
import math
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

D = os.path.join(FIXTURES, "datadings")


def hostile_child(build, paths):
    """Run the hostile-sample queries in this (child) process and print the
    results and the peak memory as JSON."""
    import resource
    import time
    c = connect(build)
    out = []
    for p in paths:
        t0 = time.process_time()  # CPU time: a loaded machine does not inflate it
        try:
            r = c.execute("SELECT sample FROM datadings(?) WHERE rowid = 1", (p,)).fetchall()
            out.append({"path": p, "rows": r})
        except sqlite3.Error as e:
            out.append({"path": p, "error": str(e)})
        out[-1]["seconds"] = time.process_time() - t0
    print(json.dumps({"results": out,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[2] == "--hostile-child":
    hostile_child(sys.argv[1], sys.argv[3:])
    sys.exit(0)


BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="datadings-corrupt-")
T = TMP.name
_n = [0]
SUFFIXES = ("", ".offsets", ".keys", ".key_hashes", ".filter", ".index", ".md5")


# ---------------------------------------------------------------- msgpack

def mp(v):
    """A minimal msgpack encoder (as msgpack-python packs these types)."""
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if 0 <= v < 2 ** 8:
            return b"\xcc" + struct.pack(">B", v)
        if 0 <= v < 2 ** 16:
            return b"\xcd" + struct.pack(">H", v)
        if 0 <= v < 2 ** 32:
            return b"\xce" + struct.pack(">I", v)
        if 0 <= v < 2 ** 64:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        return mp_str(v.encode("utf-8"))
    if isinstance(v, bytes):
        if len(v) < 256:
            return b"\xc4" + bytes([len(v)]) + v
        return b"\xc6" + struct.pack(">I", len(v)) + v
    if isinstance(v, (list, tuple)):
        return mp_array_hdr(len(v)) + b"".join(mp(x) for x in v)
    if isinstance(v, dict):
        n = len(v)
        hdr = bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)
        return hdr + b"".join(mp(k) + mp(x) for k, x in v.items())
    raise TypeError(v)


def mp_str(b):
    """A msgpack str header + the given (possibly invalid UTF-8) bytes."""
    n = len(b)
    if n < 32:
        return bytes([0xa0 | n]) + b
    if n < 256:
        return b"\xd9" + bytes([n]) + b
    if n < 65536:
        return b"\xda" + struct.pack(">H", n) + b
    return b"\xdb" + struct.pack(">I", n) + b


def mp_array_hdr(n):
    if n < 16:
        return bytes([0x90 | n])
    if n < 65536:
        return b"\xdc" + struct.pack(">H", n)
    return b"\xdd" + struct.pack(">I", n)


# ------------------------------------------------- hashes and the writer

def blake2s(b, salt=b""):
    return hashlib.blake2s(b, salt=salt).digest()


SALT0 = blake2s(b"0")[:8]


def key_hash(key, salt=SALT0):
    return blake2s(key.encode("utf-8"), salt=salt)[:8]


def bloom_params(m, p):
    """simplebloom's derived (num_bits, num_hashes), datadings.md 7.2."""
    x = m * math.log(p)
    x = x / -0.4804530139182015
    x = x / 8
    num_bits = math.ceil(x) * 8
    return num_bits, round((num_bits / m) * 0.6931471805599453)


def bloom_positions(key, num_bits, k):
    d = blake2s(key.encode("utf-8"))
    h1, h2 = struct.unpack(">QQ", d[:16])
    return [((h1 + j * h2) % 2 ** 64) % num_bits for j in range(k)]


def bloom_file(keys):
    m = max(2, len(keys))
    p = 1.0 / m
    nbits, k = bloom_params(m, p)
    bits = bytearray(nbits // 8)
    for key in keys:
        for pos in bloom_positions(key, nbits, k):
            bits[pos >> 3] |= 1 << (pos & 7)
    return b"SIMPBLOO" + struct.pack(">QQd", 32 + len(bits), m, p) + bytes(bits)


def bloom_maybe(filter_bytes, key):
    """The filter's own answer for key (1 maybe, 0 absent)."""
    _, m, p = struct.unpack(">QQd", filter_bytes[8:32])
    nbits, k = bloom_params(m, p)
    bits = filter_bytes[32:]
    return all(bits[pos >> 3] & (1 << (pos & 7)) for pos in bloom_positions(key, nbits, k))


def u64be(*vals):
    return b"".join(struct.pack(">Q", v) for v in vals)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def md5_lines(path):
    """The .md5 text for the files of dataset `path` that exist."""
    base = os.path.basename(path)
    out = []
    for suf in ("", ".offsets", ".keys", ".key_hashes", ".filter", ".index"):
        if os.path.exists(path + suf):
            out.append("%s  %s\n" % (hashlib.md5(read(path + suf)).hexdigest(), base + suf))
    return "".join(out)


def make_dataset(name, samples, keys=None):
    """Write a new-style dataset T/<name>.msgpack from raw sample bytes, as
    the upstream writer would (keys default to k0, k1, ...)."""
    keys = keys if keys is not None else ["k%d" % i for i in range(len(samples))]
    path = os.path.join(T, name + ".msgpack")
    offs, pos = [0], 0
    for s in samples:
        pos += len(s)
        offs.append(pos)
    write(path, b"".join(samples))
    write(path + ".offsets", u64be(*offs))
    write(path + ".keys", mp_array_hdr(len(keys)) + b"".join(mp(k) for k in keys))
    write(path + ".key_hashes", SALT0 + b"".join(key_hash(k) for k in keys))
    write(path + ".filter", bloom_file(keys))
    write(path + ".md5", md5_lines(path).encode())
    return path


def copy_fixture(src, name, drop=()):
    """Copy fixture `src` to T/<name>.msgpack (+ siblings, minus the
    suffixes in drop), with the .md5 file's names rewritten."""
    s = os.path.join(D, src, src + ".msgpack")
    dst = os.path.join(T, name + ".msgpack")
    for suf in SUFFIXES:
        if os.path.exists(s + suf) and suf not in drop:
            shutil.copyfile(s + suf, dst + suf)
    if os.path.exists(dst + ".md5"):
        text = read(dst + ".md5").decode().replace(src + ".msgpack", name + ".msgpack")
        write(dst + ".md5", text.encode())
    return dst


def patch(path, offset, data):
    b = bytearray(read(path))
    b[offset:offset + len(data)] = data
    write(path, bytes(b))


def expected(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        return json.load(f)


def offsets_of(path):
    b = read(path + ".offsets")
    return list(struct.unpack(">%dQ" % (len(b) // 8), b))


# ----------------------------------------------------------------- SQL

def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def tvf(path):
    return "datadings(%s)" % sql_quote(path)


def create(path):
    """CREATE VIRTUAL TABLE over path; returns the table name."""
    _n[0] += 1
    name = "temp.c%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING datadings(%s)" % (name, sql_quote(path)))
    return name


def error_of(fn):
    """The sqlite3.Error text fn() raises, or None (and the result) if none."""
    try:
        return None, fn()
    except sqlite3.Error as e:
        return str(e), None


def expect_error(fn, label, *needles, prefix="datadings: "):
    """fn() must raise sqlite3.Error starting with prefix and containing
    every needle (the file's basename is passed as one of them)."""
    msg, got = error_of(fn)
    if msg is None:
        return C.check(False, label, "no error, got %r" % (got,))
    ok = msg.startswith(prefix)
    missing = [n for n in needles if n not in msg]
    return C.check(ok and not missing, label,
                   "error %r: %s" % (msg, "lacks %r" % missing if missing else
                                     "no %r prefix" % prefix))


def open_error_both(path, label, *needles):
    """An open-time error: in the table-valued form when queried (any
    query, even count(*)), in the CREATE form at CREATE time."""
    expect_error(lambda: rows("SELECT count(*) FROM %s" % tvf(path)), label + " (tvf count)",
                 *needles)
    expect_error(lambda: rows("SELECT key, sample FROM %s" % tvf(path)), label + " (tvf scan)",
                 *needles)
    expect_error(lambda: create(path), label + " (create)", *needles)


def both_forms(path):
    """[(form, table, sample column)] for a dataset that opens."""
    return [("tvf", tvf(path), "sample"), ("create", create(path), "sample")]


def tvf_row(path, g, col="sample"):
    return rows("SELECT %s FROM %s WHERE rowid = ?" % (col, tvf(path)), g)


BASIC = os.path.join(D, "basic", "basic.msgpack")
BASIC_N = 200
BASIC_OFFS = offsets_of(BASIC)
BASIC_SIZE = os.path.getsize(BASIC)
C.eq((len(BASIC_OFFS), BASIC_OFFS[0], BASIC_OFFS[-1]), (BASIC_N + 1, 0, BASIC_SIZE),
     "basic fixture: 201 offsets from 0 to the data size")
C.eq(rows("SELECT count(*) FROM %s" % tvf(BASIC)), [(BASIC_N,)], "basic fixture: control count")


def basic_sample(g, col="sample"):
    return tvf_row(BASIC, g, col)


# ------------------------------------------------ truncated data file


def cut_short(path, label, first_bad, *needles):
    """A data file cut short (issue 11 item 10): count(*) comes from the
    index, samples before first_bad read as in the intact fixture, the
    later ones fail naming the file and the offset, in both forms."""
    for form, t, col in both_forms(path):
        C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], "%s (%s): count(*) from the index"
             % (label, form))
        got = rows("SELECT rowid, key, %s FROM %s WHERE rowid < ?" % (col, t), first_bad)
        want = rows("SELECT rowid, key, sample FROM %s WHERE rowid < ?" % tvf(BASIC), first_bad)
        C.eq(got, want, "%s (%s): samples 0..%d read" % (label, form, first_bad - 1))
        for g in (first_bad, BASIC_N - 1):
            expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = ?" % (col, t), g),
                         "%s (%s): sample %d fails" % (label, form, g), "sample %d" % g, *needles)
        expect_error(lambda: rows("SELECT key, %s FROM %s" % (col, t)),
                     "%s (%s): a scan fails at the cut" % (label, form), *needles)


p = copy_fixture("basic", "trunc")
write(p, read(BASIC)[:BASIC_SIZE - 100])
cut = next(g for g in range(BASIC_N) if BASIC_OFFS[g + 1] > BASIC_SIZE - 100)
cut_short(p, "data file cut by 100 bytes", cut, "trunc.msgpack (%d bytes" % (BASIC_SIZE - 100),
          "the data file is cut short")
p = copy_fixture("basic", "trunc0")
write(p, b"")
cut_short(p, "data file emptied", 0, "trunc0.msgpack (0 bytes", "the data file is cut short")
p = copy_fixture("basic", "extra")
write(p, read(BASIC) + b"\xc0\xc0\xc0")
open_error_both(p, "3 bytes appended to the data file", "extra.msgpack",
                "data file has %d bytes" % (BASIC_SIZE + 3),
                "says %d: extra bytes after the last sample" % BASIC_SIZE)

# ------------------------------------------------------------ .offsets

# the last offset past the end of the data file
p = copy_fixture("basic", "lastpast")
patch(p + ".offsets", 8 * BASIC_N, u64be(BASIC_SIZE + 1))
cut_short(p, "last offset past the data file", BASIC_N - 1,
          "lastpast.msgpack.offsets: sample 199: offset at byte 1600 says %d" % (BASIC_SIZE + 1))
# the first offset is not 0
p = copy_fixture("basic", "first5")
patch(p + ".offsets", 0, u64be(5))
open_error_both(p, "first offset 5", "first5.msgpack.offsets", "the first offset (byte 0) is 5, not 0")
# a wrong size: 4 stray bytes, one offset missing, an empty file
for name, body, size in (("off4", read(BASIC + ".offsets") + b"\0\0\0\0", 1612),
                         ("offshort", read(BASIC + ".offsets")[:-8], 1600),
                         ("offempty", b"", 0)):
    p = copy_fixture("basic", name)
    write(p + ".offsets", body)
    open_error_both(p, ".offsets of %d bytes" % size, name + ".msgpack.offsets",
                    "%d bytes, expected 1608" % size, "n = 200 samples counted in",
                    name + ".msgpack.keys")
# an .offsets of 12 bytes without .keys or .index (n from .offsets alone)
p = copy_fixture("raw", "offodd", drop=(".keys", ".key_hashes", ".filter"))
write(p + ".offsets", read(p + ".offsets")[:12])
open_error_both(p, ".offsets of 12 bytes and no .keys", "offodd.msgpack.offsets",
                "12 bytes, not a whole number")

# middle offsets past the end: offsets[50] = size + 1000, offsets[120] = 2^64-1
p = copy_fixture("basic", "midpast")
patch(p + ".offsets", 8 * 50, u64be(BASIC_SIZE + 1000))
patch(p + ".offsets", 8 * 120, u64be(2 ** 64 - 1))
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], "offsets past the end: count (%s)" % form)
    C.eq(rows("SELECT key FROM %s WHERE rowid IN (49, 50, 119, 120) ORDER BY rowid" % t),
         [("basic-0049",), ("basic-0050",), ("basic-0119",), ("basic-0120",)],
         "offsets past the end: keys still read (%s)" % form)
    for g, needles in ((49, ("sample 49", "offset at byte 400 says %d" % (BASIC_SIZE + 1000),
                             "past the end of", "(%d bytes)" % BASIC_SIZE)),
                       (50, ("sample 50", "offsets at bytes 400 and 408",
                             "[%d, %d)" % (BASIC_SIZE + 1000, BASIC_OFFS[51]), "not monotonic")),
                       (119, ("sample 119", "offset at byte 960 says 18446744073709551615",
                              "past the end")),
                       (120, ("sample 120", "not monotonic"))):
        for col in (scol, "raw"):
            expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = %d" % (col, t, g)),
                         "offsets past the end: %s of sample %d fails (%s)" % (col, g, form),
                         "midpast.msgpack.offsets", *needles)
    expect_error(lambda: rows("SELECT key, %s FROM %s" % (scol, t)),
                 "offsets past the end: a full scan fails at sample 49 (%s)" % form,
                 "midpast.msgpack", "sample 49")
    for g in (48, 51, 118, 121):
        C.eq(rows("SELECT key, %s, raw FROM %s WHERE rowid = %d" % (scol, t, g)),
             basic_sample(g, "key, sample, raw"),
             "offsets past the end: sample %d reads as in the fixture (%s)" % (g, form))
    C.eq(rows("SELECT count(*) FROM %s WHERE rowid < 49 AND %s IS NOT NULL" % (t, scol)), [(49,)],
         "offsets past the end: samples 0..48 decode (%s)" % form)

# non-monotonic offsets, three damages in one copy:
#   offsets[10] = o[11]: sample 9 = [o9, o11) holds two samples (trailing
#                        bytes), sample 10 = [o11, o11) is empty;
#   offsets[30] = o[30] - 1: sample 29 is cut short by one byte (runs past
#                        its slice), sample 30 starts with sample 29's last
#                        byte (one fixint, then trailing bytes);
#   offsets[41] = o[40] - 1: sample 40 = [o40, o40 - 1) is inverted.
p = copy_fixture("basic", "nonmono")
o = BASIC_OFFS
patch(p + ".offsets", 8 * 10, u64be(o[11]))
patch(p + ".offsets", 8 * 30, u64be(o[30] - 1))
patch(p + ".offsets", 8 * 41, u64be(o[40] - 1))
len9, len10, len29 = o[10] - o[9], o[11] - o[10], o[30] - o[29]
C.eq(read(BASIC)[o[30] - 1:o[30]], b"j", "basic sample 29 ends with the fixint 0x6a")
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], "non-monotonic: count (%s)" % form)
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 9" % (scol, t)),
                 "non-monotonic: sample 9 spans two samples, trailing bytes (%s)" % form,
                 "nonmono.msgpack", "sample 9", "%d bytes after the msgpack object at byte %d"
                 % (len10, len9))
    C.eq(rows("SELECT length(raw) FROM %s WHERE rowid = 9" % t), [(len9 + len10,)],
         "non-monotonic: raw of sample 9 is the slice the offsets give (%s)" % form)
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 10" % (scol, t)),
                 "non-monotonic: empty sample 10 fails (%s)" % form,
                 "nonmono.msgpack", "sample 10", "truncated (needs more than 0 bytes)")
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 29" % (scol, t)),
                 "non-monotonic: sample 29 runs past its slice (%s)" % form,
                 "nonmono.msgpack", "sample 29",
                 "msgpack object truncated (needs more than %d bytes)" % (len29 - 1))
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 30" % (scol, t)),
                 "non-monotonic: sample 30 starts one byte early (%s)" % form,
                 "nonmono.msgpack", "sample 30",
                 "%d bytes after the msgpack object at byte 1" % (o[31] - o[30]))
    for col in (scol, "raw"):
        expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 40" % (col, t)),
                     "non-monotonic: %s of inverted sample 40 fails (%s)" % (col, form),
                     "nonmono.msgpack.offsets", "sample 40", "offsets at bytes 320 and 328",
                     "[%d, %d)" % (o[40], o[40] - 1), "not monotonic")
    for g in (8, 11, 28, 31, 39, 42):
        C.eq(rows("SELECT key, %s FROM %s WHERE rowid = %d" % (scol, t, g)),
             basic_sample(g, "key, sample"),
             "non-monotonic: sample %d reads as in the fixture (%s)" % (g, form))
    expect_error(lambda: rows("SELECT sum(length(%s)) FROM %s WHERE rowid BETWEEN 5 AND 15"
                              % (scol, t)),
                 "non-monotonic: a range scan over sample 9 fails (%s)" % form, "sample 9")
    expect_error(lambda: rows("SELECT count(raw) FROM %s" % t),
                 "non-monotonic: a scan of raw fails at sample 40 (%s)" % form, "sample 40")

# --------------------------------------------------- .keys vs .offsets

# .keys with the last key dropped (header and body): n = 199 disagrees
p = copy_fixture("basic", "keys199")
ks = ["basic-%04d" % i for i in range(199)]
write(p + ".keys", mp_array_hdr(199) + b"".join(mp(k) for k in ks))
open_error_both(p, ".keys with 199 keys, .offsets with 200", "keys199.msgpack.offsets",
                "1608 bytes, expected 1600", "n = 199 samples counted in", "keys199.msgpack.keys")
# only the array header says 201
p = copy_fixture("basic", "keys201")
kb = read(p + ".keys")
C.eq(kb[:3], b"\xdc\x00\xc8", "basic .keys starts with array16 header of 200")
patch(p + ".keys", 0, b"\xdc\x00\xc9")
open_error_both(p, ".keys header says 201", "keys201.msgpack", "1608 bytes, expected 1616",
                "n = 201")
# a hostile header: 2^32-1 keys in a 2 KiB file
p = copy_fixture("basic", "keyshuge")
write(p + ".keys", b"\xdd\xff\xff\xff\xff" + kb[3:])
open_error_both(p, ".keys header says 2^32-1 keys", "keyshuge.msgpack.keys",
                "array header at byte 0 says 4294967295 keys", "more than the")
# not an array at all
p = copy_fixture("basic", "keysmap")
patch(p + ".keys", 0, b"\xde")
open_error_both(p, ".keys is a map", "keysmap.msgpack.keys",
                "expected a msgpack array header at byte 0, found 0xde")
# header and offsets agree but the body is damaged: key 3 is not a str, or
# the array ends early; opening works, the key position pass fails
for name, damage, needles in (
        ("keynotstr", lambda b: b[:3 + 3 * 11] + b"\xc0" + b[3 + 3 * 11 + 1:],
         ("key 3 at byte 36: expected a msgpack str, found 0xc0",)),
        ("keyscut", lambda b: b[:-4],
         ("key 199 at byte", "runs past the end of the file")),
        ("keystrail", lambda b: b + b"\xa1x",
         ("2 unexpected bytes after the last of 200 keys",))):
    p = copy_fixture("basic", name)
    write(p + ".keys", damage(read(p + ".keys")))
    for form, t, scol in both_forms(p):
        C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], "%s: count (%s)" % (name, form))
        C.eq(rows("SELECT %s FROM %s WHERE rowid = 7" % (scol, t)), basic_sample(7),
             "%s: samples read without keys (%s)" % (name, form))
        expect_error(lambda: rows("SELECT key FROM %s" % t), "%s: SELECT key fails (%s)" % (name, form),
                     name + ".msgpack.keys", *needles)
        expect_error(lambda: rows("SELECT rowid FROM %s WHERE key = 'basic-0005'" % t),
                     "%s: key lookup fails, no silent miss (%s)" % (name, form),
                     name + ".msgpack.keys", *needles)

# ------------------------------------------------------------- .filter

FB = read(BASIC + ".filter")
C.eq((len(FB), FB[:8]), (308, b"SIMPBLOO"), "basic .filter: 308 bytes, SIMPBLOO magic")
filter_cases = [
    ("fmagic", b"SIMPBLOX" + FB[8:], ('bad magic at byte 0 (expected "SIMPBLOO")',)),
    ("fzero", b"\0" * 308, ("bad magic at byte 0",)),
    ("fshort", FB[:20], ("20 bytes, too short for the 32-byte simplebloom header",)),
    ("fheader", FB[:32], ("header at byte 8 says the filter has 308 bytes, but the file has 32",)),
    ("fcut", FB[:-1], ("header at byte 8 says the filter has 308 bytes, but the file has 307",)),
    ("flong", FB + b"\0", ("header at byte 8 says the filter has 308 bytes, but the file has 309",)),
    # total_size says 309 and the file has 309: the recomputed bit count disagrees
    ("fbits", FB[:8] + u64be(309) + FB[16:] + b"\0",
     ("capacity 200 and rate 0.005", "give 276 bytes of bits, but the file holds 277",)),
    ("fcap0", FB[:16] + u64be(0) + FB[24:], ("capacity 0 (byte 16)", "not usable")),
    ("fp1", FB[:24] + struct.pack(">d", 1.0) + FB[32:], ("rate 1 (byte 24)", "not usable")),
    ("fpnan", FB[:24] + struct.pack(">d", float("nan")) + FB[32:], ("(byte 24)", "not usable")),
]
for name, body, needles in filter_cases:
    p = copy_fixture("basic", name)
    write(p + ".filter", body)
    open_error_both(p, "filter %s" % name, name + ".msgpack.filter", *needles)

# --------------------------------------------------------- .key_hashes

KH = read(BASIC + ".key_hashes")
for name, body, size in (("khshort", KH[:-8], 1600), ("khlong", KH + b"\0", 1609),
                         ("khsalt", KH[:8], 8), ("khempty", b"", 0)):
    p = copy_fixture("basic", name)
    write(p + ".key_hashes", body)
    open_error_both(p, ".key_hashes of %d bytes" % size, name + ".msgpack.key_hashes",
                    "%d bytes, expected 1608 (8-byte salt + 8 bytes for each of the 200 samples)"
                    % size)

# ---------------------------------------------------- missing files

p = copy_fixture("basic", "nodata")
os.unlink(p)
open_error_both(p, "missing data file", "nodata.msgpack", "cannot open", "No such file")
p = copy_fixture("basic", "noindex", drop=(".offsets",))
open_error_both(p, "neither .offsets nor .index", "noindex.msgpack",
                "neither noindex.msgpack.offsets nor noindex.msgpack.index exists")
os.makedirs(os.path.join(T, "adir.msgpack"))
open_error_both(os.path.join(T, "adir.msgpack"), "data path is a directory", "adir.msgpack",
                "a directory, with no .msgpack file inside")
pat = os.path.join(T, "nomatch-*.msgpack")
open_error_both(pat, "glob matching nothing", "nomatch-*.msgpack", "no files match this pattern")

# sharded: each state in its own folder (the table-valued form keeps the
# dataset it opened last, by path, so a path is never reused after damage)


def shard_copy(name):
    d = os.path.join(T, name)
    os.makedirs(d)
    for f in os.listdir(os.path.join(D, "sharded")):
        shutil.copyfile(os.path.join(D, "sharded", f), os.path.join(d, f))
    return d, os.path.join(d, "part-*.msgpack")


d, pat = shard_copy("sh0")
C.eq(rows("SELECT count(*) FROM %s" % tvf(pat)), [(15,)], "sharded copy: control count")
d, pat = shard_copy("sh1")
write(os.path.join(d, "part-00002.msgpack.offsets"),
      read(os.path.join(d, "part-00002.msgpack.offsets"))[:-8])
open_error_both(pat, "sharded: shard 2 with a short .offsets", "part-00002.msgpack.offsets",
                "56 bytes, expected 64")
d, pat = shard_copy("sh2")
for suf in SUFFIXES:
    if os.path.exists(os.path.join(d, "part-00002.msgpack" + suf)):
        os.unlink(os.path.join(d, "part-00002.msgpack" + suf))
C.eq(rows("SELECT count(*), group_concat(key) FROM %s" % tvf(pat)),
     [(8, "s0,s1,s2,s3,s4,s12,s13,s14")], "sharded: without shard 2 the glob opens the rest")
d, pat = shard_copy("sh3")
os.unlink(os.path.join(d, "part-00001.msgpack.offsets"))
open_error_both(pat, "sharded: empty shard 1 lost its .offsets", "part-00001.msgpack",
                "neither part-00001.msgpack.offsets nor part-00001.msgpack.index exists")
d, pat = shard_copy("sh4")
patch(os.path.join(d, "part-00003.msgpack"), 0, b"\xc1")
for form, t, scol in both_forms(pat):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(15,)], "sharded: bad sample in shard 3: count (%s)"
         % form)
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 12" % (scol, t)),
                 "sharded: bad first sample of shard 3 is global sample 12 (%s)" % form,
                 "part-00003.msgpack", "sample 12", "invalid msgpack byte 0xc1 at byte 0")
    C.eq(rows("SELECT key FROM %s WHERE rowid IN (11, 12, 13) ORDER BY rowid" % t),
         [("s11",), ("s12",), ("s13",)], "sharded: keys around the bad sample (%s)" % form)
    C.eq(rows("SELECT %s FROM %s WHERE rowid IN (11, 13) ORDER BY rowid" % (scol, t)),
         rows("SELECT sample FROM %s WHERE rowid IN (11, 13) ORDER BY rowid"
              % tvf(os.path.join(D, "sharded", "part-*.msgpack"))),
         "sharded: samples around the bad one read as in the fixture (%s)" % form)

# ------------------------------------------------- damaged sample bytes

# Each case replaces sample 7 of basic by bytes of the same length (offsets
# unchanged) or crafts a small dataset; the message must name the sample
# and say what is wrong.
S7 = read(BASIC)[BASIC_OFFS[7]:BASIC_OFFS[8]]
KEY7 = b"\xaabasic-0007"
k7 = S7.find(KEY7)
C.check(k7 > 0, "basic sample 7 holds its key as a fixstr", repr(S7[:40]))


def damaged_sample7(name, new7):
    assert len(new7) == len(S7)
    p = copy_fixture("basic", name)
    patch(p, BASIC_OFFS[7], new7)
    return p


def check_bad_sample(p, name, g, neighbours, needles, key=None, forms=None, col="i_small"):
    """Sample g of p is damaged: count/key/raw work, sample (and the field
    column col, unless None) fails with needles, the neighbours read as in
    the fixture."""
    for form, t, scol in forms or both_forms(p):
        what = "%s (%s)" % (name, form)
        C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], what + ": count(*) works")
        C.eq(rows("SELECT count(key), count(DISTINCT key) FROM %s" % t), [(BASIC_N, BASIC_N)],
             what + ": SELECT key over every row works")
        C.eq(rows("SELECT key FROM %s WHERE rowid = %d" % (t, g)), [(key or "basic-%04d" % g,)],
             what + ": key of the bad sample")
        C.eq(rows("SELECT raw FROM %s WHERE rowid = %d" % (t, g)),
             [(read(p)[offsets_of(p)[g]:offsets_of(p)[g + 1]],)],
             what + ": raw of the bad sample is its bytes")
        expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = %d" % (scol, t, g)),
                     what + ": sample fails", os.path.basename(p), "sample %d" % g, *needles)
        expect_error(lambda: rows("SELECT %s FROM %s WHERE key = %s" % (scol, t, sql_quote(
            key or "basic-%04d" % g))), what + ": sample by key fails", "sample %d" % g, *needles)
        expect_error(lambda: rows("SELECT key, %s FROM %s" % (scol, t)),
                     what + ": full scan fails", "sample %d" % g, *needles)
        expect_error(lambda: rows("SELECT count(*) FROM %s WHERE %s IS NOT NULL" % (t, scol)),
                     what + ": count over decoded samples fails", "sample %d" % g)
        if form == "create" and col:
            expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = %d" % (col, t, g)),
                         what + ": field column %s fails" % col, "sample %d" % g, *needles)
            C.eq(rows("SELECT count(%s) FROM %s WHERE rowid <> %d" % (col, t, g)), [(BASIC_N - 1,)],
                 what + ": field column %s reads in every other row" % col)
        for n in neighbours:
            C.eq(rows("SELECT key, %s FROM %s WHERE rowid = %d" % (scol, t, n)),
                 basic_sample(n, "key, sample"), what + ": sample %d reads as in the fixture" % n)


C.eq(rows("SELECT json_extract(sample, '$.i_small') FROM %s WHERE rowid = 7" % tvf(BASIC)), [(7,)],
     "basic sample 7 has field i_small = 7 (used by the checks below)")

# not msgpack: the reserved byte 0xc1 first
p = damaged_sample7("badbyte", b"\xc1" + S7[1:])
check_bad_sample(p, "sample 7 starts with 0xc1", 7, (6, 8), ["invalid msgpack byte 0xc1 at byte 0"])
# not msgpack inside: 0xc1 where the key's str header was
p = damaged_sample7("badbyte2", S7[:k7] + b"\xc1" + S7[k7 + 1:])
check_bad_sample(p, "sample 7 has 0xc1 at byte %d" % k7, 7, (6, 8),
                 ["invalid msgpack byte 0xc1 at byte %d" % k7])
# invalid UTF-8 in a str. The decoder may check str contents when the
# sample is parsed (then the message gives the byte) or only when a str is
# converted (then only the fields a query reads are checked): either way
# the whole sample and the damaged field must fail.
TEXT7 = S7.find(b"\xa4text\xa3 #7") + 5  # the str header of field "text"
C.check(TEXT7 > 5, "basic sample 7 has the field text = ' #7'")
UTF8 = ["invalid UTF-8 in", "msgpack str"]
p = damaged_sample7("badutf8", S7[:TEXT7 + 1] + b"\xff" + S7[TEXT7 + 2:])
check_bad_sample(p, "sample 7 has invalid UTF-8 in field text", 7, (6, 8), UTF8, col="text")
# a surrogate encoded in UTF-8 (CESU style) is not valid UTF-8 either
p = damaged_sample7("surrogate", S7[:TEXT7 + 1] + b"\xed\xa0\x80" + S7[TEXT7 + 4:])
check_bad_sample(p, "sample 7 has an encoded surrogate in field text", 7, (6, 8), UTF8,
                 col="text")
# invalid UTF-8 in the sample's own "key" field (not a column: the key
# column is the index key): the whole sample fails, the key column works
p = damaged_sample7("badutf8key", S7[:k7 + 1] + b"\xff" + S7[k7 + 2:])
check_bad_sample(p, "sample 7 has invalid UTF-8 in its key field", 7, (6, 8), UTF8, col=None)
# the last str of the sample (the complex repr "(1.5-2.25j)" of field z)
# claims one byte more than the sample has: it runs past the slice
C.eq(S7[-12:], b"\xab(1.5-2.25j)", "basic sample 7 ends with an 11-byte fixstr")
p = damaged_sample7("strlong", S7[:-12] + b"\xac" + S7[-11:])
check_bad_sample(p, "sample 7 str runs past its slice", 7, (6, 8),
                 ["msgpack object truncated (needs more than %d bytes)" % len(S7)])
# the whole sample replaced by a tiny object + padding: trailing bytes
p = damaged_sample7("trailing", b"\xc0" + b"\x00" * (len(S7) - 1))
check_bad_sample(p, "sample 7 is nil + trailing bytes", 7, (6, 8),
                 ["%d bytes after the msgpack object at byte 1" % (len(S7) - 1)])
# the map header claims more entries than the sample has: truncation
C.eq(S7[:1], b"\xde", "basic sample 7 is a map16")
p = damaged_sample7("mapmore", b"\xde\x00\x40" + S7[3:])
check_bad_sample(p, "sample 7 map header says 64 entries", 7, (6, 8),
                 ["msgpack object truncated (needs more than %d bytes)" % len(S7)])
# damaged sample 0 (infer reads it; CREATE must still succeed) and the last
for g, name in ((0, "bad0"), (BASIC_N - 1, "badlast")):
    p = copy_fixture("basic", name)
    patch(p, BASIC_OFFS[g], b"\xc1")
    check_bad_sample(p, "sample %d starts with 0xc1" % g, g,
                     (1,) if g == 0 else (BASIC_N - 2,), ["invalid msgpack byte 0xc1 at byte 0"])

# --------------------------------------- crafted samples, hostile headers

GOOD = mp({"key": "k0", "v": 1})
SMALL_CASES = [
    # (name, sample bytes, needles)
    ("arr32max", b"\xdd\xff\xff\xff\xff" + b"\xc0", ["truncated"]),
    ("arr32max-empty", b"\xdd\xff\xff\xff\xff", ["truncated"]),
    ("map32max", b"\xdf\xff\xff\xff\xff" + b"\xc0\xc0", ["truncated"]),
    ("arr16", b"\xdc\xff\xff" + b"\xc0" * 100, ["truncated"]),
    ("str32max", b"\xdb\xff\xff\xff\xff" + b"abc", ["truncated"]),
    ("bin32max", b"\xc6\xff\xff\xff\xff" + b"abc", ["truncated"]),
    ("ext32max", b"\xc9\xff\xff\xff\xff\x01" + b"abc", ["truncated"]),
    ("nested-hostile", b"\x92" + b"\xdd\xff\xff\xff\xff" + b"\xdd\xff\xff\xff\xff", ["truncated"]),
    ("map-in-map", b"\x81\xa1a\xdf\x7f\xff\xff\xff" + b"\xc0" * 20, ["truncated"]),
    ("cut-float", b"\xcb\x00\x00", ["truncated"]),
    ("cut-header", b"\xda\x00", ["truncated"]),
    ("empty-sample", b"", ["truncated"]),
    ("c1", b"\x81\xa1a\xc1", ["invalid msgpack byte 0xc1 at byte 3"]),
    ("badutf8-v", b"\x82\xa3key\xa2k1\xa1v\xa2\xc3\x28", UTF8),
    ("badutf8-deep", b"\x82\xa3key\xa2k1\xa1v\x91\x91\xa3ab\x80", UTF8),
    ("overlong", b"\x81\xa1v\xa2\xc0\xaf", UTF8),
    ("badutf8-mapkey", b"\x82\xa2\xc3\x28\x01\xa1v\x02", UTF8 + ["whole"]),
    ("trailing", GOOD + b"\x00", ["1 bytes after the msgpack object at byte %d" % len(GOOD)]),
    ("two-objects", GOOD + GOOD, ["%d bytes after the msgpack object at byte %d"
                                  % (len(GOOD), len(GOOD))]),
    ("deep33", b"\x91" * 33 + b"\xc0", ["nested deeper than 32 levels at byte 32"]),
    ("deep100k", b"\x91" * 100000 + b"\xc0", ["nested deeper than 32 levels at byte 32"]),
    ("deepmap", b"\x81\xa1a" * 40 + b"\xc0", ["nested deeper than 32 levels at byte 96"]),
]


small_paths = []
for name, body, needles in SMALL_CASES:
    whole = "whole" in needles  # the damage is outside column v
    needles = [n for n in needles if n != "whole"]
    keys = ["k0", name, "k2"]
    p = make_dataset(name, [GOOD, body, mp({"key": "k2", "v": 3})], keys)
    small_paths.append(p)
    for form, t, scol in both_forms(p):
        what = "%s (%s)" % (name, form)
        C.eq(rows("SELECT count(*), group_concat(key) FROM %s" % t), [(3, "k0,%s,k2" % name)],
             what + ": count and keys")
        C.eq(rows("SELECT raw FROM %s WHERE rowid = 1" % t), [(body,)], what + ": raw")
        expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 1" % (scol, t)),
                     what + ": sample 1 fails", name + ".msgpack", "sample 1", *needles)
        expect_error(lambda: rows("SELECT %s FROM %s WHERE key = ?" % (scol, t), name),
                     what + ": sample 1 by key fails", "sample 1", *needles)
        C.eq(rows("SELECT %s FROM %s WHERE rowid IN (0, 2) ORDER BY rowid" % (scol, t)),
             [('{"key":"k0","v":1}',), ('{"key":"k2","v":3}',)], what + ": samples 0 and 2 read")
        if form == "create":
            C.eq(rows("SELECT v FROM %s WHERE rowid IN (0, 2) ORDER BY rowid" % t), [(1,), (3,)],
                 what + ": column v of samples 0 and 2")
        if form == "create" and not whole:
            expect_error(lambda: rows("SELECT v FROM %s WHERE rowid = 1" % t),
                         what + ": column v of sample 1 fails", "sample 1", *needles)

# the hostile headers again in a child process: peak memory stays small
proc = subprocess.run([sys.executable, os.path.abspath(__file__), BUILD, "--hostile-child"]
                      + small_paths, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
C.eq(proc.returncode, 0, "hostile samples in a child process: no crash")
try:
    rep = json.loads(proc.stdout.decode())
except ValueError:
    rep = {"results": [], "maxrss_kb": -1}
C.eq(len(rep["results"]), len(SMALL_CASES), "hostile child: every case ran")
C.check(all("error" in r and r["error"].startswith("datadings: ") for r in rep["results"]),
        "hostile child: every case is a datadings error",
        [r for r in rep["results"] if "error" not in r])
C.check(0 < rep["maxrss_kb"] < 400 * 1024, "hostile child: peak memory below 400 MiB",
        "%d KiB" % rep["maxrss_kb"])
C.check(all(r["seconds"] < 5 for r in rep["results"]), "hostile child: each case under 5 s of CPU",
        [(os.path.basename(r["path"]), r["seconds"]) for r in rep["results"]])

# the nesting limit is exact: 32 levels decode, as JSON
p = make_dataset("deep32", [b"\x91" * 32 + b"\xc0", b"\x81\xa1a" * 32 + b"\xc0"])
C.eq(rows("SELECT sample FROM %s ORDER BY rowid" % tvf(p)),
     [("[" * 32 + "null" + "]" * 32,), ('{"a":' * 32 + "null" + "}" * 32,)],
     "32 nested arrays / maps decode")
# wide but shallow: 100000 nils in one array is fine
p = make_dataset("wide", [b"\xdd" + struct.pack(">I", 100000) + b"\xc0" * 100000])
C.eq(rows("SELECT json_array_length(sample) FROM %s" % tvf(p)), [(100000,)],
     "an array of 100000 nils decodes")

# ------------------------------------------ legacy .index damage

LEG = os.path.join(D, "legacy", "legacy.msgpack")
LI = read(LEG + ".index")
C.eq(LI[:3], b"\xde\x00\x1e", "legacy .index: map16 of 30 entries")
p = copy_fixture("legacy", "legoff")
# entry 1 = aa "legacy/001" 54: the offset 0x54 becomes 0xc0 (not an int)
e1 = 3 + 11 + 1
C.eq(LI[e1:e1 + 12], b"\xaalegacy/001\x54", "legacy .index entry 1 layout")
patch(p + ".index", e1 + 11, b"\xc0")
open_error_both(p, "legacy .index offset is nil", "legoff.msgpack.index",
                "entry 1 at byte %d: expected an unsigned msgpack int" % (e1 + 11), "found 0xc0")
p = copy_fixture("legacy", "legkey")
patch(p + ".index", e1, b"\x01")
open_error_both(p, "legacy .index key is an int", "legkey.msgpack.index",
                "key 1 at byte %d: expected a msgpack str, found 0x01" % e1)
p = copy_fixture("legacy", "leghuge")
write(p + ".index", b"\xdf\xff\xff\xff\xff" + LI[3:])
open_error_both(p, "legacy .index claims 2^32-1 entries", "leghuge.msgpack",
                "4294967295 samples, more than this reader supports")
p = copy_fixture("legacy", "leghuge2")
write(p + ".index", b"\xdf\x7f\xff\xff\xff" + LI[3:])
open_error_both(p, "legacy .index claims 2^31-1 entries", "leghuge2.msgpack.index",
                "map header at byte 0 says 2147483647 entries", "more than the %d bytes"
                % (len(LI) - 3))
p = copy_fixture("legacy", "legtrail")
write(p + ".index", LI + b"\xc0")
open_error_both(p, "legacy .index with a trailing byte", "legtrail.msgpack.index",
                "1 unexpected bytes after the last entry at byte %d" % len(LI))
p = copy_fixture("legacy", "legcut")
write(p + ".index", LI[:-1])
open_error_both(p, "legacy .index cut by one byte", "legcut.msgpack.index",
                "2 bytes at offset %d run past the end of the file (%d bytes)"
                % (len(LI) - 2, len(LI) - 1))
# offsets of entries 4 and 5 swapped (same encoding width): samples 3 and 5
# span two samples, sample 4 is inverted, samples 2 and 6 still read
LEGE = expected("legacy")
lo = LEGE["offsets"]
p = copy_fixture("legacy", "legswap")
li = bytearray(LI)
for i, (a, b) in ((4, (lo[4], lo[5])), (5, (lo[5], lo[4]))):
    pos = bytes(li).find(b"\xaa" + ("legacy/%03d" % i).encode()) + 11
    C.eq(bytes(li[pos:pos + 3]), b"\xcd" + struct.pack(">H", a), "legacy entry %d offset" % i)
    li[pos:pos + 3] = b"\xcd" + struct.pack(">H", b)
write(p + ".index", bytes(li))
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(30,)], "legacy swapped offsets: count (%s)" % form)
    expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = 4" % (scol, t)),
                 "legacy swapped offsets: sample 4 inverted (%s)" % form, "legswap.msgpack.index",
                 "sample 4", "[%d, %d)" % (lo[5], lo[4]), "not monotonic")
    for g in (3, 5):
        expect_error(lambda: rows("SELECT %s FROM %s WHERE rowid = %d" % (scol, t, g)),
                     "legacy swapped offsets: sample %d spans two samples (%s)" % (g, form),
                     "legswap.msgpack", "sample %d" % g, "%d bytes after the msgpack object at byte %d"
                     % {3: (lo[5] - lo[4], lo[4] - lo[3]), 5: (lo[6] - lo[5], lo[5] - lo[4])}[g])
    C.eq(rows("SELECT key, %s FROM %s WHERE rowid IN (2, 6) ORDER BY rowid" % (scol, t)),
         rows("SELECT key, sample FROM %s WHERE rowid IN (2, 6) ORDER BY rowid" % tvf(LEG)),
         "legacy swapped offsets: samples 2 and 6 read (%s)" % form)
    C.eq(rows("SELECT rowid FROM %s WHERE key = 'legacy/005'" % t), [(5,)],
         "legacy swapped offsets: lookups still work (%s)" % form)
# converted: .keys and .offsets removed -> keys and offsets from the .index;
# .offsets removed and the .index shortened by one entry -> count mismatch
p = copy_fixture("converted", "convcount", drop=(".offsets",))
last = LI.rfind(b"\xaalegacy/029")
write(p + ".index", b"\xde\x00\x1d" + read(p + ".index")[3:last])
open_error_both(p, "converted: .index with 29 entries, .keys with 30", "convcount.msgpack.index",
                "map has 29 entries, but", "convcount.msgpack.keys has 30 keys")

# ------------------------------------------------------------ key lookups


def check_lookups(path, exp, label, forms=None):
    """Every find_index pair of exp is found (one by one and with IN), every
    absent key gives no row."""
    pairs = exp["find_index"]
    for form, t, scol in forms or both_forms(path):
        bad = []
        for k, i in pairs:
            got = rows("SELECT rowid, key FROM %s WHERE key = ?" % t, k)
            if got != [(i, k)]:
                bad.append((k, i, got))
        C.check(not bad, "%s: all %d keys found at their index (%s)" % (label, len(pairs), form),
                bad[:3])
        want = sorted(i for _, i in pairs)
        got = rows("SELECT rowid FROM %s WHERE key IN (%s) ORDER BY rowid"
                   % (t, ",".join("?" * len(pairs))), *[k for k, _ in pairs])
        C.eq([r[0] for r in got], want, "%s: key IN (all keys) (%s)" % (label, form))
        absent = exp.get("absent_keys", [])
        got = [(k, rows("SELECT rowid FROM %s WHERE key = ?" % t, k)) for k in absent]
        C.check(absent and all(not r for _, r in got),
                "%s: %d absent keys give no row (%s)" % (label, len(absent), form),
                [g for g in got if g[1]])
        k, i = pairs[len(pairs) // 2]
        C.eq(rows("SELECT key, %s FROM %s WHERE key = ?" % (scol, t), k),
             rows("SELECT key, %s FROM %s WHERE rowid = ?" % (scol, t), i),
             "%s: lookup of %r returns sample %d (%s)" % (label, k, i, form))


# a real Bloom false positive: "not-r2" in raw passes the filter
RAW = os.path.join(D, "raw", "raw.msgpack")
C.check(bloom_maybe(read(RAW + ".filter"), "not-r2"), "raw filter: 'not-r2' has all its bits set")
C.check(not bloom_maybe(read(RAW + ".filter"), "r6"), "raw filter: 'r6' is rejected by the filter")
for form, t, scol in both_forms(RAW):
    C.eq(rows("SELECT rowid FROM %s WHERE key = 'not-r2'" % t), [],
         "raw: Bloom false positive 'not-r2' gives no row (%s)" % form)
    C.eq(rows("SELECT rowid FROM %s WHERE key IN ('not-r2', 'r2', 'r6')" % t), [(2,)],
         "raw: key IN with a false positive (%s)" % form)

# every filter bit set: every absent key passes the filter
for src in ("basic", "keys"):
    p = copy_fixture(src, src + "-ones")
    fb = read(p + ".filter")
    write(p + ".filter", fb[:32] + b"\xff" * (len(fb) - 32))
    exp = expected(src)
    C.check(all(bloom_maybe(read(p + ".filter"), k) for k in exp["absent_keys"]),
            "%s with an all-ones filter: every absent key passes the filter" % src)
    check_lookups(p, exp, "%s with an all-ones filter" % src)

# a forged key hash: the .key_hashes record of r3 replaced by H("ghost"),
# every filter bit set: "ghost" matches a stored hash, but its key differs
p = copy_fixture("raw", "forged")
patch(p + ".key_hashes", 8 + 8 * 3, key_hash("ghost"))
fb = read(p + ".filter")
write(p + ".filter", fb[:32] + b"\xff" * (len(fb) - 32))
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT rowid FROM %s WHERE key = 'ghost'" % t), [],
         "forged key hash: 'ghost' gives no row (%s)" % form)
    C.eq(rows("SELECT rowid FROM %s WHERE key IN ('ghost', 'r1', 'r4') ORDER BY rowid" % t),
         [(1,), (4,)], "forged key hash: other keys still found (%s)" % form)
# a salt that does not match the one the hashes were made with: the hashes
# never match, so keys are not found -- but never a wrong row
p = copy_fixture("raw", "badsalt")
patch(p + ".key_hashes", 0, b"\0" * 8)
for form, t, scol in both_forms(p):
    got = rows("SELECT rowid, key FROM %s WHERE key IN ('r0','r1','r2','r3','r4','r5','not-r2')" % t)
    C.check(all(k == "r%d" % i for i, k in got),
            "wrong salt in .key_hashes: no lookup returns a wrong row (%s)" % form, got)

# degraded index files: every key still found, no absent key returned
for src in ("basic", "keys", "salt1"):
    exp = expected(src)
    for drop in ((".filter",), (".key_hashes",), (".filter", ".key_hashes")):
        name = "%s-no%s" % (src, "".join(d.replace(".", "-") for d in drop))
        p = copy_fixture(src, name, drop=drop)
        check_lookups(p, exp, "%s without %s" % (src, " and ".join(drop)))
check_lookups(LEG, expected("legacy"), "legacy (only the .index)")
p = copy_fixture("converted", "conv-indexonly", drop=(".offsets", ".keys", ".key_hashes", ".filter"))
check_lookups(p, expected("converted"), "converted with only the .index")
p = copy_fixture("converted", "conv-nokeys", drop=(".keys", ".key_hashes"))
check_lookups(p, expected("converted"), "converted without .keys (.offsets + .index)")
p = copy_fixture("converted", "conv-nooffsets", drop=(".offsets",))
check_lookups(p, expected("converted"), "converted without .offsets (.keys + .index)")
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT key, %s FROM %s ORDER BY rowid" % (scol, t)),
         rows("SELECT key, sample FROM %s ORDER BY rowid" % tvf(LEG)),
         "converted without .offsets reads like legacy (%s)" % form)
# no .keys and no .index: count and samples work, keys and lookups fail
p = copy_fixture("basic", "nokeys", drop=(".keys",))
for form, t, scol in both_forms(p):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(BASIC_N,)], "no .keys: count (%s)" % form)
    C.eq(rows("SELECT %s FROM %s WHERE rowid = 3" % (scol, t)), basic_sample(3),
         "no .keys: samples read (%s)" % form)
    expect_error(lambda: rows("SELECT key FROM %s WHERE rowid = 3" % t),
                 "no .keys: SELECT key fails (%s)" % form, "nokeys.msgpack",
                 "no .keys or .index file")
    expect_error(lambda: rows("SELECT rowid FROM %s WHERE key = 'basic-0003'" % t),
                 "no .keys: a lookup fails instead of missing (%s)" % form, "nokeys.msgpack",
                 "no .keys or .index file")

# ------------------------------------------------------ datadings_verify


def verify(path):
    return rows("SELECT file, expected_md5, actual_md5, ok FROM datadings_verify(?)", path)


p = copy_fixture("basic", "ver")
good = verify(p)
C.eq([(f, ok) for f, _, _, ok in good],
     [("ver.msgpack" + s, 1) for s in ("", ".offsets", ".keys", ".key_hashes", ".filter")],
     "verify: intact copy, every file ok")
C.check(all(e == a and len(a) == 32 for _, e, a, _ in good), "verify: intact copy, md5s agree", good)
patch(p, 1000, bytes([read(p)[1000] ^ 1]))
got = {f: (e, a, ok) for f, e, a, ok in verify(p)}
e, a, ok = got["ver.msgpack"]
C.check(ok == 0 and a is not None and len(a) == 32 and a != e
        and a == hashlib.md5(read(p)).hexdigest(),
        "verify: one flipped bit in the data file gives ok=0 and its real md5", got["ver.msgpack"])
C.eq(sorted(f for f, (_, _, ok) in got.items() if ok), sorted(["ver.msgpack" + s for s in
     (".offsets", ".keys", ".key_hashes", ".filter")]), "verify: the other files stay ok")
os.unlink(p + ".filter")
got = {f: (e, a, ok) for f, e, a, ok in verify(p)}
C.eq(got.get("ver.msgpack.filter", ("?",))[1:], (None, 0), "verify: a removed .filter gives actual NULL, ok=0")
C.eq(got.get("ver.msgpack.offsets", ("?",))[2], 1, "verify: .offsets still ok after the removal")
p2 = copy_fixture("basic", "ver2")
write(p2 + ".keys", read(p2 + ".keys")[:-1] + b"X")
got = {f: (e, a, ok) for f, e, a, ok in verify(p2)}
C.check(got["ver2.msgpack.keys"][2] == 0 and got["ver2.msgpack.keys"][1] != got["ver2.msgpack.keys"][0],
        "verify: a modified .keys gives ok=0 with a different md5", got["ver2.msgpack.keys"])
C.eq(sum(ok for _, _, ok in got.values()), 4, "verify: exactly one file of five fails")
os.unlink(p2)
got = {f: (e, a, ok) for f, e, a, ok in verify(p2)}
C.eq(got.get("ver2.msgpack", ("?",))[1:], (None, 0), "verify: a removed data file gives actual NULL, ok=0")
p3 = copy_fixture("basic", "ver3")
write(p3 + ".md5", b"not an md5 line\n")
expect_error(lambda: verify(p3), "verify: a malformed .md5 line", "ver3.msgpack.md5", "line 1",
             "expected", prefix="datadings_verify: ")
os.unlink(p3 + ".md5")
expect_error(lambda: verify(p3), "verify: a missing .md5 file", "ver3.msgpack.md5", "cannot open",
             prefix="datadings_verify: ")

conn.close()
TMP.cleanup()
C.exit()
