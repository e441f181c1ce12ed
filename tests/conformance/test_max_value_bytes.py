"""test_max_value_bytes.py - the max_value_bytes option of every module.

A file can claim any size for a record, block, chunk or value. Every module
(bagz, datadings, atlas, bcolz) takes max_value_bytes=N (default 1 GiB) in
both forms: anything a query would allocate for one record, sample, block,
chunk, row or decoded value above N is an SQL error that starts with
"<module>: ", names the file (and the byte offset where the module's other
errors do) and says "max_value_bytes=N" -- never a crash or a huge malloc.

Each format gets small crafted files written here (records / samples /
blocks / chunks of known sizes) and is queried with max_value_bytes=100:
what fits reads exactly as written, what is bigger fails as above, in the
table-valued and the CREATE VIRTUAL TABLE form; the same query without the
option (or with a larger cap) succeeds, so each failure is caused by the
cap. A bad option value is an error naming the option. npy_json stops at
SQLite's length limit.
Usage: test_max_value_bytes.py BUILD_DIR"""
import json
import os
import pickle
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="max-value-")
T = TMP.name
CAP = "max_value_bytes=100"
_n = [0]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def table(module, path, *opts):
    """CREATE VIRTUAL TABLE temp.t<n> USING module(path, opts...)."""
    _n[0] += 1
    name = "t%d" % _n[0]
    args = ", ".join([sql_quote(path)] + list(opts))
    conn.execute("CREATE VIRTUAL TABLE temp.%s USING %s(%s)" % (name, module, args))
    return name


def fails(fn, label, prefix, *needles):
    """fn() raises sqlite3.Error starting with prefix, holding every needle."""
    try:
        got = fn()
    except sqlite3.Error as e:
        msg = str(e)
        C.check(msg.startswith(prefix), label + ": error starts with %r" % prefix, msg)
        missing = [n for n in needles if n not in msg]
        return C.check(not missing, label + ": error says " + ", ".join(map(repr, needles)),
                       "%r lacks %r" % (msg, missing))
    return C.check(False, label + ": fails", "no error, got %r" % (got,))


# --------------------------------------------------------------- options

def check_option_values():
    bag = write(os.path.join(T, "opt", "one.bag"), b"x" + struct.pack("<Q", 1))
    for bad in ("0", "-5", "abc", "4611686018427387905"):
        fails(lambda: rows("SELECT count(*) FROM bagz(?, ?)", bag, "max_value_bytes=" + bad),
              "max_value_bytes=%s" % bad, "bagz: ", bag, "option max_value_bytes='%s' must be "
              "an integer from 1 to 4611686018427387904" % bad)
    C.eq(rows("SELECT length(record) FROM bagz(?, 'max_value_bytes=1')", bag), [(1,)],
         "max_value_bytes=1 reads a 1-byte record")
    fails(lambda: rows("SELECT * FROM bagz(?, 'max_value_bytez=1')", bag),
          "a misspelt option lists max_value_bytes", "bagz: ", "unknown option 'max_value_bytez'",
          "max_value_bytes, endpoint, region, url_style, anonymous, retries, timeout_ms, remote_cache, shard")


# ------------------------------------------------------------------ bagz

def u64(*vals):
    return b"".join(struct.pack("<Q", v) for v in vals)


def tail_bag(stored):
    ends, pos = [], 0
    for s in stored:
        pos += len(s)
        ends.append(pos)
    return b"".join(stored) + u64(*ends)


def zstd(data, *flags):
    src = os.path.join(T, "zstd-src.bin")
    write(src, data)
    out = subprocess.run(["zstd", "-q", "-c", "--no-check"] + list(flags) + [src], check=True,
                         stdout=subprocess.PIPE).stdout
    os.unlink(src)
    return out


