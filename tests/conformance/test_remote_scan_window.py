"""test_remote_scan_window.py - the read-ahead of a remote scan is a
window that never empties (src/remote/remote_file.c: the file's helper
starts the next range GET as soon as one ends, libcurl's multi interface
on one thread) and its ranges grow on sequential reading past 1 MiB,
against the S3 front (s3_front.py) over http://.
One bag (three read-ahead windows of incompressible records, ~100 MB;
no compression). Every fourth
request of the scan is answered 1 s late, the others 10 ms late.
Checked, threads=1 and threads=2:
- the rows of the local scan; each byte fetched about once (<= 1.02 x);
- while the slow GETs of the bag are pending, later GETs of the bag reach
  the server (at least one per slow GET, on the whole; a helper that sends
  a batch and waits for all of it sends none then: the pipe empties
  behind every slow answer; before the change: 0-2 for 5 slow GETs);
- the largest range GET of the scan is larger than 1 MiB (ranges grow).
Usage: test_remote_scan_window.py BUILD_DIR"""
import os
import random
import shutil
import sys

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
HDR = "src/remote/remote_file.h"
# the bag spans three windows (the bytes ahead of a stream, and a block):
# with a bag smaller than that, the window reaches its end at once and
# no GET is left to start while a slow one is pending (average record:
# 200 bytes + 8 of limits)
WINDOW = dstest.c_define(HDR, "DS_RFILE_AHEAD_MAX") + dstest.c_define(HDR, "DS_RFILE_BLOCK_MAX")
ROWS = 3 * WINDOW // 208
SLOW = 1.0  # long enough for a loaded machine's reader to make room in the window
# the scan's query: some work per row, so that the reader is slower than
# the window and a slow GET ahead of it does not stall it at once
SCAN = "SELECT rowid, record, length(hex(hex(record))) FROM %s"


def main():
    t = dstest.Checker()
    rng = random.Random(2426)
    root, path = dstest.bucket_bag(BUILD, "ds-rwin-", "w.bagz",
                                   [rng.randbytes(rng.randint(100, 300)) for _ in range(ROWS)])
    size = os.path.getsize(path)
    t.check(size > 2.5 * WINDOW, "a bag of about three windows", (size, WINDOW))
    want = dstest.connect(BUILD).execute(SCAN % "bagz(?)", (path,)).fetchall()
    try:
        with Front(root) as s3:
            for threads in (1, 2):
                conn = dstest.open_remote_bag(BUILD, s3, "bkt/w.bagz", threads)
                s3.delayed.clear()
                s3.always = {"delay": 0.01}
                s3.faults = [{"delay": SLOW} if i % 4 == 3 else {} for i in range(200)]
                got = conn.execute(SCAN % "temp.r").fetchall()
                s3.faults = []
                s3.always = {}
                t.check(got == want, "threads=%d: the rows of the local scan" % threads,
                        (len(got), len(want)))
                rs = dstest.range_gets(s3.requests(), "w.bagz")
                n = sum(b - a + 1 for _, a, b in rs)
                t.check(n <= 1.02 * size, "threads=%d: bytes fetched <= 1.02 x the file"
                        % threads, (n, size))
                # arrivals while a slow GET is pending (well after it came,
                # well before its answer)
                slow = [when for when, p, d in s3.delayed if d == SLOW and p.endswith("/w.bagz")]
                during = sum(1 for s in slow for when, _, _ in rs
                             if s + 0.02 < when < s + SLOW - 0.02)
                t.check(slow and during >= len(slow), "threads=%d: GETs of the bag start while a slow one "
                        "is pending (the window does not wait for a whole batch)" % threads,
                        (during, len(slow), len(rs)))
                big = max((b - a + 1 for _, a, b in rs), default=0)
                t.check(big > 1 << 20, "threads=%d: ranges grow past 1 MiB on a long "
                        "sequential scan" % threads, big)
                conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
