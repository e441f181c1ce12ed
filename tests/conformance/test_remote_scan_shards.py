"""test_remote_scan_shards.py - a scan over a set of remote shards asks
for each shard's first bytes ahead (src/formats/bagz/bagz_scan_ahead.c,
ds_vfs_read_ahead; src/remote/remote_file.c ds_rfile_ahead), against the
S3 front (s3_front.py) over http:// with a small delay on every request.
A set of 3 zstd shards (random records: ~1.6 MB of records each). Checked,
for threads=1 and threads=2:
- the rows of the local scan;
- each byte fetched about once (<= 1.02 x the files);
- each shard's records are first fetched as a block read ahead (the hint:
  at least DS_RFILE_BLOCK_START from byte 0, read from
  src/remote/remote_file.h), not by the scan's
  first small read that then waits a round trip, then a second one,
  before the read-ahead starts;
and a scan that stops early (LIMIT, within the first shard) fetches no
more than a few MiB (a hint asks for at most 1 MiB of records, 4 MiB of
the next shard's, and
512 KiB of limits of a shard); at row 0 of a threads=1 scan, more
than 1 MiB of shard 1 is asked for ahead.
Usage: test_remote_scan_shards.py BUILD_DIR"""
import os
import random
import shutil
import sys
import tempfile

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
START = dstest.c_define("src/remote/remote_file.h", "DS_RFILE_BLOCK_START")
SHARDS = 3
ROWS = 15000  # a shard


def main():
    t = dstest.Checker()
    rng = random.Random(2425)
    root = tempfile.mkdtemp(prefix="ds-rshards-")
    bkt = os.path.join(root, "bkt")
    os.makedirs(bkt)
    w = dstest.connect(BUILD)
    w.execute("CREATE VIRTUAL TABLE temp.w USING bagz(%s, mode=create, compression=zstd, "
              "rows_per_shard=%d)" % (dstest.sql_quote(os.path.join(bkt, "s@%d.bagz" % SHARDS)),
                                      ROWS))
    w.executemany("INSERT INTO temp.w(record) VALUES (?)",
                  [(rng.randbytes(rng.randint(20, 200)),) for _ in range(SHARDS * ROWS)])
    w.commit()
    w.close()
    names = ["s-%05d-of-%05d.bagz" % (i, SHARDS) for i in range(SHARDS)]
    sizes = [os.path.getsize(os.path.join(bkt, n)) for n in names]
    t.check(all(s > (1 << 20) for s in sizes), "shards larger than a hint", sizes)
    local = dstest.connect(BUILD)
    want = local.execute("SELECT rowid, record FROM bagz(?)",
                         (os.path.join(bkt, "s@%d.bagz" % SHARDS),)).fetchall()
    try:
        with Front(root) as s3:
            url = s3.url("bkt/s@%d.bagz" % SHARDS)
            for threads in (1, 2):
                conn = dstest.connect(BUILD)
                conn.execute("CREATE VIRTUAL TABLE temp.r USING bagz('%s', threads=%d)"
                             % (url, threads))
                conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
                s3.log.clear()
                s3.always = {"delay": 0.01}
                got = conn.execute("SELECT rowid, record FROM temp.r").fetchall()
                t.check(got == want, "threads=%d: the rows of the local scan" % threads,
                        (len(got), len(want)))
                log = s3.requests()
                n = dstest.fetched(log)
                t.check(n <= 1.02 * sum(sizes), "threads=%d: bytes fetched <= 1.02 x the "
                        "files" % threads, (n, sum(sizes)))
                for i, name in enumerate(names):
                    r = dstest.first_at_zero(log, name)
                    t.check(r is not None and r[1] + 1 >= START,
                            "threads=%d: shard %d's records first fetched as a block read "
                            "ahead (>= DS_RFILE_BLOCK_START from byte 0), not the scan's first small "
                            "read" % (threads, i), r)
                # stopping early within the first shard: the hints stay small
                s3.log.clear()
                got = conn.execute("SELECT rowid, record FROM temp.r LIMIT 100").fetchall()
                t.check(got == want[:100], "threads=%d: LIMIT 100: the first rows" % threads,
                        len(got))
                n = dstest.fetched(s3.requests())
                t.check(n <= 4 << 20, "threads=%d: LIMIT 100 fetches at most a few MiB"
                        % threads, n)
                conn.close()
                if threads == 1:
                    conn = dstest.connect(BUILD)
                    conn.execute("CREATE VIRTUAL TABLE temp.r USING bagz('%s', threads=1)"
                                 % url)
                    conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
                    dstest.next_shard_hint(t, s3, conn, "record", names[1], want[0])
                    conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
