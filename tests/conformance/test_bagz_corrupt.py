"""test_bagz_corrupt.py - corrupt and misused bagz inputs fail cleanly.

Every file here is crafted in a temporary folder (zstd frames come from the
`zstd` command-line tool or are cut out of the upstream fixture mid.bagz by
its tail limits). Each case must give an sqlite3.Error whose message starts
with "bagz: ", names the file and says what is wrong (with the byte offset
or record number where the reader reports one), in the table-valued form
and, where it makes sense, the CREATE VIRTUAL TABLE form. Also: records
next to a broken one still read correctly, a scan over a bad frame fails
(never a partial or empty result, unlike upstream's bulk reads) with one
and two threads while count(*) still works, and the table is DIRECTONLY.
Usage: test_bagz_corrupt.py BUILD_DIR"""
import os
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
TMP = tempfile.TemporaryDirectory(prefix="bagz-corrupt-")
T = TMP.name
_n = [0]


# ---------------------------------------------------------------- helpers

def u64(*vals):
    return b"".join(struct.pack("<Q", v) for v in vals)


def tail_bag(stored):
    """A tail-limits bag of the given stored records (bytes as stored)."""
    ends, pos = [], 0
    for s in stored:
        pos += len(s)
        ends.append(pos)
    return b"".join(stored) + u64(*ends)


