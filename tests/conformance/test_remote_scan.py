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
  first blocks) fails the scan with an error naming HTTP 503;
- bcolz over s3://: a scan's chunk files, larger than the 64 KiB an open
  fetches, are fetched whole ahead (ds_vfs_load_many) in one GET each,
  many at once: the rows of the local scan, and one GET per chunk file
  (chunk 0, read before the scan's first hint, two); they are fetched on
  a helper thread while the scan reads: with 0.3 s added to every
  request, the GET of chunk 1 reaches the server before the second
  request of chunk 0 (the scan's first chunk announces the next ones
  before it is opened), and an open of a chunk file still being fetched
  waits for it (never a second GET of it); the next statement checks
  the chunk files the table keeps for a change with requests in
  parallel.
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

            # bcolz: chunk files of ~120 KB (hex of random bytes: 2 digits a byte)
            tbl = os.path.join(bkt, "tb")
            w = dstest.connect(BUILD)
            w.execute("CREATE VIRTUAL TABLE temp.w USING bcolz(%s, mode=create, "
                      "columns='a TEXT', chunklen=2000)" % dstest.sql_quote(tbl))
            w.executemany("INSERT INTO temp.w(a) VALUES (?)",
                          [(rng.randbytes(60).hex(),) for _ in range(40000)])
            w.commit()
            w.close()
            shutil.copytree(tbl, os.path.join(bkt, "tb2"))
            chunks = [f for f in os.listdir(os.path.join(tbl, "a", "data"))]
            big = sum(os.path.getsize(os.path.join(tbl, "a", "data", f)) > 65536
                      for f in chunks)
            t.check(big >= len(chunks) - 1, "bcolz: chunk files larger than the open's tail",
                    (big, len(chunks)))
            with dstest.environ(AWS_ENDPOINT_URL=s3.url("").rstrip("/"), AWS_ACCESS_KEY_ID="t",
                                AWS_SECRET_ACCESS_KEY="t", AWS_REGION="us-east-1"):
                conn = dstest.connect(BUILD)
                fresh()
                conn.execute("CREATE VIRTUAL TABLE temp.r USING bcolz('s3://bkt/tb')")
                fresh()
                local.execute("CREATE VIRTUAL TABLE temp.r USING bcolz(%s)"
                              % dstest.sql_quote(tbl))
                got = conn.execute("SELECT rowid, a FROM temp.r").fetchall()
                want_b = local.execute("SELECT rowid, a FROM temp.r").fetchall()
                t.check(got == want_b and len(got) == 40000,
                        "bcolz scan over s3: the rows of the local scan", len(got))
                gets = [r for r in s3.requests() if r[1] == "GET" and "/data/" in r[2]]
                t.check(len(gets) <= len(chunks) + 1, "bcolz scan: one GET per chunk file "
                        "(fetched whole ahead, not probed then read; chunk 0, before the "
                        "scan's first hint, both)", (len(gets), len(chunks)))
                t.check(s3.max_inflight >= 4, "bcolz scan: chunk files fetched many at once",
                        s3.max_inflight)
                conn.close()
                # a table never read before (no probe of it kept): the next
                # chunk files are in flight while chunk 0 is read
                conn = dstest.connect(BUILD)
                fresh()
                conn.execute("CREATE VIRTUAL TABLE temp.r2 USING bcolz('s3://bkt/tb2')")
                fresh(always={"delay": 0.3})
                got = conn.execute("SELECT count(*), sum(length(a)) FROM temp.r2").fetchone()
                t.check(got == (40000, 40000 * 120), "bcolz scan (0.3 s a request): the rows",
                        got)
                log = [r for r in s3.requests() if r[1] == "GET" and "/data/" in r[2]]
                first = {}
                for r in log:
                    first.setdefault(os.path.basename(r[2]), []).append(r[0])
                c0, c1 = first.get("__0.blp", []), first.get("__1.blp", [0])
                t.check(len(c0) == 2 and c1[0] < c0[1], "bcolz scan: chunk 1 asked for before "
                        "chunk 0 was read (fetched ahead on a helper thread)",
                        (len(c0), [round(x - log[0][0], 3) for x in c0 + c1]))
                t.check(all(len(v) == 1 for k, v in first.items() if k != "__0.blp") and
                        len(first) == len(chunks), "bcolz scan (0.3 s a request): one GET of "
                        "every other chunk file (opens wait for the fetch in flight)",
                        sorted((k, len(v)) for k, v in first.items() if len(v) > 1))
                # the next statement checks the chunk files it keeps for a
                # change: all at once, not one round trip each in a row
                fresh(always={"delay": 0.3})
                got = conn.execute("SELECT a FROM temp.r2 WHERE rowid = 5").fetchone()
                t.check(got == want_b[5][1:], "bcolz: a lookup after the scan", got)
                probes = [r for r in s3.requests() if "/data/" in r[2]]
                t.check(len(probes) >= 4 and s3.max_inflight >= 4, "bcolz: the kept chunk "
                        "files checked for a change in parallel (ds_vfs_stat_many)",
                        (len(probes), s3.max_inflight))
                conn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
