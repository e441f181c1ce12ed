"""test_damaged_files.py - files that are damaged or lie (issue 11): what is
damaged fails naming the file and the offset, what is intact reads, absurd
claims are refused at open, and nothing grows without bound. Datasets are
written here, at test time, in a temp dir.
Usage: test_damaged_files.py BUILD"""
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import msgpack
import numpy as np
import zstandard

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, ROOT, Checker, connect, sql_quote, write_tail_bag  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
C = Checker()
conn = connect(BUILD)
tmp = tempfile.mkdtemp(prefix="ds-damaged-files-")
_n = [0]


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error text is what is checked
        return str(e)
    return None


def expect_error(fn, name, *needles):
    msg = error_of(fn)
    if msg is None:
        return C.check(False, name, "no error")
    missing = [n for n in needles if n not in msg]
    return C.check(not missing, name, "error %r lacks %r" % (msg, missing))


def create(module, path, *opts):
    _n[0] += 1
    name = "temp.t%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING %s(%s)"
                 % (name, module, ", ".join([sql_quote(path)] + list(opts))))
    return name


def write_datadings(path, samples, keys=None, md5=False):
    """X.msgpack, .offsets and .keys as datadings writes them."""
    offs, blob = [0], bytearray()
    for s in samples:
        blob += msgpack.packb(s, use_bin_type=True)
        offs.append(len(blob))
    with open(path, "wb") as f:
        f.write(blob)
    with open(path + ".offsets", "wb") as f:
        f.write(b"".join(struct.pack(">Q", o) for o in offs))
    keys = keys if keys is not None else [s["key"] for s in samples]
    with open(path + ".keys", "wb") as f:
        f.write(msgpack.packb(keys, use_bin_type=True))
    if md5:
        with open(path + ".md5", "w") as f:
            f.write("%s  %s\n" % (hashlib.md5(bytes(blob)).hexdigest(), os.path.basename(path)))
    return offs


# --- item 3: column naming is linear and capped ----------------------------
def case_names(n):
    """n distinct names that differ only in letter case: xaaa.., xAaa.., ..."""
    width = max(1, (n - 1).bit_length())
    return ["x" + "".join("A" if i >> b & 1 else "a" for b in range(width)) for i in range(n)]


p = os.path.join(tmp, "wide.msgpack")
names = case_names(1900)
write_datadings(p, [dict({"key": "k0"}, **{k: i for i, k in enumerate(names)})])
t = create("datadings", p)
cols = [r[1] for r in rows("PRAGMA temp.table_xinfo(%s)" % t.split(".")[1])]
C.eq(len(cols), 1 + 1900 + 4, "1900 fields differing in case: key, 1900 columns, sample, raw, shard, shard_index")
C.eq(len({c.lower() for c in cols}), len(cols), "1900 fields differing in case: names unique "
     "ignoring case")
C.eq(cols[1:4], [names[0], names[1] + "_2", names[2] + "_3"],
     "1900 fields differing in case: first seen keeps its name, the next get _2, _3")
C.eq(rows("SELECT \"%s\", \"%s\" FROM %s" % (cols[1], cols[1900], t)), [(0, 1899)],
     "1900 fields differing in case: each column reads its own field")
p = os.path.join(tmp, "wider.msgpack")
write_datadings(p, [dict({"key": "k0"}, **{k: 1 for k in case_names(3000)})])
expect_error(lambda: create("datadings", p), "3000 fields: refused at once, naming the limit",
             "more than 1990 distinct fields", "columns=")
C.eq(rows("SELECT count(*) FROM datadings(%s)" % sql_quote(p)), [(1,)],
     "3000 fields: the table-valued form still reads the sample")

p = os.path.join(tmp, "many.msgpack")
write_datadings(p, [dict({"key": "k%d" % j}, **{"f%04d" % i: i for i in range(1000)})
                    for j in range(100)])
conn.set_progress_handler(lambda: 1, 10)
expect_error(lambda: create("datadings", p), "inferring 100 samples of 1000 fields stops at "
             "a progress handler that asks", "interrupted")
conn.set_progress_handler(None, 10)
t = create("datadings", p)
C.eq(len(rows("PRAGMA temp.table_xinfo(%s)" % t.split(".")[1])), 1 + 1000 + 4,
     "inferring 100 samples of 1000 fields: 1000 columns without the handler")

# --- item 9: duplicate keys in a damaged index ------------------------------
p = os.path.join(tmp, "dup.msgpack")
write_datadings(p, [{"key": "a", "v": 1}, {"key": "b", "v": 2}, {"key": "a", "v": 3},
                    {"key": "a", "v": 4}], keys=["a", "b", "a", "a"])
for form, t in (("tvf", "datadings(%s)" % sql_quote(p)), ("create", create("datadings", p))):
    expect_error(lambda: rows("SELECT rowid FROM %s WHERE key = 'a'" % t),
                 "duplicate keys: key = 'a' refused, naming the key (%s)" % form,
                 "dup.msgpack.keys", "duplicate key 'a'", "samples 0 and 2")
    C.eq(rows("SELECT rowid FROM %s WHERE key || '' = 'a'" % t), [(0,), (2,), (3,)],
         "duplicate keys: a scan still sees every row (%s)" % form)