def write(name, data):
    p = os.path.join(T, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def zstd_frame(data):
    """One zstd frame with the content size in its header (as bagz writes)."""
    src = os.path.join(T, "frame-src.bin")
    with open(src, "wb") as f:
        f.write(data)
    out = subprocess.run(["zstd", "-q", "-c", "--no-check", src], check=True,
                         stdout=subprocess.PIPE).stdout
    os.unlink(src)
    return out


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def tvf(path, opts=""):
    return "bagz(%s%s)" % (sql_quote(path), ", " + sql_quote(opts) if opts else "")


def create(path, opts=""):
    """CREATE VIRTUAL TABLE over path; returns the table name."""
    _n[0] += 1
    name = "temp.c%d" % _n[0]
    args = [sql_quote(path)]
    for o in opts.split(","):
        if "=" in o:  # quote values: a path is not one SQL token
            k, v = o.split("=", 1)
            args.append("%s=%s" % (k, sql_quote(v)))
        elif o:
            args.append(o)
    conn.execute("CREATE VIRTUAL TABLE %s USING bagz(%s)" % (name, ", ".join(args)))
    return name


def error_of(fn):
    """The sqlite3.Error text fn() raises, or None (and the result) if none."""
    try:
        return None, fn()
    except sqlite3.Error as e:
        return str(e), None


def expect_error(fn, label, *needles):
    """fn() must raise sqlite3.Error starting with 'bagz: ' and containing
    every needle (the file's basename is passed as one of them)."""
    msg, got = error_of(fn)
    if msg is None:
        return C.check(False, label, "no error, got %r" % (got,))
    ok = msg.startswith("bagz: ")
    missing = [n for n in needles if n not in msg]
    return C.check(ok and not missing, label,
                   "error %r: %s" % (msg, "lacks %r" % missing if missing else "no 'bagz: ' prefix"))


def open_error_both(path, label, *needles, opts=""):
    """An open-time error: in the table-valued form when queried, in the
    CREATE form at CREATE time. Both must say the same things."""
    expect_error(lambda: rows("SELECT count(*) FROM %s" % tvf(path, opts)),
                 label + " (tvf)", *needles)
    expect_error(lambda: create(path, opts), label + " (create)", *needles)


def both_forms(path, opts=""):
    """[(form, table expression)] for a file that opens."""
    return [("tvf", tvf(path, opts)), ("create", create(path, opts))]


# ------------------------------------------------- open-time (tail) checks

# limits past the end of the file: 3 bytes of records, last limit says 100
p = write("pastend.bag", b"abc" + u64(100))
open_error_both(p, "tail limit past end of file", "pastend.bag",
                "limits end at byte 100", "11 bytes")

# a valid zstd .bagz cut in the middle: whatever the last 8 bytes now say,
# the reader must refuse it at open, as the boundary rule dictates
with open(os.path.join(FIXTURES, "bagz", "zstd.bagz"), "rb") as f:
    ZSTD_BAGZ = f.read()
for cut in (len(ZSTD_BAGZ) // 2, len(ZSTD_BAGZ) - 5, 9):
    data = ZSTD_BAGZ[:cut]
    p = write("trunc%d.bagz" % cut, data)
    b = struct.unpack("<Q", data[-8:])[0]
    if b > len(data) - 8:
        want = "limits end at byte %d but the file has %d bytes" % (b, len(data))
    else:
        C.check((len(data) - b) % 8 != 0, "truncated at %d: cut gives a bad boundary" % cut,
                "cut at %d happens to look valid" % cut)
        want = "limits section from byte %d to %d is not a multiple of 8" % (b, len(data))
    open_error_both(p, "zstd.bagz truncated to %d bytes" % cut, "trunc%d.bagz" % cut, want)

# a file of 1..7 bytes
for n in range(1, 8):
    p = write("tiny%d.bag" % n, b"\x01" * n)
    open_error_both(p, "%d-byte file" % n, "tiny%d.bag" % n, "file has %d bytes, too few" % n)

# size minus last limit not a multiple of 8: 5 record bytes, 3 stray, limit 5
p = write("align.bag", b"abcde" + b"xyz" + u64(5))
open_error_both(p, "limits section not a multiple of 8", "align.bag",
                "limits section from byte 5 to 16 is not a multiple of 8")
# the same bytes but a zstd name and compression=zstd: still an open error
p = write("align.bagz", b"abcde" + b"xyz" + u64(5))
open_error_both(p, "limits section not a multiple of 8 (.bagz)", "align.bagz",
                "not a multiple of 8")

# ------------------------------------------------------ separate limits

os.makedirs(os.path.join(T, "sep"))
p = write("sep/odd.bag", b"abcdef")
write("sep/limits.odd.bag", u64(3) + b"\x06\x00\x00")
open_error_both(p, "separate limits file of 11 bytes", "limits.odd.bag",
                "size 11 is not a multiple of 8", opts="limits=separate")

p = write("sep/far.bag", b"abcdef")
write("sep/limits.far.bag", u64(3, 50, 6))
for form, t in both_forms(p, "limits=separate"):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(3,)],
         "separate limits past records: count still works (%s)" % form)
    C.eq(rows("SELECT record FROM %s WHERE rowid = 0" % t), [(b"abc",)],
         "separate limits past records: record 0 reads (%s)" % form)
    expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 1" % t),
                 "separate limits past records: record 1 fails (%s)" % form,
                 "far.bag", "record 1", "limit at offset 8 says byte 50",
                 "past the end of the records section (6 bytes)")
    # record 2 starts at 50 (> its end 6): its range is inverted
    expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 2" % t),
                 "separate limits past records: record 2 fails (%s)" % form,
                 "far.bag", "record 2", "not monotonic")
    expect_error(lambda: rows("SELECT count(*), sum(length(record)) FROM %s" % t),
                 "separate limits past records: scan fails (%s)" % form,
                 "far.bag", "record 1")
# a missing limits file
p = write("sep/nolimits.bag", b"abc")
open_error_both(p, "separate limits file missing", "limits.nolimits.bag", "cannot open",
                opts="limits=separate")

# ----------------------------------------------- non-monotonic tail limits

