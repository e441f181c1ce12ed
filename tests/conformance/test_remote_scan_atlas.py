"""test_remote_scan_atlas.py - a scan over a remote atlas dataset asks for
each shard's first data.bin bytes ahead (src/formats/atlas/
atlas_scan_ahead.c, ds_vfs_read_ahead; src/remote/remote_file.c
ds_rfile_ahead), against the S3 front (s3_front.py) over http:// with a
small delay on every request (s3://, as a dataset root is listed). A dataset of 3 uncompressed shards (~1.7 MB
of data.bin each). Checked, for threads=1 and threads=2:
- the rows of the local scan;
- each byte fetched about once (<= 1.02 x the files);
- each shard's data.bin is first fetched as a block read ahead (the hint:
  at least DS_RFILE_BLOCK_START from byte 0, read from
  src/remote/remote_file.h), not by the scan's
  first 64 KiB read (ATLAS_VIEW_AHEAD) that then waits a round trip
  before the read-ahead starts (shards 1 and 2: the open fetched shard
  0's first 64 KiB already);
- after the first row of a scan, shard 1's data.bin is asked for (the
  hint of the next shard, shard 0 being within 4 MiB of its end);
and a scan that stops early (LIMIT, within the first shard) fetches no
more than a few MiB (a hint asks for at most 1 MiB of a shard, 8 MiB of
the next shard); at row 0 of a threads=1 scan, more than 1 MiB of shard
1 is asked for ahead. The open (CREATE, the schema inferred from the
first rows, here one block) asks for more than 1 MiB of shard 0's
data.bin from byte 0 with no query run (the scan that follows finds the stream running, not a
lone 64 KiB block). A second dataset of 2 shards of 5-6 MiB: at row 0 of a
threads=1 scan, shard 1 is asked for already (hinted 8 MiB before a
shard's end, not 4: shard 0 is more than 4 MiB long), and its open asks
nothing of the shard folders its root's listing gave (what a listed
folder is is remembered, src/remote/vfs_remote.c note_dirs).
Usage: test_remote_scan_atlas.py BUILD_DIR"""
import json
import os
import random
import shutil
import sys
import tempfile
import time

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
START = dstest.c_define("src/remote/remote_file.h", "DS_RFILE_BLOCK_START")
SHARDS = 3
ROWS = 8000  # a shard
BIG_ROWS = 23000  # a shard of the second dataset: 5-6 MiB of data.bin


