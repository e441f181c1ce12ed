"""test_memory_bounds.py - memory held to max_value_bytes (issue 20 item 12).

Each case runs in a child process that measures its own peak resident
memory (ru_maxrss) around one query, or runs under an address-space limit
(RLIMIT_AS), on inputs generated here in a temporary folder:

1. bagz: 4 zstd frames of 64 MiB of zeros that declare no content size,
   then 600 empty records (so a scan takes the read-ahead): with
   threads=2 the scan may hold at most the read-ahead's stated limit
   (16 MiB records, a few MiB of ring) more than with threads=1, and
   threads=1 at most two records (the one SQLite holds and the next) and
   some slack; the sum of the lengths is exact. A cap below a record's
   size is an error naming the file, the record and max_value_bytes.
2. datadings: one sample of 10 million nils (10 MB on disk): its msgpack
   objects, decoded values and JSON text share max_value_bytes=300000000:
   the query either succeeds with the right JSON or fails naming the file,
   the sample and max_value_bytes, and the peak stays near the cap; with
   the default cap it reads back.
3. bcolz writer columns='a U1000000000' and one row 'x' under a 1 GiB
   address-space limit: an error at CREATE naming the column and
   max_value_bytes (a 4 GB chunk could not be read back), nothing large
   allocated; the same for cells of 1.04 GB (under 1 GiB, past SQLite's
   default length limit, which readers hold max_value_bytes to) and for
   cells past a max_value_bytes given; a TEXT value whose cell would pass
   max_value_bytes fails at INSERT.
Peak memory means nothing under AddressSanitizer (its own reservations):
with DS_SANITIZE=1 or libasan preloaded the peak checks are skipped, the
results and messages still checked.
Usage: test_memory_bounds.py BUILD_DIR"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, write_tail_bag  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_memory_bounds_")
SANITIZED = os.environ.get("DS_SANITIZE") == "1" or "asan" in os.environ.get("LD_PRELOAD", "")
MiB = 1 << 20
env = dict(os.environ)
if env.get("DS_PRELOAD"):
    env["LD_PRELOAD"] = env["DS_PRELOAD"]

# The child: load the extension, run the statements of a script (";\n"
# between them; the parameters go to those with a '?'), print "OK <the last
# one's rows>" or "ERR <message>", then the peak RSS growth in KiB.
CHILD = r"""
import os, resource, sqlite3, sys
build, aslimit, script, params = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(os.path.join(build, "datasets"))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if aslimit:
    resource.setrlimit(resource.RLIMIT_AS, (aslimit, aslimit))
try:
    stmts = [s for s in script.split(";\n") if s.strip()]
    for s in stmts:  # the parameters go to the statements with a '?'
        r = conn.execute(s, params if "?" in s else ()).fetchall()
    out = "OK " + repr(r)
except (sqlite3.Error, MemoryError) as e:
    out = "ERR " + str(e)
print(out)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def child(script, *params, aslimit=0):
    """(status line, peak growth in bytes) of CHILD running script."""
    r = subprocess.run([sys.executable, "-c", CHILD, BUILD, str(aslimit), script] +
                       [str(p) for p in params], capture_output=True, text=True, env=env,
                       timeout=600)  # a hang guard only
    lines = r.stdout.strip().split("\n")
    if r.returncode != 0 or len(lines) != 2:
        return "CRASH status %d: %s %s" % (r.returncode, r.stdout[-300:], r.stderr[-300:]), 0
    return lines[0], int(lines[1]) * 1024


# 1. bagz: frames without a content size, through the read-ahead

REC = 64 * MiB
bag = os.path.join(TMP, "huge.bagz")
frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"\0" * REC)
recs = [frame] * 4 + [b""] * 600
write_tail_bag(bag, recs)
peak = {}
for threads in (1, 2):
    st, peak[threads] = child("SELECT sum(length(record)) FROM bagz(?, ?)", bag,
                              "threads=%d,max_value_bytes=%d" % (threads, REC + MiB))
    C.eq(st, "OK [(%d,)]" % (4 * REC), "bagz threads=%d: 4 frames of 64 MiB of no declared "
         "size read" % threads)