# records section "AAAABBBBCCDD" (12 bytes); limits 4, 8, 6, 12:
# record 2 would be [8, 6) (inverted); record 3 is [6, 12) = "BBCCDD"
# (overlaps, but sane), so it still reads, like upstream's single reads.
p = write("nonmono.bag", b"AAAABBBBCCDD" + u64(4, 8, 6, 12))
for form, t in both_forms(p):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(4,)], "non-monotonic: count (%s)" % form)
    got = [rows("SELECT record FROM %s WHERE rowid = %d" % (t, i)) for i in (0, 1, 3)]
    C.eq(got, [[(b"AAAA",)], [(b"BBBB",)], [(b"BBCCDD",)]],
         "non-monotonic: neighbours 0, 1, 3 read the right bytes (%s)" % form)
    expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 2" % t),
                 "non-monotonic: record 2 fails (%s)" % form, "nonmono.bag", "record 2",
                 "not monotonic", "start at byte 8 and end at byte 6",
                 "limit at offset 28")
    for threads in ("1", "2"):
        t2 = tvf(p, "threads=" + threads)
        expect_error(lambda: rows("SELECT count(*), sum(length(record)) FROM %s" % t2),
                     "non-monotonic: scan fails, threads=%s (%s)" % (threads, form),
                     "nonmono.bag", "record 2")
    C.eq(rows("SELECT rowid, shard, shard_index FROM %s WHERE rowid >= 2" % t),
         [(2, 0, 2), (3, 0, 3)], "non-monotonic: columns without record still work (%s)" % form)

# ------------------------------------------------------ broken zstd frames

GOOD0, GOOD2 = b"first record " * 5, b"third record " * 7
F0, F2 = zstd_frame(GOOD0), zstd_frame(GOOD2)
MID = zstd_frame(b"the middle record, which gets damaged " * 4)
C.check(MID[:4] == b"\x28\xb5\x2f\xfd" and len(MID) > 20, "zstd CLI gives a frame",
        repr(MID[:8]))
# a frame with an absurd content size (2^40) and no data at all
huge_hdr = b"\x28\xb5\x2f\xfd" + b"\xe0" + u64(1 << 40)
# the same header closed by an empty raw last block: a complete frame
huge_full = huge_hdr + b"\x01\x00\x00"
# a complete frame claiming 512 MiB (below the 1 GiB cap) but holding none
big_full = b"\x28\xb5\x2f\xfd" + b"\xe0" + u64(1 << 29) + b"\x01\x00\x00"

bad_frames = [
    ("truncated frame", MID[:-7], ["record 1", "truncated or corrupt zstd frame"]),
    ("frame cut to 3 bytes", MID[:3], ["record 1", "truncated zstd frame (3 bytes)"]),
    ("garbage instead of a frame", b"this is not zstd at all, just text" * 2,
     ["record 1", "not a zstd frame"]),
    ("frame + trailing garbage", MID + b"GARBAGE!!", ["record 1", "9 bytes follow the zstd frame"]),
    ("two frames (second one is trailing data)", MID + F0,
     ["record 1", "%d bytes follow the zstd frame" % len(F0)]),
    ("absurd content size, no data", huge_hdr, ["record 1", "zstd"]),
    ("absurd content size, complete frame", huge_full,
     ["record 1", "claims 1099511627776 bytes, more than max_value_bytes=1000000000"]),
    ("512 MiB content size, empty frame", big_full, ["record 1", "zstd"]),
]
for i, (label, frame, needles) in enumerate(bad_frames):
    fname = "badframe%d.bagz" % i
    stored = [F0, frame, F2]
    p = write(fname, tail_bag(stored))
    offset = len(F0)  # where record 1's stored bytes start
    for form, t in both_forms(p):
        C.eq(rows("SELECT count(*) FROM %s" % t), [(3,)], "%s: count (%s)" % (label, form))
        C.eq(rows("SELECT record FROM %s WHERE rowid IN (0, 2) ORDER BY rowid" % t),
             [(GOOD0,), (GOOD2,)], "%s: neighbours decode (%s)" % (label, form))
        expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 1" % t),
                     "%s: record 1 fails (%s)" % (label, form), fname, *needles)
        expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 1" % t),
                     "%s: message gives the stored size and offset (%s)" % (label, form),
                     "%d stored bytes at offset %d" % (len(frame), offset))
        # the stored bytes themselves are still readable without decompression
        C.eq(rows("SELECT record FROM %s WHERE rowid = 1" % tvf(p, "compression=none")),
             [(frame,)], "%s: compression=none returns the stored bytes (%s)" % (label, form))
    # compression forced on a .bag name fails the same way
    p2 = write("badframe%d.bag" % i, tail_bag(stored))
    expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = 1" % tvf(p2, "compression=zstd")),
                 "%s: compression=zstd on a .bag name" % label, "badframe%d.bag" % i, "record 1")

