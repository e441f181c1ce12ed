"""test_remote_parallel.py - parallel, adaptive remote reads (issue 24),
against the S3 front (tests/conformance/s3_front.py) over http://, with a
small delay added to every request so that requests sent together are
answered together; the front counts the requests it answers at once
(max_inflight). Checked:
- a full scan over http reads the same rows as the local scan, fetches at
  most 1.05 x the file's bytes, in few requests (growing windows), with
  several in flight (a window cut into parallel range GETs);
- a `rowid IN (...)` list of hundreds of rows reads the same rows as
  locally, with its records fetched many at once, in far fewer requests
  than rows;
- datadings: a sparse `key IN (...)` list fetches its samples many at
  once, and a scan reads as locally;
- atlas over s3://: a rowid IN list and a scan read as locally;
- bcolz over s3://: a scan fetches its chunk files many at once;
- opening a set of 60 shards (count(*), then a scan) answers as locally,
  with the shards' probes overlapping, and a set whose probes take longer
  than their 2 s freshness still probes each shard once;
- faults in the middle of a read-ahead (a reset, a 503) are retried and
  give the same rows; a 503 that stays fails with a clear error naming
  HTTP 503;
- an interrupt stops a scan waiting on slow requests.
Usage: test_remote_parallel.py BUILD_DIR"""
import os
import random
import re
import shutil
import sqlite3
import struct
import sys
import tempfile
import threading

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD


def fetched(log, sizes):
    """Body bytes the GETs of the log asked for (ranges clipped at the
    objects' sizes; sizes: path -> bytes)."""
    total = 0
    for _, method, path, rng, _, status in log:
        if method != "GET" or status != 206 or not rng:
            continue
        n = sizes[path]
        a, b = rng[len("bytes="):].split("-")
        if a == "":
            total += min(int(b), n)
        else:
            total += min(int(b), n - 1) - int(a) + 1
    return total


def sample(key, data):
    """The msgpack bytes of {"key": key, "data": data}."""
    k = key.encode()
    return (b"\x82\xa3key" + bytes([0xa0 | len(k)]) + k + b"\xa4data" +
            b"\xc5" + struct.pack(">H", len(data)) + data)