def main():
    t = dstest.Checker()
    rng = random.Random(2426)
    root = tempfile.mkdtemp(prefix="ds-ratlas-")
    ds = os.path.join(root, "bkt", "ds")
    os.makedirs(os.path.dirname(ds))
    w = dstest.connect(BUILD)
    w.execute("CREATE VIRTUAL TABLE temp.w USING atlas(%s, mode=create, strategy=0, "
              "block_size=16, shard_size=%d)" % (dstest.sql_quote(ds), ROWS))
    w.execute("BEGIN")
    w.executemany("INSERT INTO temp.w(example) VALUES (?)",
                  [(json.dumps({"i": i, "s": rng.randbytes(rng.randint(40, 160)).hex()}),)
                   for i in range(SHARDS * ROWS)])
    w.execute("COMMIT")
    w.close()
    files = [os.path.join(ds, "%d" % i, "data.bin") for i in range(SHARDS)]
    sizes = [os.path.getsize(f) for f in files]
    t.check(all(s > (1 << 20) for s in sizes), "shards larger than a hint", sizes)
    local = dstest.connect(BUILD)
    want = local.execute("SELECT rowid, example FROM atlas(?)", (ds,)).fetchall()
    t.check(len(want) == SHARDS * ROWS, "the local scan reads what was written", len(want))
    big = os.path.join(root, "bkt", "big")
    w = dstest.connect(BUILD)
    w.execute("CREATE VIRTUAL TABLE temp.w USING atlas(%s, mode=create, strategy=0, "
              "block_size=16, shard_size=%d)" % (dstest.sql_quote(big), BIG_ROWS))
    w.execute("BEGIN")
    w.executemany("INSERT INTO temp.w(example) VALUES (?)",
                  [(json.dumps({"i": i, "s": rng.randbytes(100).hex()}),)
                   for i in range(2 * BIG_ROWS)])
    w.execute("COMMIT")
    w.close()
    big0 = os.path.getsize(os.path.join(big, "0", "data.bin"))
    t.check(4 << 20 < big0 < 6 << 20, "the second dataset's shard 0: 4-6 MiB", big0)
    big_row0 = local.execute("SELECT rowid, example FROM atlas(?) LIMIT 1", (big,)).fetchone()
    try:
        with Front(root) as s3, dstest.environ(
                AWS_ENDPOINT_URL=s3.url("").rstrip("/"), AWS_ACCESS_KEY_ID="t",
                AWS_SECRET_ACCESS_KEY="t", AWS_REGION="us-east-1",
                XDG_CACHE_HOME=os.path.join(root, "cache")):
            url = "s3://bkt/ds"
            for threads in (1, 2):
                conn = dstest.connect(BUILD)
                conn.execute("CREATE VIRTUAL TABLE temp.r USING atlas('%s', threads=%d)"
                             % (url, threads))
                conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
                s3.log.clear()
                s3.always = {"delay": 0.01}
                got = conn.execute("SELECT rowid, example FROM temp.r").fetchall()
                t.check(got == want, "threads=%d: the rows of the local scan" % threads,
                        (len(got), len(want)))
                log = s3.requests()
                n = dstest.fetched(log)
                t.check(n <= 1.02 * sum(sizes), "threads=%d: bytes fetched <= 1.02 x the "
                        "data.bin files" % threads, (n, sum(sizes)))
                for i in range(1, SHARDS):  # shard 0's first 64 KiB came with the open
                    r = dstest.first_at_zero(log, "%d/data.bin" % i)
                    t.check(r is not None and r[1] + 1 >= START,
                            "threads=%d: shard %d's data.bin first fetched as a block read "
                            "ahead (>= DS_RFILE_BLOCK_START from byte 0), not the scan's first 64 KiB "
                            "read" % (threads, i), r)
                # stopping early within the first shard: the hints stay small
                s3.log.clear()
                got = conn.execute("SELECT rowid, example FROM temp.r LIMIT 100").fetchall()
                t.check(got == want[:100], "threads=%d: LIMIT 100: the first rows" % threads,
                        len(got))
                n = dstest.fetched(s3.requests())
                t.check(n <= 4 << 20, "threads=%d: LIMIT 100 fetches at most a few MiB"
                        % threads, n)
                conn.close()
                conn = dstest.connect(BUILD)
                conn.execute("CREATE VIRTUAL TABLE temp.r USING atlas('%s', threads=%d)"
                             % (url, threads))
                conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
                # a fresh table's first scan, one row read: shard 1 is asked for
                # already (shard 0 is within 4 MiB of its end) while the scan
                # stands at row 0
                s3.log.clear()
                cur = conn.execute("SELECT rowid, example FROM temp.r")
                row = cur.fetchone()
                asked = []
                for _ in range(50):  # the hint's GET goes out on a helper thread: <= 5 s
                    asked = [r for r in s3.requests() if r[1] == "GET" and
                             r[2].endswith("/1/data.bin")]
                    if asked:
                        break
                    time.sleep(0.1)
                t.check(row == want[0] and asked, "threads=%d: at row 0, shard 1's data.bin "
                        "asked for ahead" % threads, (row == want[0], len(asked)))
                cur.close()
                conn.close()
                if threads == 1:
                    conn = dstest.connect(BUILD)
                    conn.execute("CREATE VIRTUAL TABLE temp.r USING atlas('%s', threads=1)"
                                 % url)
                    conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
                    dstest.next_shard_hint(t, s3, conn, "example", "1/data.bin", want[0])
                    conn.close()
            # the open: shard 0's data.bin asked for as a stream, no query run
            # (infer=16: the first block only, one read, as A1's first 100
            # rows are 2 blocks; 3 reads in a row start a stream anyway)
            s3.always = {"delay": 0.01}
            s3.log.clear()
            conn = dstest.connect(BUILD)
            conn.execute("CREATE VIRTUAL TABLE temp.o USING atlas('%s', threads=1, infer=16)"
                         % url)
            n = 0
            for _ in range(50):  # the hint's GETs go out on a helper thread: <= 5 s
                n = dstest.from_zero(s3.requests(), "0/data.bin")
                if n > 1 << 20:
                    break
                time.sleep(0.1)
            t.check(n > 1 << 20, "the open (schema inferred) asks for more than 1 MiB of "
                    "shard 0's data.bin from byte 0, no query run", n)
            conn.close()
            # shards of 5-6 MiB: the next shard is hinted 8 MiB before the end
            # (a root not opened before in this process: nothing remembered)
            s3.log.clear()
            conn = dstest.connect(BUILD)
            conn.execute("CREATE VIRTUAL TABLE temp.r USING atlas('s3://bkt/big', threads=1)")
            probed = [r for r in s3.requests() if r[1] == "GET" and r[2] in
                      ("/bkt/big/0", "/bkt/big/1")]
            t.check(not probed, "the open asks nothing of the shard folders the root's "
                    "listing gave (no GET of bkt/big/0, bkt/big/1)", probed)
            conn.execute("SELECT count(*) FROM temp.r").fetchone()  # opened
            dstest.next_shard_hint(t, s3, conn, "example", "big/1/data.bin", big_row0)
            conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