# ----------------- a scan over a bag with one bad frame in the middle

# 1000 real frames cut out of mid.bagz (records str(i), every i % 7 == 3 empty)
with open(os.path.join(FIXTURES, "bagz", "mid.bagz"), "rb") as f:
    mid = f.read()
B = struct.unpack("<Q", mid[-8:])[0]
N = 1000
lim = struct.unpack("<%dQ" % N, mid[B:B + 8 * N])
frames = [mid[(lim[i - 1] if i else 0):lim[i]] for i in range(N)]
want_len = sum(0 if i % 7 == 3 else len(str(i)) for i in range(N))
good = write("scan-good.bagz", tail_bag(frames))
for form, t in both_forms(good):
    for threads in ("1", "2"):
        t2 = t if form == "create" else tvf(good, "threads=" + threads)
        if form == "create" and threads == "1":
            t2 = create(good, "threads=1")
        C.eq(rows("SELECT count(*), sum(length(record)) FROM %s" % t2), [(N, want_len)],
             "1000 frames from mid.bagz: control scan, threads=%s (%s)" % (threads, form))
BAD = 700
C.check(len(frames[BAD]) > 0, "mid.bagz frame 700 is not empty")
damaged = list(frames)
damaged[BAD] = b"\xde\xad\xbe\xef" * (len(frames[BAD]) // 4) + b"!" * (len(frames[BAD]) % 4)
C.eq(len(damaged[BAD]), len(frames[BAD]), "damaged frame keeps its size (limits unchanged)")
bad = write("scan-bad.bagz", tail_bag(damaged))
for form in ("tvf", "create"):
    for threads in ("1", "2"):
        t = tvf(bad, "threads=" + threads) if form == "tvf" else create(bad, "threads=" + threads)
        expect_error(lambda: rows("SELECT count(*), sum(length(record)) FROM %s" % t),
                     "bad frame 700 of 1000: count+sum scan fails, threads=%s (%s)" % (threads, form),
                     "scan-bad.bagz", "record 700")
        expect_error(lambda: rows("SELECT record FROM %s ORDER BY rowid" % t),
                     "bad frame 700 of 1000: full fetch fails, threads=%s (%s)" % (threads, form),
                     "scan-bad.bagz", "record 700", "not a zstd frame")
        expect_error(lambda: rows("SELECT sum(length(record)) FROM %s WHERE rowid >= 100" % t),
                     "bad frame 700 of 1000: range scan over it fails, threads=%s (%s)"
                     % (threads, form), "scan-bad.bagz", "record 700")
        C.eq(rows("SELECT count(*) FROM %s" % t), [(N,)],
             "bad frame 700 of 1000: count(*) never decompresses, threads=%s (%s)" % (threads, form))
        C.eq(rows("SELECT count(*), sum(length(record)) FROM %s WHERE rowid < %d" % (t, BAD)),
             [(BAD, sum(0 if i % 7 == 3 else len(str(i)) for i in range(BAD)))],
             "bad frame 700 of 1000: rows before it scan, threads=%s (%s)" % (threads, form))
        C.eq(rows("SELECT record FROM %s WHERE rowid = %d" % (t, BAD + 1)),
             [(str(BAD + 1).encode(),)],
             "bad frame 700 of 1000: row 701 reads, threads=%s (%s)" % (threads, form))

# -------------------------------------------------------- shard specs

os.makedirs(os.path.join(T, "sh"))
one = tail_bag([F0])
write("sh/x-00000-of-00003.bagz", one)
write("sh/x-00002-of-00003.bagz", one)
open_error_both(os.path.join(T, "sh", "x@3.bagz"), "x@3.bagz with shard 1 missing",
                "x-00001-of-00003.bagz", "cannot open", "No such file")
open_error_both(os.path.join(T, "sh", "none@*.bagz"), "none@*.bagz with no shard on disk",
                "none@*.bagz", "no shard files found")
write("sh/y-00000-of-00002.bagz", one)
write("sh/y-00001-of-00002.bagz", b"\x00" * 5)
open_error_both(os.path.join(T, "sh", "y@*.bagz"), "y@*.bagz with a 5-byte shard",
                "y-00001-of-00002.bagz", "file has 5 bytes")
open_error_both(os.path.join(T, "sh", "missing.bagz"), "missing file",
                "missing.bagz", "cannot open", "No such file")
# a shard count of 100000 or more is no shard spec (upstream: a plain name),
# also when it does not fit 32 bits (4294967297 must not wrap around to 1)
write("sh/w-00000-of-00001.bagz", one)
C.eq(rows("SELECT count(*) FROM %s" % tvf(os.path.join(T, "sh", "w@1.bagz"))), [(1,)],
     "w@1.bagz opens (control)")
for big in ("100000", "4294967297"):
    open_error_both(os.path.join(T, "sh", "w@%s.bagz" % big), "w@%s.bagz is a plain name" % big,
                    "w@%s.bagz" % big, "cannot open")

# ---------------------------------------------------- options and paths

ok = write("ok.bagz", tail_bag([F0, F2]))
C.eq(rows("SELECT count(*) FROM %s" % tvf(ok)), [(2,)], "ok.bagz opens (control)")
open_error_both(ok, "unknown option", "ok.bagz", "unknown option 'bogus'", opts="bogus=1")
open_error_both(ok, "layout=diagonal", "ok.bagz", "layout='diagonal'",
                "concatenated|interleaved", opts="layout=diagonal")
open_error_both(ok, "compression=lz4", "ok.bagz", "compression='lz4'", opts="compression=lz4")
open_error_both(ok, "threads=0", "ok.bagz", "threads='0'", opts="threads=0")
open_error_both(ok, "option without '='", "ok.bagz", "not of the form name=value",
                opts="interleaved")
# a file system we have no backend for (gs:// and s3:// have one now)
open_error_both("hdfs://bucket/data/ok.bagz", "hdfs: prefix", "hdfs://bucket/data/ok.bagz",
                "unsupported file system prefix 'hdfs:'")
C.eq(rows("SELECT count(*) FROM %s" % tvf("posix:" + ok)), [(2,)], "posix: prefix is accepted")
open_error_both(os.path.join(T, "sh"), "a directory as path", "sh", "not a regular file")
open_error_both(os.path.join(T, "sh") + "/", "a directory with a trailing slash", "sh",
                "not a regular file")
expect_error(lambda: rows("SELECT count(*) FROM bagz(NULL)"), "bagz(NULL)", "no path given")
# a FIFO (no writer) as path: refused, not a hang in open(). Run in a child
# process with a timeout so that a hang is a FAIL line, not a stuck suite.
fifo = os.path.join(T, "pipe.bagz")
os.mkfifo(fifo)
code = ("import sqlite3, sys\n"
        "sys.path.insert(0, %r)\n"
        "from dstest import connect\n"
        "c = connect(%r)\n"
        "try:\n"
        "    c.execute(\"SELECT count(*) FROM bagz(%s)\").fetchall(); print('NO ERROR')\n"
        "except sqlite3.Error as e:\n"
        "    print(e)\n" % (os.path.dirname(os.path.abspath(__file__)),
                            os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build"),
                            sql_quote(fifo)))
try:
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120).stdout.decode()  # a hang guard only
    C.check(out.startswith("bagz: ") and "pipe.bagz" in out and "not a regular file" in out,
            "a FIFO as path: refused", out.strip())