def main():
    t = dstest.Checker()
    rng = random.Random(24)
    root = tempfile.mkdtemp(prefix="ds-parallel-")
    bkt = os.path.join(root, "bkt")
    os.makedirs(bkt)
    # one bag of ~12 MiB (records of 1..6 KiB), and a set of 60 small shards
    recs = [rng.randbytes(rng.randint(1024, 6144)) for _ in range(3500)]
    big = dstest.write_tail_bag(os.path.join(bkt, "big.bag"), recs)
    for i in range(60):
        dstest.write_tail_bag(os.path.join(bkt, "s-%05d-of-00060.bag" % i),
                              [rng.randbytes(rng.randint(10, 400)) for _ in range(7 + i % 3)])
    sizes = {"/bkt/" + f: os.path.getsize(os.path.join(bkt, f)) for f in os.listdir(bkt)}
    local = dstest.connect(BUILD)
    try:
        with Front(root) as s3:
            conn = dstest.connect(BUILD)

            def fresh(always=None, faults=()):
                s3.log.clear()
                s3.max_inflight = 0
                s3.always = always or {"delay": 0.01}
                s3.faults = list(faults)

            # a full scan
            url = s3.url("bkt/big.bag")
            fresh()
            got = conn.execute("SELECT rowid, record FROM bagz(?)", (url,)).fetchall()
            want = local.execute("SELECT rowid, record FROM bagz(?)", (big,)).fetchall()
            t.check(got == want, "scan over http: the rows of the local scan",
                    (len(got), len(want)))
            log = s3.requests()
            n = fetched(log, sizes)
            t.check(n <= 1.05 * sizes["/bkt/big.bag"], "scan: bytes fetched <= 1.05 x the file",
                    (n, sizes["/bkt/big.bag"]))
            t.check(len(log) <= 40, "scan: few requests (growing windows)", len(log))
            t.check(s3.max_inflight > 1, "scan: several range GETs in flight at once",
                    s3.max_inflight)

            # a rowid IN list of 600 rows
            ids = sorted(rng.sample(range(len(recs)), 600))
            inl = ",".join(map(str, ids))
            conn.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s)" % dstest.sql_quote(url))
            fresh()
            got = conn.execute("SELECT rowid, record FROM temp.b WHERE rowid IN (%s)"
                               % inl).fetchall()
            t.check(got == [(i, recs[i]) for i in ids], "rowid IN: the rows written",
                    len(got))
            log = s3.requests()
            t.check(len(log) < len(ids) // 4, "rowid IN: far fewer requests than rows",
                    (len(log), len(ids)))
            # sparse: rows at least 80 records (80 KiB) apart, a GET each, at once
            ids = sorted(rng.sample(range(0, len(recs), 80), 40))
            fresh()
            got = conn.execute("SELECT rowid, record FROM temp.b WHERE rowid IN (%s)"
                               % ",".join(map(str, ids))).fetchall()
            t.check(got == [(i, recs[i]) for i in ids], "sparse rowid IN: the rows written",
                    len(got))
            t.check(s3.max_inflight >= 4, "sparse rowid IN: requests in flight at once",
                    s3.max_inflight)
            t.check(len(s3.requests()) <= len(ids) + 2,
                    "sparse rowid IN: about a request per row (a retry or two allowed)",
                    len(s3.requests()))

            # faults in the middle of a read-ahead: retried, same rows
            fresh(faults=[{"reset": True}, {}, {"status": 503}, {}, {"short": 100}])
            got = conn.execute("SELECT rowid, record FROM temp.b").fetchall()
            t.check(got == want, "reset, 503 and a short body mid-scan: the same rows",
                    len(got))
            t.check(sum(1 for r in s3.requests() if r[5] in (503,)) >= 1,
                    "the 503 was seen")
            fresh(always={"status": 503})
            e = dstest.error_of(conn, "SELECT count(*), sum(length(record)) FROM bagz(?, "
                                "'retries=1')", url)
            t.check(e is not None and "HTTP 503" in e, "503 forever: a clear error", e)
            # 503 that stays, in the middle of a scan's read-ahead (the table is
            # open, its tail held): a clear error naming the status
            fresh()
            conn.execute("CREATE VIRTUAL TABLE temp.c USING bagz(%s, retries=1)"
                         % dstest.sql_quote(url))
            fresh(always={"status": 503})
            e = dstest.error_of(conn, "SELECT count(*), sum(length(record)) FROM temp.c")
            t.check(e is not None and "HTTP 503" in e and "big.bag" in e,
                    "503 forever mid-scan: a clear error naming the file and status", e)
            conn.execute("DROP TABLE temp.c")
            conn.execute("DROP TABLE temp.b")

            # datadings: `key IN (...)` of sparse keys, samples fetched at once
            spath = os.path.join(bkt, "dd.msgpack")
            w = dstest.connect(BUILD)
            w.execute("CREATE VIRTUAL TABLE temp.w USING datadings(%s, mode=create)"
                      % dstest.sql_quote(spath))
            dkeys = ["k%05d" % i for i in range(2000)]
            w.executemany("INSERT INTO temp.w(key, raw) VALUES (?, ?)",
                          [(k, sample(k, rng.randbytes(rng.randint(1500, 2500)))) for k in dkeys])
            w.commit()
            w.close()
            for f in os.listdir(bkt):
                sizes["/bkt/" + f] = os.path.getsize(os.path.join(bkt, f))
            durl = s3.url("bkt/dd.msgpack")
            fresh()
            conn.execute("CREATE VIRTUAL TABLE temp.d USING datadings(%s)" % dstest.sql_quote(durl))
            local.execute("CREATE VIRTUAL TABLE temp.d USING datadings(%s)" % dstest.sql_quote(spath))
            pick = sorted(rng.sample(range(0, 2000, 50), 30))
            q = ("SELECT rowid, * FROM temp.d WHERE key IN (%s)"
                 % ",".join(dstest.sql_quote(dkeys[i]) for i in pick))
            fresh()
            got = conn.execute(q).fetchall()
            t.check(got == local.execute(q).fetchall() and len(got) == len(pick),
                    "datadings key IN over http: the rows of the local read", len(got))
            t.check(s3.max_inflight >= 4, "datadings key IN: requests in flight at once",
                    s3.max_inflight)
            got = conn.execute("SELECT rowid, * FROM temp.d").fetchall()
            t.check(got == local.execute("SELECT rowid, * FROM temp.d").fetchall(),
                    "datadings scan over http: the rows of the local scan", len(got))

            # bcolz over s3://: a scan's chunk files are probed (and, small,
            # read) many at once
            shutil.copytree(os.path.join(dstest.ROOT, "tests", "fixtures", "upstream", "bcolz",
                                         "small_chunklen"), os.path.join(bkt, "sc"))
            os.environ.update(AWS_ENDPOINT_URL=s3.url("").rstrip("/"), AWS_ACCESS_KEY_ID="AK",
                              AWS_SECRET_ACCESS_KEY="unchecked", AWS_REGION="us-east-1")
            fresh()
            got = conn.execute("SELECT rowid, * FROM bcolz('s3://bkt/sc')").fetchall()
            want = local.execute("SELECT rowid, * FROM bcolz(?)",
                                 (os.path.join(bkt, "sc"),)).fetchall()
            t.check(got == want and len(got) > 0, "bcolz scan over s3: the rows of the local scan",
                    (len(got), len(want)))
            t.check(s3.max_inflight >= 8, "bcolz scan: chunk files fetched many at once",
                    s3.max_inflight)

            # atlas over s3://: a rowid IN list (blocks prefetched) and a scan
            shutil.copytree(os.path.join(dstest.ROOT, "tests", "fixtures", "upstream", "atlas",
                                         "mid"), os.path.join(bkt, "at"))
            aids = ",".join(map(str, sorted(rng.sample(range(19000), 300))))
            for label, sql in (("rowid IN", "SELECT rowid, * FROM atlas(?) WHERE rowid IN (%s)"
                                % aids), ("scan", "SELECT rowid, * FROM atlas(?)")):
                fresh()
                got = conn.execute(sql, ("s3://bkt/at",)).fetchall()
                want = local.execute(sql, (os.path.join(bkt, "at"),)).fetchall()
                t.check(got == want and len(got) > 0,
                        "atlas %s over s3: the rows of the local read" % label,
                        (len(got), len(want)))

            # a set of 60 shards: the probes overlap
            spec = s3.url("bkt/s@60.bag")
            lspec = os.path.join(bkt, "s@60.bag")
            conn2 = dstest.connect(BUILD)  # nothing cached by conn
            fresh()
            got = conn2.execute("SELECT count(*) FROM bagz(?)", (spec,)).fetchall()
            want_n = local.execute("SELECT count(*) FROM bagz(?)", (lspec,)).fetchall()
            t.eq(got, want_n, "60 shards: count(*) as local")
            t.check(s3.max_inflight >= 8, "60 shards: probes in flight at once",
                    s3.max_inflight)
            got = conn2.execute("SELECT rowid, record FROM bagz(?)", (spec,)).fetchall()
            want = local.execute("SELECT rowid, record FROM bagz(?)", (lspec,)).fetchall()
            t.check(got == want, "60 shards: the rows of the local set", (len(got), len(want)))

            # a set whose probes take longer than their 2 s freshness (200
            # shards, 0.4 s a request, 32 at once): each probed once
            for i in range(200):
                dstest.write_tail_bag(os.path.join(bkt, "m-%05d-of-00200.bag" % i),
                                      [bytes([i % 256]) * 10])
            conn3 = dstest.connect(BUILD)
            fresh(always={"delay": 0.4})
            got = conn3.execute("SELECT count(*) FROM bagz(?)",
                                (s3.url("bkt/m@200.bag"),)).fetchall()
            n = len(s3.requests())
            t.check(got == [(200,)] and n <= 210,
                    "200 slow shards: count(*) right, each probed once", (got, n))

            # an interrupt stops a scan waiting on slow requests
            fresh(always={"delay": 0.5})
            timer = threading.Timer(0.8, conn.interrupt)
            timer.start()
            e = dstest.error_of(conn, "SELECT count(*), sum(length(record)) FROM bagz(?)",
                                s3.url("bkt/big.bag") + "?x=1")
            timer.cancel()
            t.check(e is not None and "interrupt" in e, "interrupt: the scan stops", e)
            s3.always = {}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