def check_bagz():
    small, big = b"s" * 60, bytes(range(200))
    # uncompressed: record 1 is 200 bytes at offset 60
    raw = write(os.path.join(T, "bagz", "raw.bag"), tail_bag([small, big, small]))
    # zstd with content sizes; and a frame that does not declare its size
    # (streamed: the cap is found while decompressing)
    comp = write(os.path.join(T, "bagz", "comp.bagz"),
                 tail_bag([zstd(small), zstd(big), zstd(small)]))
    piped = subprocess.run(["zstd", "-q", "-c", "--no-check"], input=big, check=True,
                           stdout=subprocess.PIPE).stdout
    stream = write(os.path.join(T, "bagz", "stream.bagz"), tail_bag([zstd(small), piped]))
    for label, path, off in (("raw", raw, 60), ("zstd", comp, len(zstd(small))),
                             ("streamed zstd", stream, len(zstd(small)))):
        what = "bagz %s: " % label
        C.eq(rows("SELECT rowid, length(record) FROM bagz(?) ORDER BY rowid", path)[:2],
             [(0, 60), (1, 200)], what + "no cap: every record reads")
        C.eq(rows("SELECT record FROM bagz(?, ?) WHERE rowid = 0", path, CAP), [(small,)],
             what + "the 60-byte record fits max_value_bytes=100")
        C.eq(rows("SELECT count(*), sum(shard) FROM bagz(?, ?)", path, CAP)[0][0],
             3 if label != "streamed zstd" else 2, what + "count(*) reads no record")
        needles = [path, "record 1", "offset %d" % off, "max_value_bytes=100"]
        if label == "raw":
            needles.append("record of 200 bytes")
        elif label == "zstd":
            needles.append("claims 200 bytes")
        fails(lambda: rows("SELECT length(record) FROM bagz(?, ?)", path, CAP),
              what + "table-valued scan", "bagz: ", *needles)
        t = table("bagz", path, CAP)
        fails(lambda: rows("SELECT record FROM %s WHERE rowid = 1" % t),
              what + "CREATE form lookup", "bagz: ", *needles)
        C.eq(rows("SELECT length(record) FROM %s WHERE rowid = 0" % t), [(60,)],
             what + "CREATE form: the small record still reads")
        # record = X builds an index of every record: that read is capped too
        fails(lambda: rows("SELECT rowid FROM bagz(?, ?) WHERE record = ?", path, CAP, small),
              what + "record = lookup (index build)", "bagz: ", *needles)
        C.eq(rows("SELECT rowid FROM bagz(?, 'max_value_bytes=200') WHERE record = ?", path, big),
             [(1,)], what + "max_value_bytes=200 admits the 200-byte record")
    # a long scan goes through the two-thread read-ahead: capped there too
    many = [small] * 700 + [big] + [small] * 10
    ra = write(os.path.join(T, "bagz", "many.bagz"), tail_bag([zstd(r) for r in many]))
    fails(lambda: rows("SELECT sum(length(record)) FROM bagz(?, ?)", ra, CAP + ",threads=2"),
          "bagz read-ahead scan", "bagz: ", ra, "record 700", "max_value_bytes=100")
    C.eq(rows("SELECT sum(length(record)) FROM bagz(?, 'threads=2')", ra),
         [(710 * 60 + 200,)], "bagz read-ahead scan without the cap")


# ------------------------------------------------------------- datadings

