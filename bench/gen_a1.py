#!/usr/bin/python3
"""gen_a1.py - deterministic generator for benchmark dataset A1 (atlas).

Usage: /usr/bin/python3 bench/gen_a1.py OUTDIR COUNT NAME

Writes the torch-atlas-ds dataset OUTDIR/NAME (docs/formats/atlas.md
sections 1-6) the way upstream's AtlasDatasetWriter writes it with
compression_strategy 2 (SHARED_DICTIONARY), block_size 64,
compression_level 3, compression_dict_size 0.01 and shard_size
ceil(COUNT / 8), i.e. 8 shards:

  NAME/meta.json        {"version": 1, "shard_sizes": [...],
                         "compression_strategy": 2}  (json indent 4)
  NAME/zstd_dict.bin    dictionary trained from shard 0's pickled blocks
                        (size max(int(0.01 * their bytes) + 1, 1024),
                        zstandard.train_dictionary(size, blocks, level=3))
  NAME/0 .. NAME/7      meta.json (version, block_size, stored_examples,
                        compression_strategy 2, compression_level 3,
                        compression_dict_size 0.01), index.npy (num_blocks
                        + 1 offsets, dtype by the data.bin size: |u1, <u2,
                        <u4 or <u8), data.bin (one zstd frame per block,
                        level 3 with the shared dictionary, content size
                        and dictionary ID in the header)

Each block is pickle.dumps(list of 64 examples, protocol=4) (the default
protocol of Debian's Python 3.11, what upstream writes there). Example i is
the dict, in this order,
  {"id": i, "label": i % 1000, "score": float, "text": "<60-200 chars>"}
with score a multiple of 1/1024 in [0, 1024) (sums exact in double) and
text words of the same 64-word vocabulary as B1/D1, separated by spaces,
at least 60 + r % 131 characters (so 60..198). All values come from one
random.Random(SEED) stream read only through getrandbits (stable across
Python versions), so the files are the same on every run; the compressed
bytes depend on the zstd version (python3-zstandard 0.20.0 bundles 1.5.4).

The dataset is written into NAME.tmp and renamed to NAME when complete, so
an existing NAME/meta.json means a whole dataset.
Needs python3-numpy and python3-zstandard (bench-only dependency).
"""

import json
import os
import pickle
import random
import shutil
import sys

import numpy as np
import zstandard

SEED = 0x5EEDA1A1A1A1A1A1
NSHARDS = 8
BLOCK_SIZE = 64
LEVEL = 3
DICT_FRACTION = 0.01
STRATEGY = 2  # SHARED_DICTIONARY_COMPRESSION

VOCAB = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo "
    "lima mike november oscar papa quebec romeo sierra tango uniform victor "
    "whiskey xray yankee zulu data set record shard query table index "
    "sample label train test model vector token the a of and to in is it "
    "on with for as by at from this that be or an are was not image"
).split()
assert len(VOCAB) == 64  # one word = 6 random bits


def examples(rng, start, count):
    """Examples start .. start+count-1 (the stream must be at `start`)."""
    bits = rng.getrandbits
    vocab = VOCAB
    out = []
    for i in range(start, start + count):
        target = 60 + bits(32) % 131
        words = []
        n = -1
        while n < target:
            w = vocab[bits(6)]
            words.append(w)
            n += len(w) + 1
        score = bits(20) / 1024.0
        out.append({"id": i, "label": i % 1000, "score": score,
                    "text": " ".join(words)})
    return out


def index_dtype(size):
    """numpy dtype upstream picks for the offsets (atlas.md 5.2)."""
    for limit, dt in ((255, np.uint8), (65535, np.uint16),
                      (2**32 - 1, np.uint32)):
        if size <= limit:
            return dt
    return np.uint64


def write_json(path, obj):
    with open(path, "w") as f:
        f.write(json.dumps(obj, indent=4))


def write_shard(sdir, count, blocks, cctx):
    """One shard directory from its pickled blocks (compressed here)."""
    os.mkdir(sdir)
    offsets = [0]
    with open(os.path.join(sdir, "data.bin"), "wb") as f:
        for b in blocks:
            frame = cctx.compress(b)
            f.write(frame)
            offsets.append(offsets[-1] + len(frame))
    with open(os.path.join(sdir, "index.npy"), "wb") as f:
        np.save(f, np.array(offsets, dtype=index_dtype(offsets[-1])))
    write_json(os.path.join(sdir, "meta.json"), {
        "version": 1,
        "block_size": BLOCK_SIZE,
        "stored_examples": count,
        "compression_strategy": STRATEGY,
        "compression_level": LEVEL,
        "compression_dict_size": DICT_FRACTION,
    })
    return offsets[-1]


def shard_blocks(rng, start, count):
    """The pickled blocks of a shard holding examples start..start+count-1."""
    blocks = []
    for b in range(start, start + count, BLOCK_SIZE):
        n = min(BLOCK_SIZE, start + count - b)
        blocks.append(pickle.dumps(examples(rng, b, n), protocol=4))
    return blocks


def main(argv):
    if len(argv) != 4 or not argv[2].isdigit():
        sys.stderr.write("usage: gen_a1.py OUTDIR COUNT NAME\n")
        return 2
    outdir, count, name = argv[1], int(argv[2]), argv[3]
    shard_size = max(1, -(-count // NSHARDS))
    sizes = []
    while sum(sizes) < count:
        sizes.append(min(shard_size, count - sum(sizes)))
    # Shard 0 must have >= 7 blocks or upstream falls back to strategy 1.
    if not sizes or -(-sizes[0] // BLOCK_SIZE) < 7:
        sys.stderr.write("gen_a1: COUNT too small for a shared dictionary\n")
        return 2
    final = os.path.join(outdir, name)
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    rng = random.Random(SEED)
    width = len(str(len(sizes) - 1))
    start = 0
    cctx = None
    total = 0
    for k, n in enumerate(sizes):
        blocks = shard_blocks(rng, start, n)
        if k == 0:
            # upstream: shard 0 trains the dictionary at close, then it is
            # moved to the root and used by every shard
            raw = sum(len(b) for b in blocks)
            want = max(int(DICT_FRACTION * raw) + 1, 1024)
            zdict = zstandard.train_dictionary(want, blocks, level=LEVEL)
            with open(os.path.join(tmp, "zstd_dict.bin"), "wb") as f:
                f.write(zdict.as_bytes())
            cctx = zstandard.ZstdCompressor(level=LEVEL, dict_data=zdict)
        total += write_shard(os.path.join(tmp, str(k).zfill(width)), n,
                             blocks, cctx)
        start += n
        sys.stderr.write("gen_a1: %s shard %d/%d\r" % (name, k + 1,
                                                       len(sizes)))
    write_json(os.path.join(tmp, "meta.json"), {
        "version": 1,
        "shard_sizes": sizes,
        "compression_strategy": STRATEGY,
    })
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)
    sys.stderr.write("gen_a1: %s: %d examples, %d shards, %.1f MB of blocks, "
                     "dictionary %d bytes\n"
                     % (final, count, len(sizes), total / 1e6, len(zdict)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