# --- item 10: a data file cut in sample 998 of 1000 -------------------------
p = os.path.join(tmp, "cut.msgpack")
samples = [{"key": "s%04d" % i, "v": i, "pad": "x" * (i % 50)} for i in range(1000)]
offs = write_datadings(p, samples, md5=True)
intact = os.path.join(tmp, "intact.msgpack")
write_datadings(intact, samples)
with open(p, "r+b") as f:
    f.truncate(offs[998] + (offs[999] - offs[998]) // 2)
for form, t in (("tvf", "datadings(%s)" % sql_quote(p)), ("create", create("datadings", p))):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(1000,)], "cut in sample 998: count(*) (%s)" % form)
    C.eq(rows("SELECT rowid, key, sample FROM %s WHERE rowid < 998" % t),
         rows("SELECT rowid, key, sample FROM datadings(%s) WHERE rowid < 998" % sql_quote(intact)),
         "cut in sample 998: samples 0-997 read as written (%s)" % form)
    for g in (998, 999):
        expect_error(lambda: rows("SELECT sample FROM %s WHERE rowid = %d" % (t, g)),
                     "cut in sample 998: sample %d fails naming file and offset (%s)" % (g, form),
                     "cut.msgpack", "sample %d" % g, "offset at byte %d" % (8 * (g + 1)),
                     "the data file is cut short")
    C.eq(rows("SELECT key FROM %s WHERE key = 's0999'" % t), [("s0999",)],
         "cut in sample 998: keys still read (%s)" % form)
C.eq(rows("SELECT file, ok FROM datadings_verify(%s)" % sql_quote(p)), [("cut.msgpack", 0)],
     "cut in sample 998: datadings_verify reports the file")

# --- item 6: max_value_bytes holds for the JSON we return ------------------
p = os.path.join(tmp, "big.msgpack")
write_datadings(p, [{"key": "b0", "blob": b"\x01" * 3000000}])
for form, t in (("tvf", "datadings(%s, 'max_value_bytes=3000100')" % sql_quote(p)),
                ("create", create("datadings", p, "max_value_bytes=3000100"))):
    C.eq(rows("SELECT length(raw) FROM %s" % t),
         [(len(msgpack.packb({"key": "b0", "blob": b"\x01" * 3000000}, use_bin_type=True)),)],
         "3 MB sample under max_value_bytes=3000100: raw reads (%s)" % form)
    expect_error(lambda: rows("SELECT sample FROM %s" % t),
                 "3 MB of bytes as 4 MB of JSON: over max_value_bytes=3000100 (%s)" % form,
                 "JSON text of more than", "max_value_bytes=3000100", "big.msgpack", "sample 0")
C.check(rows("SELECT length(sample) FROM datadings(%s)" % sql_quote(p))[0][0] > 4000000,
        "3 MB sample with the default max_value_bytes: JSON of 4 MB")

# --- item 12: errors say what is really wrong ------------------------------
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
loop = os.path.join(tmp, "loop")
os.symlink(loop + "2", loop)
os.symlink(loop, loop + "2")
for path, what in (("/dev/zero", "a character device"), (fifo, "a FIFO"),
                   (loop, "a loop of symbolic links"), (tmp + "/" + "a" * 5000, "the path is too long"),
                   (os.path.join(tmp, "nope"), "no such file or directory")):
    expect_error(lambda: rows("SELECT * FROM dataset_info(?)", path),
                 "dataset_info on %s: says %s" % (path[:40], what), what)
p = os.path.join(tmp, "bcolz-loop")
shutil.copytree(os.path.join(FIXTURES, "bcolz", "carray_int32"), p)
os.unlink(os.path.join(p, "data", "__0.blp"))
os.symlink(os.path.join(p, "data", "__0.blp"), os.path.join(p, "data", "__0.blp"))
expect_error(lambda: rows("SELECT * FROM bcolz(?) WHERE rowid = 0", p),
             "bcolz: a chunk that is a symlink loop says so", "__0.blp", "a loop of symbolic links")
p = os.path.join(tmp, "bcolz-obj")
shutil.copytree(os.path.join(FIXTURES, "bcolz", "carray_object"), p)
import blosc  # noqa: E402
with open(os.path.join(p, "data", "__0.blp"), "wb") as f:
    f.write(b"blpk\x01\0\0\0" + struct.pack("<Q", 1)
            + blosc.compress(b"\x80\x04cposix\nsystem\n.", typesize=1))
t = create("bcolz", p)
expect_error(lambda: rows("SELECT * FROM %s WHERE rowid = 0" % t),
             "bcolz create: an object cell's error names the column, the row and the global",
             p + ": row 0", "posix.system")