def mp(v):
    """A minimal msgpack encoder (str, bin, int, None, list, dict)."""
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if isinstance(v, int):
        assert 0 <= v < 65536
        return bytes([v]) if v < 128 else b"\xcd" + struct.pack(">H", v)
    if isinstance(v, str):
        b = v.encode()
        return (bytes([0xa0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b
    if isinstance(v, bytes):
        if len(v) < 256:
            return b"\xc4" + bytes([len(v)]) + v
        return b"\xc5" + struct.pack(">H", len(v)) + v
    if isinstance(v, list):
        n = len(v)
        return (bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)) + \
            b"".join(mp(x) for x in v)
    if isinstance(v, dict):
        return bytes([0x80 | len(v)]) + b"".join(mp(k) + mp(x) for k, x in v.items())
    raise TypeError(v)


def datadings(name, samples):
    path = os.path.join(T, "dd", name + ".msgpack")
    offs = [0]
    for s in samples:
        offs.append(offs[-1] + len(s))
    write(path, b"".join(samples))
    write(path + ".offsets", b"".join(struct.pack(">Q", o) for o in offs))
    keys = ["k%d" % i for i in range(len(samples))]
    write(path + ".keys", bytes([0x90 | len(keys)]) + b"".join(mp(k) for k in keys))
    return path, offs


def check_datadings():
    cap = "max_value_bytes=200"
    s0 = mp({"key": "k0", "data": b"a" * 40})                 # 51 bytes
    s1 = mp({"key": "k1", "data": bytes(range(250))})          # 265 bytes
    s2 = mp({"key": "k2", "nils": [None] * 60})                # 73 bytes, ~1.5 KB of objects
    s3 = mp({"key": "k3", "arr": {b"nd": True, b"type": b"<u1", b"kind": b"",
                                   b"shape": [1000], b"data": b"\x07" * 1000}})  # .npy of 1128 bytes
    path, offs = datadings("d", [s0, s1, s2, s3])
    C.check(len(s1) > 200 and len(s2) < 100 and len(s3) < 1100, "datadings: sample sizes as planned",
            (len(s1), len(s2), len(s3)))
    C.eq(rows("SELECT key, length(raw) FROM datadings(?) ORDER BY rowid", path),
         [("k0", len(s0)), ("k1", len(s1)), ("k2", len(s2)), ("k3", len(s3))],
         "datadings: no cap: every sample reads")
    C.eq(rows("SELECT sample FROM datadings(?, ?) WHERE key = 'k0'", path, cap),
         [(json.dumps({"key": "k0", "data": "YWFh" * 13 + "YQ=="}, separators=(",", ":")),)],
         "datadings: the 51-byte sample fits max_value_bytes=200")
    fails(lambda: rows("SELECT sample FROM datadings(?, ?) WHERE rowid = 1", path, cap),
          "datadings: a 265-byte sample", "datadings: ", path, "sample 1",
          "sample of %d bytes at offset %d is more than max_value_bytes=200" % (len(s1), offs[1]))
    fails(lambda: rows("SELECT raw FROM datadings(?, ?) WHERE rowid = 1", path, cap),
          "datadings: the raw bytes of a 265-byte sample", "datadings: ", path, "sample 1",
          "sample of %d bytes at offset %d is more than max_value_bytes=200" % (len(s1), offs[1]))
    C.eq(rows("SELECT raw FROM datadings(?, ?) WHERE rowid = 0", path, cap), [(s0,)],
         "datadings: the raw bytes of the 51-byte sample")
    fails(lambda: rows("SELECT sample FROM datadings(?, ?) WHERE rowid = 2", path, cap),
          "datadings: a 73-byte sample of 60 nils (msgpack objects)", "datadings: ", path,
          "sample 2", "msgpack objects of", "more than max_value_bytes=200")
    C.eq(rows("SELECT length(json_extract(sample, '$.nils')) FROM datadings(?, "
              "'max_value_bytes=4096') WHERE rowid = 2", path),
         [(len("[" + ",".join(["null"] * 60) + "]"),)],
         "datadings: max_value_bytes=4096 admits the 60 nils")
    fails(lambda: rows("SELECT sample FROM datadings(?, 'max_value_bytes=1100') WHERE rowid = 3",
                       path),
          "datadings: a 1061-byte sample holding a 1128-byte .npy", "datadings: ", path,
          "sample 3", "value needs more than max_value_bytes=1100 bytes")
    t = table("datadings", path, cap, "infer=1")
    C.eq(rows("SELECT key FROM %s WHERE rowid = 0" % t), [("k0",)],
         "datadings CREATE form: the small sample reads")
    fails(lambda: rows("SELECT data FROM %s" % t), "datadings CREATE form scan", "datadings: ",
          path, "sample 1", "max_value_bytes=200")
    t2 = table("datadings", path, "max_value_bytes=4096", "columns='arr BLOB'")
    C.eq(rows("SELECT npy_size(arr), npy_sum(arr) FROM %s WHERE rowid = 3" % t2), [(1000, 7000)],
         "datadings CREATE form: max_value_bytes=4096 admits the .npy")


# ----------------------------------------------------------------- atlas

def zstd_raw_frame(data):
    """One zstd frame holding `data` in raw blocks, with its content size."""
    out = b"\x28\xb5\x2f\xfd" + bytes([0xa0]) + struct.pack("<I", len(data))
    return out + struct.pack("<I", len(data) << 3 | 1)[:3] + data


def npy_index(values):
    """index.npy by hand (numpy is not needed for it), with the smallest
    unsigned dtype as the upstream writer picks it."""
    descr, fmt = ("|u1", "B") if values[-1] <= 255 else ("<u2", "<H")
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(values))
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() +
            b"".join(struct.pack(fmt, v) for v in values))


def atlas_shard(name, blocks, block_size, strategy, frame=lambda b: b):
    d = os.path.join(T, "atlas", name)
    stored = [frame(b) for b in blocks]
    offs = [0]
    for b in stored:
        offs.append(offs[-1] + len(b))
    n = sum(len(pickle.loads(b)) for b in blocks)
    meta = {"version": 1, "block_size": block_size, "stored_examples": n,
            "compression_strategy": strategy, "compression_level": 3 if strategy else 0,
            "compression_dict_size": 0.0}
    write(os.path.join(d, "meta.json"), json.dumps(meta).encode())
    write(os.path.join(d, "index.npy"), npy_index(offs))
    write(os.path.join(d, "data.bin"), b"".join(stored))
    return d, offs


