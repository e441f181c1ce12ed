"""test_remote_scan_grow.py - the range GETs of a long sequential remote
scan start at DS_RFILE_BLOCK_START and grow to DS_RFILE_BLOCK_MAX, and the
bytes fetched ahead of the reader stay within DS_RFILE_AHEAD_MAX
(src/remote/remote_file.h; the sizes are read from there), against the S3
front (s3_front.py) over http://.
One bag of incompressible records, larger than the window ahead and a few
of the largest blocks. Checked:
- threads=1 and threads=2: the rows of the local scan; threads=1: each
  byte fetched about once (<= 1.02 x; not checked at threads=2: when one
  of its two threads falls more than DS_RFILE_GAP behind the other, the
  blocks it has still to read were freed and it fetches them again, 1.03
  to 1.07 x in this test under load or ASan, 1.05 to 1.10 x before the
  change: a known gap); the GETs of the records that start in the first
  2 x DS_RFILE_BLOCK_START bytes ask for at most DS_RFILE_BLOCK_START
  (ranges start small); the largest GET asks for DS_RFILE_BLOCK_MAX
  (ranges grow that far; before the change: 2 MiB);
- threads=1, the cursor standing at a row past 2 x DS_RFILE_BLOCK_MAX
  (its blocks are the largest), once the helper has sent what it queued:
  the records asked for end at most DS_RFILE_AHEAD_MAX +
  DS_VIEW_AHEAD (the core's window of the reader) past that row's end
  (the bound), and more than DS_RFILE_AHEAD_MAX - DS_RFILE_BLOCK_MAX past
  it (the window is that deep: several large GETs ahead; before the change
  at most 8 MiB).
Usage: test_remote_scan_grow.py BUILD_DIR"""
import bisect
import os
import random
import shutil
import struct
import sys
import time

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
HDR = "src/remote/remote_file.h"
START = dstest.c_define(HDR, "DS_RFILE_BLOCK_START")
BLOCK_MAX = dstest.c_define(HDR, "DS_RFILE_BLOCK_MAX")
AHEAD_MAX = dstest.c_define(HDR, "DS_RFILE_AHEAD_MAX")
VIEW = dstest.c_define("src/core/mapped_file.h", "DS_VIEW_AHEAD")
# the bag: the point the cursor stands at, then the window ahead, then
# two more of the largest blocks
STAND = 2 * BLOCK_MAX
SIZE = STAND + AHEAD_MAX + VIEW + 2 * BLOCK_MAX
SCAN = "SELECT rowid, record FROM %s"


def limits_of(path):
    """The end offsets of the bag's records (its limits section)."""
    with open(path, "rb") as f:
        data = f.read()
    b = struct.unpack("<Q", data[-8:])[0]
    return list(struct.unpack("<%dQ" % ((len(data) - b) // 8), data[b:])), b


def settled_end(s3, name, below):
    """The end of the furthest range GET of `name` starting below `below`,
    once it stops moving (the helper sent what it queued): at most 3 s."""
    last = -1
    for _ in range(30):
        end = max((b + 1 for _, a, b in dstest.range_gets(s3.requests(), name) if a < below),
                  default=0)
        if end == last:
            return end
        last = end
        time.sleep(0.1)
    return last


def main():
    t = dstest.Checker()
    rng = random.Random(2431)
    recs, n = [], 0
    while n < SIZE:
        recs.append(rng.randbytes(rng.randint(2000, 6000)))
        n += len(recs[-1])
    root, path = dstest.bucket_bag(BUILD, "ds-rgrow-", "g.bagz", recs)
    size = os.path.getsize(path)
    limits, recs_end = limits_of(path)
    t.check(len(limits) == len(recs) and recs_end >= SIZE, "a bag longer than the window",
            (len(limits), len(recs), recs_end, SIZE))
    stand = bisect.bisect_left(limits, STAND)  # the first row ending at or past STAND
    want = dstest.connect(BUILD).execute(SCAN % "bagz(?)", (path,)).fetchall()
    try:
        with Front(root) as s3:
            for threads in (1, 2):
                conn = dstest.open_remote_bag(BUILD, s3, "bkt/g.bagz", threads)
                cur = conn.execute(SCAN % "temp.r")
                got = []
                for row in cur:
                    got.append(row)
                    if threads == 1 and len(got) == stand + 1:
                        end = settled_end(s3, "g.bagz", recs_end)
                        ahead = end - limits[stand]
                        t.check(ahead <= AHEAD_MAX + VIEW, "threads=1: the records asked for end "
                                "at most DS_RFILE_AHEAD_MAX (+ the reader's view) past the row "
                                "read", (ahead, AHEAD_MAX + VIEW))
                        t.check(ahead > AHEAD_MAX - BLOCK_MAX, "threads=1: the window ahead of "
                                "the reader is more than DS_RFILE_AHEAD_MAX - "
                                "DS_RFILE_BLOCK_MAX deep", (ahead, AHEAD_MAX - BLOCK_MAX))
                t.check(got == want, "threads=%d: the rows of the local scan" % threads,
                        (len(got), len(want)))
                rs = [(a, b + 1) for _, a, b in dstest.range_gets(s3.requests(), "g.bagz")]
                fetched = sum(b - a for a, b in rs)
                if threads == 1:
                    t.check(fetched <= 1.02 * size, "threads=1: bytes fetched <= 1.02 x the file",
                            (fetched, size))
                first = [b - a for a, b in rs if a < 2 * START]
                t.check(first and max(first) <= START, "threads=%d: the GETs of the first "
                        "2 x DS_RFILE_BLOCK_START bytes ask for at most DS_RFILE_BLOCK_START"
                        % threads, (first, START))
                big = max((b - a for a, b in rs), default=0)
                t.check(big == BLOCK_MAX, "threads=%d: the largest range GET of a long "
                        "sequential scan is DS_RFILE_BLOCK_MAX" % threads, (big, BLOCK_MAX))
                conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
