"""test_remote_scan.py - the read-ahead of remote scans (issue 24, "Speed":
src/remote/remote_file.c), against the S3 front (s3_front.py) over
http://, with a small delay added to every request; the front logs each
request and counts the requests it answers at once (max_inflight).
A bag of many small records whose limits (one u64 a record, after the
records) are far larger than the 64 KiB tail the open fetches, so a scan
reads two regions of the file in turn (records and limits). Checked:
- threads=1: the rows of the local scan; each byte fetched about once
  (<= 1.02 x the file); the records and the limits each read with
  growing blocks fetched ahead (few requests), several in flight at once
  while the reader works;
- threads=2 (two threads reading batches of records in turn): the same
  rows, and still each byte fetched about once (<= 1.02 x the file);
- a statement that stops early (LIMIT) closes the file while blocks are
  being fetched ahead: the next statement reads right;
- a read-ahead that fails for good (503 on every request after the
  first blocks) fails the scan with an error naming HTTP 503.
Usage: test_remote_scan.py BUILD_DIR"""
import os
import random
import shutil
import sys
import tempfile

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD


def fetched(log, size):
    """Body bytes the range GETs of the log asked for (clipped at size)."""
    total = 0
    for _, method, _path, rng, _, status in log:
        if method != "GET" or status != 206 or not rng:
            continue
        a, b = rng[len("bytes="):].split("-")
        total += min(int(b), size) if a == "" else min(int(b), size - 1) - int(a) + 1
    return total


def main():
    t = dstest.Checker()
    rng = random.Random(2424)
    root = tempfile.mkdtemp(prefix="ds-rscan-")
    bkt = os.path.join(root, "bkt")
    os.makedirs(bkt)
    # 80,000 records of 20..140 bytes: ~6.4 MB of records, 640 KB of limits
    recs = [rng.randbytes(rng.randint(20, 140)) for _ in range(80000)]
    path = dstest.write_tail_bag(os.path.join(bkt, "many.bag"), recs)
    size = os.path.getsize(path)
    local = dstest.connect(BUILD)
    want = local.execute("SELECT rowid, record FROM bagz(?)", (path,)).fetchall()
    try:
        with Front(root) as s3:
            url = s3.url("bkt/many.bag")

            def fresh(always=None, faults=()):
                s3.log.clear()
                s3.max_inflight = 0
                s3.always = always or {"delay": 0.01}
                s3.faults = list(faults)

            for threads in (1, 2):
                conn = dstest.connect(BUILD)
                fresh()
                got = conn.execute("SELECT rowid, record FROM bagz(?, 'threads=%d')"
                                   % threads, (url,)).fetchall()
                t.check(got == want, "threads=%d: the rows of the local scan" % threads,
                        (len(got), len(want)))
                log = s3.requests()
                n = fetched(log, size)
                t.check(n <= 1.02 * size, "threads=%d: bytes fetched <= 1.02 x the file"
                        % threads, (n, size))
                if threads == 1:
                    t.check(len(log) <= 24, "threads=1: few requests (blocks growing, "
                            "records and limits each read ahead)", len(log))
                    t.check(s3.max_inflight >= 2, "threads=1: blocks fetched ahead while "
                            "the reader works (several in flight)", s3.max_inflight)
                conn.close()

            # stopping early closes the file with blocks in flight
            conn = dstest.connect(BUILD)
            fresh(always={"delay": 0.05})
            got = conn.execute("SELECT rowid, record FROM bagz(?) LIMIT 30000",
                               (url,)).fetchall()
            t.check(got == want[:30000], "LIMIT: the first rows", len(got))
            fresh()
            got = conn.execute("SELECT count(*), sum(length(record)) FROM bagz(?)",
                               (url,)).fetchone()
            t.check(got == (len(recs), sum(map(len, recs))),
                    "after a LIMIT: the next scan counts every record", got)
            conn.close()

            # a read-ahead failing for good: the scan fails naming HTTP 503
            conn = dstest.connect(BUILD)
            fresh(always={"delay": 0.01})
            conn.execute("SELECT count(*) FROM bagz(?, 'retries=1')", (url,)).fetchone()
            fresh(always={"delay": 0.01, "status": 503})
            t.raises(lambda: conn.execute("SELECT sum(length(record)) FROM bagz(?, "
                                          "'retries=1')", (url,)).fetchone(),
                     "read-ahead failing for good: the error names HTTP 503", "503")
            conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
