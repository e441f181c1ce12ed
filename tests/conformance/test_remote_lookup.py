"""test_remote_lookup.py - list lookups over remote shards (issue 24, R-B1
point): a `rowid IN (...)` list over a set of bagz shards fetches the
limits of every shard in one round and the records of every shard in
another, against the S3 front over http:// with a delay added to every
request (requests sent together are answered together; the front counts
those it answers at once, max_inflight). Checked:
- a list spread over 4 shards (12 sparse rows each): the rows of the
  local read, and more requests in flight at once than one shard has
  (the shards' records fetched together, not shard after shard);
- a list of 100 rows in each of 4 shards whose limits are larger than
  the tail an open fetches: the rows of the local read, each shard's
  limits fetched once (the lookups read them from memory, not again from
  the server), and no range fetched twice;
- a list of 20 rows of one shard about 100 KB apart (1,000 records of
  60-140 bytes): the rows of the local read, and their records fetched
  with at most 2 GETs (read through gaps under 128 KiB), within the bytes
  from the first row's record to the last's;
- opening a set of 100 small shards (count(*)): the local answer, one GET
  per shard, and more of them in flight at once than the 32 probe threads
  could have (the probes sent as one batch).
Usage: test_remote_lookup.py BUILD_DIR"""
import os
import random
import shutil
import sys
import tempfile

import dstest
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
NSHARD = 4
NREC = 40000  # 320,000 bytes of limits: five times the 64 KiB tail of an open


def span(rng_header):
    """(first, last) byte of a Range header "bytes=a-b"."""
    a, b = rng_header[len("bytes="):].split("-")
    return int(a), int(b)


def main():
    t = dstest.Checker()
    rng = random.Random(2401)
    root = tempfile.mkdtemp(prefix="ds-lookup-")
    bkt = os.path.join(root, "bkt")
    os.makedirs(bkt)
    recs, limits_at = [], {}
    for s in range(NSHARD):
        shard = [rng.randbytes(rng.randint(60, 140)) for _ in range(NREC)]
        name = "p-%05d-of-%05d.bag" % (s, NSHARD)
        dstest.write_tail_bag(os.path.join(bkt, name), shard)
        size = os.path.getsize(os.path.join(bkt, name))
        limits_at["/bkt/" + name] = size - 8 * NREC  # tail limits: after the records
        recs.extend(shard)
    local = dstest.connect(BUILD)
    lpath = os.path.join(bkt, "p@%d.bag" % NSHARD)
    try:
        with Front(root) as s3:
            conn = dstest.connect(BUILD)
            url = s3.url("bkt/p@%d.bag" % NSHARD)
            conn.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s)" % dstest.sql_quote(url))
            local.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s)" % dstest.sql_quote(lpath))

            def run(ids, delay):
                s3.log.clear()
                s3.max_inflight = 0
                s3.always = {"delay": delay}
                q = ("SELECT rowid, record FROM temp.b WHERE rowid IN (%s)"
                     % ",".join(map(str, ids)))
                got = conn.execute(q).fetchall()
                s3.always = {}
                return got, local.execute(q).fetchall(), s3.requests()

            # -- sparse rows of every shard: fetched together --
            ids = []
            for s in range(NSHARD):  # rows >= 2,000 records (~200 KB) apart
                ids += [s * NREC + i for i in sorted(rng.sample(range(0, NREC, 2000), 12))]
            got, want, log = run(ids, 0.1)
            t.check(got == want and len(got) == len(ids), "sparse list over 4 shards: the rows "
                    "of the local read", (len(got), len(want)))
            per_shard = {}
            for r in log:
                if r[1] == "GET":
                    per_shard[r[2]] = per_shard.get(r[2], 0) + 1
            most = max(per_shard.values()) if per_shard else 0
            t.check(s3.max_inflight > most,
                    "sparse list: more GETs in flight at once (%d) than one shard makes (%d)"
                    % (s3.max_inflight, most))

            # -- 100 rows a shard: limits fetched once, no range twice --
            conn.execute("DROP TABLE temp.b")
            conn.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s)" % dstest.sql_quote(url))
            ids = []
            for s in range(NSHARD):
                ids += [s * NREC + i for i in sorted(rng.sample(range(NREC), 100))]
            got, want, log = run(ids, 0.02)
            t.check(got == want and len(got) == len(ids), "100 rows a shard: the rows of the "
                    "local read", (len(got), len(want)))
            gets = [(r[2], span(r[3])) for r in log if r[1] == "GET" and r[3] and
                    not r[3].startswith("bytes=-")]
            for name, at in sorted(limits_at.items()):
                lim = [g for p, g in gets if p == name and g[1] >= at]
                t.check(len(lim) == 1, "%s: its limits fetched once (%d GETs reach them)"
                        % (name[5:], len(lim)))
            t.check(len(gets) == len(set(gets)), "no range fetched twice",
                    (len(gets), len(set(gets))))
            conn.execute("DROP TABLE temp.b")

            # -- rows ~100 KB apart in one shard: their records in 1-2 GETs --
            conn.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s)" % dstest.sql_quote(url))
            ids = list(range(500, 20500, 1000))
            got, want, log = run(ids, 0.02)
            t.check(got == want and len(got) == len(ids), "rows ~100 KB apart: the rows of the "
                    "local read", (len(got), len(want)))
            name = "/bkt/p-00000-of-%05d.bag" % NSHARD
            first = sum(len(r) for r in recs[:ids[0]])
            last = sum(len(r) for r in recs[:ids[-1] + 1])
            rec_gets = [span(r[3]) for r in log if r[1] == "GET" and r[2] == name and r[3] and
                        not r[3].startswith("bytes=-") and span(r[3])[0] < limits_at[name]]
            t.check(1 <= len(rec_gets) <= 2, "rows ~100 KB apart: %d rows' records in %d GETs "
                    "(at most 2)" % (len(ids), len(rec_gets)), rec_gets)
            fetched = sum(b - a + 1 for a, b in rec_gets)
            t.check(fetched <= last - first, "rows ~100 KB apart: %d bytes of records fetched, "
                    "at most the %d from the first row's to the last's" % (fetched, last - first))
            conn.execute("DROP TABLE temp.b")

            # -- a set of 100 shards opened: one batch of probes --
            for i in range(100):
                dstest.write_tail_bag(os.path.join(bkt, "m-%05d-of-00100.bag" % i),
                                      [rng.randbytes(rng.randint(10, 200)) for _ in range(5 + i % 4)])
            q = "SELECT count(*), sum(length(record)) FROM bagz(%s)"
            s3.log.clear()
            s3.max_inflight = 0
            s3.always = {"delay": 0.1}
            got = conn.execute(q % dstest.sql_quote(s3.url("bkt/m@100.bag"))).fetchall()
            s3.always = {}
            want = local.execute(q % dstest.sql_quote(os.path.join(bkt, "m@100.bag"))).fetchall()
            t.check(got == want, "100 shards: the local answer", (got, want))
            shard_gets = {}
            for r in s3.requests("GET"):
                if r[2].startswith("/bkt/m-"):
                    shard_gets[r[2]] = shard_gets.get(r[2], 0) + 1
            t.check(len(shard_gets) == 100 and set(shard_gets.values()) == {1},
                    "100 shards: one GET each", (len(shard_gets), set(shard_gets.values())))
            t.check(s3.max_inflight > 32, "100 shards: %d probes in flight at once (more than "
                    "32 threads)" % s3.max_inflight)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