except subprocess.TimeoutExpired:
    C.check(False, "a FIFO as path: refused", "the query hung (open() of a FIFO blocks)")
open_error_both(ok, "missing dictionary file", "nodict.bin", "cannot open",
                opts="dictionary=" + os.path.join(T, "nodict.bin"))

# ------------------------------------ a bag cut at its end (issue 11 item 10)
# mid.bagz (upstream) loses its last bytes: the last limit (where the
# records end) is gone, so nothing says where any record lies. The error
# says the tail was cut, where the limits that are left start and end, and
# the least size a whole bag has (computed here from the intact file).
with open(os.path.join(FIXTURES, "bagz", "mid.bagz"), "rb") as f:
    MID_BAG = f.read()
REC_END = struct.unpack("<Q", MID_BAG[-8:])[0]          # where the limits start
MID_LIMITS = struct.unpack("<%dQ" % ((len(MID_BAG) - REC_END) // 8), MID_BAG[REC_END:])
for cut in (1, 5, 8, 9, 100, 5000, len(MID_BAG) - REC_END - 8):
    data = MID_BAG[:-cut]
    p = write("cut%d.bagz" % cut, data)
    left = (len(data) - REC_END) // 8                   # whole limits left
    assert left >= 1 and MID_LIMITS[left - 1] < REC_END
    open_error_both(p, "mid.bagz cut by %d bytes: says the limits tail was cut" % cut,
                    "cut%d.bagz" % cut, "limits tail cut",
                    "the file has %d bytes, a whole bag would have at least %d"
                    % (len(data), REC_END + 8 * (left + 1)),
                    "the %d limits left (bytes %d to %d) end at byte %d, short of byte %d"
                    % (left, REC_END, REC_END + 8 * left, MID_LIMITS[left - 1], REC_END))
# cut inside the records: no limit is left, nothing looks like a bag
p = write("cutrec.bagz", MID_BAG[:REC_END - 14])
open_error_both(p, "mid.bagz cut inside its records", "cutrec.bagz",
                "not a bagz file (no valid limits tail)")

# separate limits (upstream separate.bagz + limits.separate.bagz): the data
# file cut short keeps its limits, so count(*) holds, every record whose
# bytes are all there reads as in the intact file, and the first one past
# the cut fails naming the data file, the record and the offsets.
os.makedirs(os.path.join(T, "sepcut"))
with open(os.path.join(FIXTURES, "bagz", "separate.bagz"), "rb") as f:
    SEP_DATA = f.read()
with open(os.path.join(FIXTURES, "bagz", "limits.separate.bagz"), "rb") as f:
    SEP_LIMITS = f.read()
SEP_ENDS = struct.unpack("<%dQ" % (len(SEP_LIMITS) // 8), SEP_LIMITS)
SEP_INTACT = os.path.join(FIXTURES, "bagz", "separate.bagz")
cut_at = (SEP_ENDS[-4] + SEP_ENDS[-5]) // 2 + 1           # inside record n-4
p = write("sepcut/separate.bagz", SEP_DATA[:cut_at])
write("sepcut/limits.separate.bagz", SEP_LIMITS)
whole = [i for i, e in enumerate(SEP_ENDS) if e <= cut_at]
first_bad = len(whole)
assert 0 < first_bad < len(SEP_ENDS) - 1
want = rows("SELECT rowid, record FROM %s ORDER BY rowid" % tvf(SEP_INTACT, "limits=separate"))
for form, t in both_forms(p, "limits=separate"):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(len(SEP_ENDS),)],
         "separate.bagz data cut: count(*) from the limits (%s)" % form)
    C.eq(rows("SELECT rowid, record FROM %s WHERE rowid < %d" % (t, first_bad)),
         want[:first_bad], "separate.bagz data cut: records 0-%d read as intact (%s)"
         % (first_bad - 1, form))
    for g in (first_bad, len(SEP_ENDS) - 1):
        expect_error(lambda: rows("SELECT record FROM %s WHERE rowid = %d" % (t, g)),
                     "separate.bagz data cut: record %d fails (%s)" % (g, form),
                     "separate.bagz: record %d" % g,
                     "says byte %d, past the end of the records section (%d bytes)"
                     % (SEP_ENDS[g], cut_at), "limits.separate.bagz",
                     "the data file is shorter than its limits say")
# a scan returns every intact record, then fails (through the sqlite3 shell,
# which prints each row as it comes: Python's cursor steps one row ahead)
BUILD_DIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
env = dict(os.environ)
if env.get("DS_PRELOAD"):
    env["LD_PRELOAD"] = env["DS_PRELOAD"]
for form, setup, table in (
        ("tvf", "", "bagz(%s, 'limits=separate')" % sql_quote(p)),
        ("create", "CREATE VIRTUAL TABLE temp.s USING bagz(%s, limits=separate);" % sql_quote(p),
         "temp.s")):
    for threads in (1, 2):
        tab = table.replace("'limits=separate'", "'limits=separate,threads=%d'" % threads) \
            if form == "tvf" else table
        sql = setup.replace("limits=separate)", "limits=separate, threads=%d)" % threads) + \
            "SELECT rowid, length(record) FROM %s;" % tab
        r = subprocess.run(["sqlite3", "-batch", ":memory:", ".load %s/datasets" % BUILD_DIR, sql],
                           capture_output=True, text=True, env=env)
        C.check([ln.split("|")[0] for ln in r.stdout.split()] == [str(i) for i in range(first_bad)] and
                "separate.bagz: record %d:" % first_bad in r.stderr,
                "separate.bagz data cut: a scan returns records 0-%d, then fails on %d "
                "(%s, threads=%d)" % (first_bad - 1, first_bad, form, threads),
                "stdout %r, stderr %r" % (r.stdout[-80:], r.stderr[:300]))

# the limits file cut by whole limits: nothing says how many records there
# were, so the bag is refused (never a silently shorter table), naming the
# limits file, where its limits end and the data file's size
for drop in (1, 3, len(SEP_ENDS)):
    d = "sepcutlim%d" % drop
    os.makedirs(os.path.join(T, d))
    p = write(d + "/separate.bagz", SEP_DATA)
    write(d + "/limits.separate.bagz", SEP_LIMITS[:-8 * drop])
    kept = len(SEP_ENDS) - drop
    open_error_both(p, "limits.separate.bagz without its last %d limits: refused" % drop,
                    d + "/limits.separate.bagz",
                    "its %d limits end at byte %d but" % (kept, SEP_ENDS[kept - 1] if kept else 0),
                    "separate.bagz has %d bytes: the limits file is cut short" % len(SEP_DATA),
                    opts="limits=separate")

# ------------------------------------------------------------ DIRECTONLY

C.eq(rows("SELECT count(*) FROM %s" % tvf(ok)), [(2,)], "direct use works (control)")
conn.execute("CREATE VIEW main.v_bagz AS SELECT * FROM %s" % tvf(ok))
C.raises(lambda: rows("SELECT * FROM main.v_bagz"), "view over bagz() in main: unsafe use",
         "unsafe use of virtual table")
conn.execute("CREATE VIRTUAL TABLE main.vt_ok USING bagz(%s)" % sql_quote(ok))
C.eq(rows("SELECT count(*) FROM main.vt_ok"), [(2,)], "main CREATE VIRTUAL TABLE direct use works")
conn.execute("CREATE VIEW main.v_vt AS SELECT * FROM main.vt_ok")
C.raises(lambda: rows("SELECT * FROM main.v_vt"), "view over a bagz table in main: unsafe use",
         "unsafe use of virtual table")
conn.execute("CREATE TABLE main.log(n)")
conn.execute("CREATE TABLE main.src(a)")
conn.execute("CREATE TRIGGER main.tr AFTER INSERT ON src BEGIN "
             "INSERT INTO log SELECT count(*) FROM %s; END" % tvf(ok))
C.raises(lambda: conn.execute("INSERT INTO main.src VALUES (1)"),
         "trigger using bagz() in main: unsafe use", "unsafe use of virtual table")
C.eq(rows("SELECT count(*) FROM main.log"), [(0,)], "the refused trigger wrote nothing")
conn.execute("CREATE TRIGGER main.tr2 AFTER INSERT ON log BEGIN "
             "SELECT count(*) FROM main.vt_ok; END")
C.raises(lambda: conn.execute("INSERT INTO main.log VALUES (1)"),
         "trigger using a bagz table in main: unsafe use", "unsafe use of virtual table")

conn.close()
TMP.cleanup()
C.exit()