# --- item 4: absurd claims are refused at open ------------------------------
p = os.path.join(tmp, "atlas-lie")
shutil.copytree(os.path.join(FIXTURES, "atlas", "single_shard"), p)
shard = os.path.join(p, "0") if os.path.isdir(os.path.join(p, "0")) else p
meta = json.load(open(os.path.join(shard, "meta.json")))
idx = np.load(os.path.join(shard, "index.npy"))
meta["block_size"] = meta["stored_examples"] = 10 ** 15
json.dump(meta, open(os.path.join(shard, "meta.json"), "w"))
np.save(os.path.join(shard, "index.npy"), np.array([0, int(idx[-1])], dtype=idx.dtype))
if os.path.exists(os.path.join(p, "meta.json")) and shard != p:
    root = json.load(open(os.path.join(p, "meta.json")))
    root["shard_sizes"] = [10 ** 15]
    json.dump(root, open(os.path.join(p, "meta.json"), "w"))
expect_error(lambda: rows("SELECT count(*) FROM atlas(%s)" % sql_quote(p)),
             "atlas: 10^15 examples in one small block refused at open", "meta.json",
             "block_size 1000000000000000", "cannot be right")
expect_error(lambda: create("atlas", p), "atlas create: 10^15 examples refused at open",
             "cannot be right")
p = os.path.join(tmp, "bcolz-lie")
shutil.copytree(os.path.join(FIXTURES, "bcolz", "carray_int32"), p)
sizes = json.load(open(os.path.join(p, "meta", "sizes")))
sizes["shape"] = [2 ** 60]
json.dump(sizes, open(os.path.join(p, "meta", "sizes"), "w"))
expect_error(lambda: rows("SELECT count(*) FROM bcolz(%s)" % sql_quote(p)),
             "bcolz: meta/sizes claiming 2^60 rows refused at open", "meta/sizes",
             "%d rows" % 2 ** 60, "the sizes cannot be right")
p = os.path.join(tmp, "bcolz-lost-chunk")
shutil.copytree(os.path.join(FIXTURES, "bcolz", "carray_uint64"), p)
lost = max((f for f in os.listdir(os.path.join(p, "data")) if f.endswith(".blp")),
           key=lambda f: int(f[2:-4]))  # the last chunk: the check at open looks for it
os.unlink(os.path.join(p, "data", lost))
n_all = rows("SELECT count(*) FROM bcolz(%s)" % sql_quote(os.path.join(FIXTURES, "bcolz",
                                                                      "carray_uint64")))[0][0]
C.eq(rows("SELECT count(*) FROM bcolz(%s)" % sql_quote(p)), [(n_all,)],
     "bcolz: one chunk file lost is damage, not a lie: the table opens")
expect_error(lambda: rows("SELECT * FROM bcolz(%s)" % sql_quote(p)),
             "bcolz: one chunk file lost: its rows fail naming it", lost)

# --- item 14: long IN lists -------------------------------------------------
ids = list(range(0, 200000, 2))
bag = os.path.join(FIXTURES, "bagz", "mid.bagz")
n_bag = rows("SELECT count(*) FROM bagz(%s)" % sql_quote(bag))[0][0]
conn.execute("CREATE TEMP TABLE wanted(id INTEGER)")
conn.executemany("INSERT INTO wanted VALUES (?)", [(i,) for i in ids])
C.eq(rows("SELECT count(*) FROM bagz(%s) WHERE rowid IN (SELECT id FROM wanted)" % sql_quote(bag)),
     [(len([i for i in ids if i < n_bag]),)], "rowid IN a list of 100,000 values")

# --- item 5: the bagz read-ahead is bounded in bytes ------------------------
CHILD = r"""
import os, resource, sqlite3, sys
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(os.path.join(sys.argv[1], "datasets"))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n = conn.execute("SELECT sum(length(record)) FROM bagz(?, ?)", (sys.argv[2], sys.argv[3])).fetchone()[0]
print(n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""
p = os.path.join(tmp, "huge.bagz")
frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"\0" * (48 << 20))
recs = [frame] * 6 + [b""] * 600  # 600 empty records: the scan takes the read-ahead
write_tail_bag(p, recs)
peak = {}
for threads in (1, 2):
    out = subprocess.run([sys.executable, "-c", CHILD, BUILD, p,
                          "threads=%d,max_value_bytes=60000000" % threads],
                         capture_output=True, text=True, timeout=300)
    got = out.stdout.split()
    ok = out.returncode == 0 and len(got) == 2 and int(got[0]) == 6 * (48 << 20)
    C.check(ok, "6 frames of 48 MiB without content size read (threads=%d)" % threads,
            out.stdout + out.stderr[-300:])
    peak[threads] = int(got[1]) if ok else 0
# (peak RSS means nothing under AddressSanitizer, which reserves its own)
SANITIZED = "asan" in os.environ.get("LD_PRELOAD", "")
if not SANITIZED:
    C.check(peak[1] and peak[2] <= peak[1] + 2 * 48 * 1024 + 16 * 1024,
            "threads=2 holds at most about one more record than threads=1",
            "peak RSS growth threads=1 %d KiB, threads=2 %d KiB" % (peak[1], peak[2]))

shutil.rmtree(tmp)
C.exit()
