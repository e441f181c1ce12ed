"""check_written.py - read datasets our writers made with Python's own
libraries, the way upstream's readers do, and compare them with the values
the C tests wrote (the same formulas, computed here again). Prints one
"OK <what>" or "BAD <what>: ..." line per check.
  atlas DIR N   torch-atlas-ds layout: shard folders in name order,
                meta.json, np.load(index.npy), zstandard with the shared or
                the shard's dictionary, pickle.loads of each block; the
                examples must be {"i": i, "s": "text i"} for i < N
  bcolz DIR N   bcolz ctable: __rootdirs__, each column's meta/storage
                (np.dtype of its "dtype"), meta/sizes, chunk files through
                python3-blosc; the columns must hold test_bcolz_write.c's
                python_table() values for N rows
Usage: check_written.py atlas|bcolz DIR N"""
import json
import os
import pickle
import sys

import numpy as np


def report(ok, what, detail=""):
    print(("OK " + what) if ok else "BAD %s: %s" % (what, str(detail)[:400]))
    return ok


def atlas(root, n):
    meta = json.load(open(os.path.join(root, "meta.json")))
    shards = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    import zstandard
    shared = os.path.join(root, "zstd_dict.bin")
    got = []
    ok = report(meta["version"] == 1 and len(meta["shard_sizes"]) == len(shards), "atlas root meta")
    width = len(shards[-1])
    ok &= report(all(len(s) == width for s in shards), "atlas shard names of one width", shards)
    for s in shards:
        d = os.path.join(root, s)
        m = json.load(open(os.path.join(d, "meta.json")))
        index = np.load(os.path.join(d, "index.npy"))
        data = open(os.path.join(d, "data.bin"), "rb").read() if os.path.exists(os.path.join(d, "data.bin")) else b""
        ok &= report(int(index[-1]) == len(data) and index.dtype.kind == "u", "atlas %s index" % s)
        strategy = m["compression_strategy"]
        dctx = None
        if strategy == 1:
            dctx = zstandard.ZstdDecompressor()
        elif strategy in (2, 3):
            path = shared if strategy == 2 else os.path.join(d, "zstd_dict.bin")
            dctx = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(open(path, "rb").read()))
        for b in range(len(index) - 1):
            blk = data[int(index[b]):int(index[b + 1])]
            if dctx is not None:
                blk = dctx.decompress(blk)
            got += pickle.loads(blk)
        ok &= report(m["stored_examples"] == meta["shard_sizes"][shards.index(s)],
                     "atlas %s stored_examples" % s)
    want = [{"i": i, "s": "text %d" % i} for i in range(n)]
    ok &= report(got == want, "atlas examples read by pickle.loads", "%d examples" % len(got))
    return ok


def python_table(n):
    """The columns test_bcolz_write.c writes, as numpy arrays."""
    i = np.arange(n)
    return {
        "id": i.astype("<i8"),
        "half": ((i % 100) * 0.25).astype("<f2"),
        "score": (i * 0.5).astype("<f4"),
        "name": np.array(["n%d\u00e9" % k for k in range(n)], dtype="U"),
        "code": np.array([b"c%d" % (k % 100) for k in range(n)], dtype="S3"),
        "when": (i * 1000).astype("<M8[ms]"),
        "vec": np.stack([i, -i], axis=1).astype("<i2"),
        "flag": (i % 2).astype("?"),
        "big": i.astype(">i4"),
    }


def bcolz(root, n):
    import blosc
    want = python_table(n)
    names = json.load(open(os.path.join(root, "__rootdirs__")))["names"]
    ok = report(names == list(want), "bcolz __rootdirs__", names)
    for name in names:
        d = os.path.join(root, name)
        st = json.load(open(os.path.join(d, "meta", "storage")))
        sz = json.load(open(os.path.join(d, "meta", "sizes")))
        dt = np.dtype(st["dtype"])
        cl = st["chunklen"]
        shape = sz["shape"]
        nch = shape[0] // cl + (1 if shape[0] % cl else 0)
        parts = []
        for k in range(nch):
            raw = open(os.path.join(d, "data", "__%d.blp" % k), "rb").read()
            ok &= raw[:4] == b"blpk" and raw[8] == 1
            parts.append(blosc.decompress(raw[16:]))
        col = np.frombuffer(b"".join(parts), dtype=dt)  # (concatenate would go native-endian)
        col = col.reshape([-1] + shape[1:])
        w = want[name]
        good = shape[0] == n and col.dtype == w.dtype and col.shape == w.shape and \
            col.tobytes() == w.tobytes()
        ok &= report(good, "bcolz column %s (%s) through python-blosc" % (name, st["dtype"]),
                     "got %r %s %s want %r %s %s" % (col[:3], col.dtype.str, col.shape, w[:3], w.dtype.str, w.shape))
    return ok


def main():
    kind, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ok = atlas(path, n) if kind == "atlas" else bcolz(path, n)
    sys.exit(0 if ok else 1)


main()
