#!/usr/bin/python3
"""bench_wa1_py.py - W-A1's CPython yardstick: pickle.dumps of A1's blocks.

    /usr/bin/python3 bench/bench_wa1_py.py SRC RUNS

Reads the atlas dataset SRC (A1: shared dictionary zstd_dict.bin, shard
folders 0..N-1 with index.npy and data.bin), decompresses and unpickles
every block once (untimed), then times pickle.dumps(block, protocol=4)
over every block, RUNS times. Prints "ms=<min> blocks=<n> bytes=<pickles>",
the figure our encoder (bench_wac wa1-bare, enc=) is compared with. Needs
python3-numpy and python3-zstandard (A1's bench-only dependencies)."""
import gc
import json
import os
import pickle
import sys
import time

import numpy as np
import zstandard


def load_blocks(src):
    """Every block of SRC as the Python list it pickles."""
    with open(os.path.join(src, "zstd_dict.bin"), "rb") as f:
        d = zstandard.ZstdCompressionDict(f.read())
    dctx = zstandard.ZstdDecompressor(dict_data=d)
    with open(os.path.join(src, "meta.json"), encoding="utf-8") as f:
        nshards = len(json.load(f)["shard_sizes"])
    width = len(str(nshards - 1))
    blocks = []
    for k in range(nshards):
        name = os.path.join(src, str(k).zfill(width))
        if not os.path.isdir(name):
            name = os.path.join(src, str(k))
        offs = np.load(os.path.join(name, "index.npy")).astype(np.int64)
        with open(os.path.join(name, "data.bin"), "rb") as f:
            data = f.read()
        for i in range(len(offs) - 1):
            blocks.append(pickle.loads(dctx.decompress(data[offs[i]:offs[i + 1]])))
    return blocks


def main():
    src, runs = sys.argv[1], int(sys.argv[2])
    blocks = load_blocks(src)
    dumps, best, total = pickle.dumps, None, 0
    gc.disable()
    for _ in range(runs):
        t0 = time.perf_counter()
        total = 0
        for b in blocks:
            total += len(dumps(b, 4))
        t = (time.perf_counter() - t0) * 1000
        best = t if best is None or t < best else best
    print("ms=%.1f blocks=%d bytes=%d" % (best, len(blocks), total))


if __name__ == "__main__":
    main()