def check_atlas():
    cap = "max_value_bytes=2000"
    b0 = pickle.dumps([{"v": 1}, {"v": 2}], protocol=4)                 # small
    b1 = pickle.dumps([{"v": "x" * 3000}, {"v": 4}], protocol=4)        # > 2000 bytes
    for label, strategy, frame in (("raw", 0, lambda b: b), ("zstd", 1, zstd_raw_frame)):
        d, offs = atlas_shard(label, [b0, b1], 2, strategy, frame)
        what = "atlas %s: " % label
        C.eq(rows("SELECT example ->> '$.v' FROM atlas(?) ORDER BY rowid", d),
             [(1,), (2,), ("x" * 3000,), (4,)], what + "no cap: every example reads")
        C.eq(rows("SELECT example ->> '$.v' FROM atlas(?, ?) WHERE rowid < 2", d, cap),
             [(1,), (2,)], what + "block 0 fits max_value_bytes=2000")
        needles = [os.path.join(d, "data.bin"), "block 1", "offset %d" % offs[1],
                   "max_value_bytes=2000"]
        needles.append("block of %d bytes" % len(b1) if strategy == 0
                       else "claims %d bytes" % len(b1))
        fails(lambda: rows("SELECT example FROM atlas(?, ?)", d, cap), what + "scan",
              "atlas: ", *needles)
        t = table("atlas", d, cap, "infer=1")
        fails(lambda: rows("SELECT v FROM %s WHERE rowid = 3" % t), what + "CREATE form",
              "atlas: ", *needles)
        C.eq(rows("SELECT v FROM %s WHERE rowid = 1" % t), [(2,)],
             what + "CREATE form: block 0 reads")
        # a cap this small does not even hold block 0's decoded values
        fails(lambda: rows("SELECT example FROM atlas(?, ?) WHERE rowid = 0", d, CAP),
              what + "decoding past the cap", "atlas: ", d, "block 0",
              "pickle needs more than 100 bytes of memory (max_value_bytes)")
    # a small block whose pickle expands past the cap through shared
    # references: the decoder's memory is capped too
    fat = pickle.dumps([["y" * 30] * 2000], protocol=4)
    d, _ = atlas_shard("fat", [fat], 1, 0)
    C.check(len(fat) < 5000, "atlas: the expanding block is small", len(fat))
    fails(lambda: rows("SELECT example FROM atlas(?, 'max_value_bytes=20000')", d),
          "atlas: a block that expands", "atlas: ", d, "block 0", "max_value_bytes")
    C.eq(rows("SELECT json_array_length(example) FROM atlas(?)", d), [(2000,)],
         "atlas: the expanding block reads without the cap")


# ----------------------------------------------------------------- bcolz

def blp(data, typesize=1):
    """A chunk file: blpk header + an uncompressed (memcpyed) Blosc buffer."""
    n = len(data)
    blosc = struct.pack("<BBBBIII", 2, 1, 0x02, typesize, n, n, n + 16) + data
    return b"blpk\x01\x00\x00\x00" + struct.pack("<q", 1) + blosc


def carray(name, dtype, chunks, chunklen, nrows, atom=1):
    d = os.path.join(T, "bcolz", name)
    write(os.path.join(d, "meta", "sizes"),
          json.dumps({"shape": [nrows], "nbytes": nrows * atom, "cbytes": 0}).encode())
    write(os.path.join(d, "meta", "storage"), json.dumps(
        {"dtype": dtype, "cparams": {"clevel": 0, "shuffle": 0, "cname": "blosclz", "quantize": 0},
         "chunklen": chunklen, "expectedlen": nrows, "dflt": 0}).encode())
    write(os.path.join(d, "__attrs__"), b"{}")
    for k, c in enumerate(chunks):
        write(os.path.join(d, "data", "__%d.blp" % k), c)
    return d