if not SANITIZED:
    C.check(peak[2] <= peak[1] + 24 * MiB,
            "bagz: threads=2 holds at most the read-ahead's 16 MiB record and ring more "
            "than threads=1", "peak growth threads=1 %d MiB, threads=2 %d MiB"
            % (peak[1] // MiB, peak[2] // MiB))
    C.check(peak[1] <= 2 * REC + 48 * MiB,
            "bagz threads=1: at most two records (SQLite's and the next) and slack",
            "peak growth %d MiB" % (peak[1] // MiB))
for threads in (1, 2):
    st, grow = child("SELECT sum(length(record)) FROM bagz(?, ?)", bag,
                     "threads=%d,max_value_bytes=%d" % (threads, 32 * MiB))
    C.check(st.startswith("ERR bagz: ") and "huge.bagz" in st and "record 0" in st and
            "max_value_bytes=%d" % (32 * MiB) in st,
            "bagz threads=%d: a record past max_value_bytes is an error naming the file "
            "and record" % threads, st)
    if not SANITIZED:
        C.check(grow <= 32 * MiB + 40 * MiB,
                "bagz threads=%d: refusing it takes no more than the cap" % threads,
                "peak growth %d MiB" % (grow // MiB))

# 2. datadings: a sample of 10 million nils, through its JSON
NILS = 10 * 1000 * 1000
dd = os.path.join(TMP, "nils.msgpack")
raw = (b"\x82\xa3key\xa1k\xa1v\xdd" + struct.pack(">I", NILS) + b"\xc0" * NILS)
want_len = len('{"key":"k","v":[]}') + len("null,") * NILS - 1
conn = connect(BUILD)
conn.execute("CREATE VIRTUAL TABLE temp.w USING datadings('%s', mode=create)" % dd)
conn.execute("INSERT INTO w(key, raw) VALUES ('k', ?)", (raw,))
conn.commit()
conn.close()
CAP = 300 * 1000 * 1000
q = "SELECT length(sample), substr(sample, 1, 30) FROM datadings(?, ?)"
st, grow = child(q, dd, "max_value_bytes=%d" % CAP)
ok_result = st.startswith("OK ") and str(want_len) in st
refused = (st.startswith("ERR datadings: ") and "nils.msgpack" in st and "sample 0" in st and
           "max_value_bytes=%d" % CAP in st)
C.check(ok_result or refused,
        "datadings: a sample of 10M nils as JSON under max_value_bytes=%d reads or is "
        "refused naming the file and sample" % CAP, st)
if not SANITIZED:
    C.check(grow <= CAP + CAP // 4 + len(raw),
            "datadings: its msgpack objects, values and JSON together stay near the cap",
            "peak growth %d MB for a cap of %d MB" % (grow // 1000000, CAP // 1000000))
st, _ = child(q, dd, "")
C.check(st.startswith("OK ") and str(want_len) in st and "null,null" in st,
        "datadings: the same sample reads with the default cap", st[:300])

# 3. bcolz: a cell type of 4 GB per cell
for cols, opts, cell in (("a U1000000000", "", 4000000000),
                         ("a U260000000", "", 1040000000),  # past SQLite's 1e9 length limit
                         ("a U100000000", ", max_value_bytes=300000000", 400000000)):
    out = os.path.join(TMP, "u.bcolz")
    shutil.rmtree(out, ignore_errors=True)
    script = ("CREATE VIRTUAL TABLE temp.w USING bcolz('%s', mode=create, columns='%s'%s);\n"
              "INSERT INTO w VALUES ('x');\nSELECT 1" % (out, cols, opts))
    st, grow = child(script, aslimit=0 if SANITIZED else 1 << 30)
    C.check(st.startswith("ERR bcolz: ") and "column 'a'" in st and "max_value_bytes" in st and
            str(cell) in st, "bcolz columns='%s'%s: refused at CREATE naming the column and "
            "max_value_bytes" % (cols, opts), st)
    C.check(not os.path.exists(out), "bcolz columns='%s': nothing published" % cols, out)
# a TEXT column takes the longest value's width: one past the cap is an INSERT error
out = os.path.join(TMP, "t.bcolz")
script = ("CREATE VIRTUAL TABLE temp.w USING bcolz('%s', mode=create, columns='a TEXT', "
          "max_value_bytes=4000);\nINSERT INTO w VALUES (?);\nSELECT 1" % out)
st, _ = child(script, "y" * 1001)
C.check(st.startswith("ERR bcolz: ") and "row 0" in st and "column 'a'" in st and
        "max_value_bytes=4000" in st,
        "bcolz TEXT: a value whose cell passes max_value_bytes is refused at INSERT", st)
st, _ = child(script, "y" * 1000)
C.eq(st, "OK [(1,)]", "bcolz TEXT: a value whose cell is exactly max_value_bytes is written")

shutil.rmtree(TMP)
C.exit()