def check_bcolz():
    # 64 rows of int8 per chunk: chunks of 64 bytes fit the cap
    ok = carray("small", "int8", [blp(bytes(range(64))), blp(bytes(range(64, 128)))], 64, 128)
    C.eq(rows("SELECT sum(row) FROM bcolz(?, ?)", ok, CAP), [(sum(range(128)),)],
         "bcolz: 64-byte chunks fit max_value_bytes=100")
    # 256-byte chunks do not
    big = carray("big", "int8", [blp(bytes(256))], 256, 256)
    chunk = os.path.join(big, "data", "__0.blp")
    fails(lambda: rows("SELECT sum(row) FROM bcolz(?, ?)", big, CAP), "bcolz: a 256-byte chunk",
          "bcolz: ", chunk, "chunk of 256 bytes is more than max_value_bytes=100")
    C.eq(rows("SELECT sum(row), count(*) FROM bcolz(?)", big), [(0, 256)],
         "bcolz: the 256-byte chunk reads without the cap")
    t = table("bcolz", big, CAP)
    fails(lambda: rows("SELECT value FROM %s" % t), "bcolz CREATE form scan", "bcolz: ", chunk,
          "max_value_bytes=100")
    # a few rows by rowid go through the cache of whole decompressed
    # chunks (capped too); with cache_mb=0 they read one Blosc block each
    fails(lambda: rows("SELECT value FROM %s WHERE rowid IN (3, 200)" % t),
          "bcolz: a lookup through the chunk cache", "bcolz: ", chunk,
          "chunk of 256 bytes is more than max_value_bytes=100")
    C.eq(rows("SELECT row FROM bcolz(?, ?) WHERE rowid IN (3, 200)", big, CAP + ",cache_mb=0"),
         [("0",), ("0",)], "bcolz: single rows of a big chunk read without the cache")
    # a row wider than the cap (S200 cells)
    wide = carray("wide", "|S200", [blp(b"w" * 400, 1)], 2, 2, atom=200)
    fails(lambda: rows("SELECT row FROM bcolz(?, ?) WHERE rowid = 1", wide, CAP + ",cache_mb=0"),
          "bcolz: a 200-byte row", "bcolz: ", wide, "row of 200 bytes is more than max_value_bytes=100")
    # rows that do not line up with Blosc items (int32 rows, typesize 8)
    # are read by inflating the whole chunk: that allocation is capped too
    odd = carray("odd", "int32", [blp(struct.pack("<64i", *range(64)), 8)], 64, 64, atom=4)
    C.eq(rows("SELECT row FROM bcolz(?) WHERE rowid = 5", odd), [("5",)],
         "bcolz: a row of a misaligned chunk reads without the cap")
    fails(lambda: rows("SELECT row FROM bcolz(?, ?) WHERE rowid = 5", odd, CAP + ",cache_mb=0"),
          "bcolz: a row of a misaligned 256-byte chunk", "bcolz: ",
          os.path.join(odd, "data", "__0.blp"), "chunk of 256 bytes is more than max_value_bytes=100")
    # object column: one pickle per chunk; a small pickle that expands
    objs = [pickle.dumps(["z" * 20] * 2, protocol=2), pickle.dumps([["z" * 30] * 100], protocol=2)]
    oc = carray("obj", "object", [blp(p) for p in objs], 1, 2)
    C.check(all(len(p) < 1000 for p in objs), "bcolz object pickles are small", [len(p) for p in objs])
    C.eq(rows("SELECT row FROM bcolz(?, 'max_value_bytes=1000') WHERE rowid = 0", oc),
         [(json.dumps(["z" * 20] * 2, separators=(",", ":")),)], "bcolz: a small object fits")
    fails(lambda: rows("SELECT row FROM bcolz(?, 'max_value_bytes=1000') WHERE rowid = 1", oc),
          "bcolz: an object pickle that expands", "bcolz: ", oc, "row 1",
          "pickle needs more than 1000 bytes of memory (max_value_bytes)")
    C.eq(rows("SELECT json_array_length(row, '$[0]') FROM bcolz(?) WHERE rowid = 1", oc),
         [(100,)], "bcolz: the expanding object reads without the cap")


# ------------------------------------------------------------------- npy

def check_npy_json():
    """npy_json stops at SQLite's length limit instead of building JSON
    text SQLite would refuse (JSON can be ~4x the array's bytes)."""
    c2 = connect(BUILD)
    blob = npy_index(list(range(256)) * 2)  # 512 x <u2 -> "[0,1,...]" ~1.9 KB
    c2.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1500)
    C.check(len(blob) < 1500, "npy: the blob fits the length limit", len(blob))
    try:
        c2.execute("SELECT npy_json(?)", (blob,)).fetchone()
        C.check(False, "npy_json past the length limit fails")
    except sqlite3.Error as e:
        C.eq(str(e), "npy_json: JSON text longer than 1500 bytes (SQLite's length limit)",
             "npy_json past the length limit fails naming it")
    c2.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100000)
    C.eq(c2.execute("SELECT npy_json(?)", (blob,)).fetchone()[0],
         json.dumps(list(range(256)) * 2, separators=(",", ":")), "npy_json within the limit")
    c2.close()


def main():
    for fn in (check_option_values, check_npy_json, check_bagz, check_datadings, check_atlas,
               check_bcolz):
        C.run(fn)
    conn.close()
    shutil.rmtree(T, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
