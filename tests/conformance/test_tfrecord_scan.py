"""test_tfrecord_scan.py - the tfrecord table's two-thread scan
(formats/tfrecord/tfrecord_scan.c, threads=2, the default): a helper reads
windows of 256 KiB (up to 1 MiB for a large record) ahead and checks the
CRCs, the query's thread hands out the records, without a copy: values
SQLite keeps past their row (an aggregate's bare column from row 9 to the
end, min/max, a sorter, a join, a statement reset half-way) stay the
records. Over files written here (TensorFlow's framing with
python3-crc32c, several MiB, so that a scan spans many windows):
threads=2 gives the same rows as threads=1 and as written, for a full
scan, rowid ranges, a comma list of two files and shard = (shard
boundaries inside a scan), OFFSET and LIMIT, and a record larger than a
window; a data CRC and a length CRC damaged in the 3rd window (the length
one behind an .idx sidecar, so that only the scan finds it) fail with the
file, the record and the offset after the records before it are read, with
the message threads=1 gives; a file truncated while a scan reads it fails
naming the file and an offset, never crashing. threads=0 and 3 are refused.
Usage: test_tfrecord_scan.py BUILD_DIR"""
import os
import random
import shutil
import struct
import sys
import tempfile

import crc32c

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect, error_of, sql_quote  # noqa: E402

C = Checker()
WINDOW = 1 << 20


def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff


def frame(data):
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked(head)) + data + struct.pack("<I", masked(data))


def write(path, recs):
    """Write recs as a TFRecord file; the offset of each record's header."""
    offs, at = [], 0
    with open(path, "wb") as f:
        for r in recs:
            offs.append(at)
            b = frame(r)
            f.write(b)
            at += len(b)
    return offs


def records(seed, n, lo=20, hi=900):
    rng = random.Random(seed)
    return [bytes(rng.getrandbits(8) for _ in range(rng.randint(lo, hi))) for _ in range(n)]


def tvf(path, opts=""):
    return "tfrecord(%s%s)" % (sql_quote(path), ", " + sql_quote(opts) if opts else "")


def rows_until_error(conn, q):
    """(rows read, error message or None) of a query run to its end."""
    got = []
    try:
        for r in conn.execute(q):
            got.append(r)
        return got, None
    except Exception as e:  # sqlite3.Error
        return got, str(e)


def check_same_rows(conn, d):
    a = os.path.join(d, "a.tfrecord")
    b = os.path.join(d, "b.tfrecord")
    ra, rb = records(1, 12000), records(2, 7000)
    write(a, ra)
    write(b, rb)
    C.check(os.path.getsize(a) > 5 * WINDOW, "the file spans more than 5 windows",
            os.path.getsize(a))
    for t in ("1", "2"):
        got = [r[0] for r in conn.execute("SELECT record FROM %s" % tvf(a, "threads=" + t))]
        C.check(got == ra, "threads=%s: a full scan gives every record in order" % t,
                "%d rows" % len(got))
        got = conn.execute("SELECT rowid, record FROM %s WHERE rowid BETWEEN 1234 AND 9876"
                           % tvf(a, "threads=" + t)).fetchall()
        C.check(got == list(enumerate(ra))[1234:9877], "threads=%s: rowid BETWEEN" % t,
                "%d rows" % len(got))
        got = [r[0] for r in conn.execute("SELECT record FROM %s LIMIT 5000 OFFSET 3000"
                                          % tvf(a, "threads=" + t))]
        C.check(got == ra[3000:8000], "threads=%s: LIMIT 5000 OFFSET 3000" % t)
        spec = a + "," + b
        got = conn.execute("SELECT rowid, shard, shard_index, record FROM %s"
                           % tvf(spec, "threads=" + t)).fetchall()
        want = [(i, 0, i, r) for i, r in enumerate(ra)] + \
               [(len(ra) + i, 1, i, r) for i, r in enumerate(rb)]
        C.check(got == want, "threads=%s: a comma list of two files: rowid, shard, "
                "shard_index and record" % t, "%d rows" % len(got))
        got = conn.execute("SELECT rowid, shard_index, record FROM %s WHERE shard = 1"
                           % tvf(spec, "threads=" + t)).fetchall()
        C.check(got == [(len(ra) + i, i, r) for i, r in enumerate(rb)],
                "threads=%s: shard = 1" % t, "%d rows" % len(got))
        got = conn.execute("SELECT count(*), sum(length(record)) FROM %s WHERE rowid >= 10000"
                           % tvf(spec, "threads=" + t)).fetchone()
        C.eq(got, (len(ra) + len(rb) - 10000, sum(map(len, (ra + rb)[10000:]))),
             "threads=%s: count(*), sum(length(record)) across the shard boundary" % t)
    # a record larger than a window, in the middle of a scan
    big = os.path.join(d, "big.tfrecord")
    rbig = records(3, 6000)
    rbig[3000] = bytes(range(256)) * ((3 * WINDOW) // 512)
    write(big, rbig)
    got = [r[0] for r in conn.execute("SELECT record FROM %s" % tvf(big))]
    C.check(got == rbig, "a record of %d bytes (more than a window) inside a scan"
            % len(rbig[3000]), "%d rows" % len(got))


def check_held_values(conn, d):
    """The scan hands SQLite its windows' bytes without a copy; values
    SQLite keeps past the row (an aggregate's bare column, min/max, a
    sorter, a statement stopped half-way) must stay the records."""
    a = os.path.join(d, "held.tfrecord")
    ra = records(4, 12000)
    ra[7000] = bytes(range(256)) * 2400  # 600 KiB: more than a window's target
    write(a, ra)
    t = tvf(a)
    got = conn.execute("SELECT max(rowid * (rowid < 10)), record FROM %s" % t).fetchone()
    C.check(got == (9, ra[9]), "a bare column kept from row 9 through the whole scan "
            "is record 9", got[0] if got else None)
    got = conn.execute("SELECT max(length(record)), record FROM %s" % t).fetchone()
    longest = max(range(len(ra)), key=lambda i: (len(ra[i]), -i))
    C.check(got == (len(ra[longest]), ra[longest]),
            "max(length(record)) and its record (kept while the max changes)")
    got = conn.execute("SELECT min(record), max(record) FROM %s" % t).fetchone()
    C.check(got == (min(ra), max(ra)), "min(record), max(record)")
    got = [r[0] for r in conn.execute(
        "SELECT record FROM %s ORDER BY length(record) DESC, rowid LIMIT 50" % t)]
    want = [ra[i] for i in sorted(range(len(ra)), key=lambda i: (-len(ra[i]), i))[:50]]
    C.check(got == want, "ORDER BY length(record) DESC LIMIT 50 (a sorter keeps them)")
    got = conn.execute("SELECT count(*) FROM %s a JOIN (SELECT rowid AS r, record AS x "
                       "FROM %s WHERE rowid %% 1000 = 7) b ON a.rowid = b.r "
                       "WHERE a.record = b.x" % (t, t)).fetchone()
    C.eq(got, (12,), "a join of the scan with a subquery over the same file: "
         "the 12 records equal")
    held = []
    cur = conn.execute("SELECT record FROM %s" % t)
    for _ in range(5000):
        held.append(cur.fetchone()[0])
    cur.close()  # the statement reset half-way: SQLite lets go of the last value
    C.check(held == ra[:5000], "5,000 rows of a statement stopped half-way")
    got = conn.execute("SELECT count(*), sum(length(record)) FROM %s" % t).fetchone()
    C.eq(got, (len(ra), sum(map(len, ra))), "a scan after it")


def damage(path, at, xor=0x01):
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)[0]
        f.seek(at)
        f.write(bytes([b ^ xor]))


def check_named(conn, path, recs, offs, k, what, label):
    """Scan path with threads=2, then 1: the error names record k, its
    offset and `what`, after the records before it, and rowid < k reads
    those; the error of each threads value ({"2": ..., "1": ...})."""
    msgs = {}
    for t in ("2", "1"):
        got, err = rows_until_error(conn, "SELECT rowid, record FROM %s" % tvf(path, "threads=" + t))
        place = "tfrecord: %s: record %d at offset %d: %s" % (path, k, offs[k], what)
        C.check(err is not None and place in err, "threads=%s: %s is named" % (t, label), err)
        # (Python's sqlite3 steps one row ahead of the rows it hands out)
        C.check(k - 1 <= len(got) <= k and got == list(enumerate(recs))[:len(got)],
                "threads=%s: the records before it read" % t, "%d rows" % len(got))
        got = conn.execute("SELECT rowid, record FROM %s WHERE rowid < %d"
                           % (tvf(path, "threads=" + t), k)).fetchall()
        C.check(got == list(enumerate(recs))[:k],
                "threads=%s: rowid < %d reads the records before it" % (t, k),
                "%d rows" % len(got))
        msgs[t] = err
    return msgs


def check_damage(conn, d):
    recs = records(4, 15000)
    path = os.path.join(d, "data_crc.tfrecord")
    offs = write(path, recs)
    k = next(i for i, o in enumerate(offs) if o > 2 * WINDOW + 5000)  # the 3rd window
    damage(path, offs[k] + 12 + 3)  # a data byte: the data CRC fails
    msgs = check_named(conn, path, recs, offs, k, "data CRC mismatch",
                       "a bad data CRC in the 3rd window")
    C.eq(msgs["2"], msgs["1"], "threads=2 and 1 give the same error")
    # the length CRC, behind a sidecar (the index pass does not see it)
    path = os.path.join(d, "len_crc.tfrecord")
    offs = write(path, recs)
    with open(path + ".idx", "w") as f:
        for i, o in enumerate(offs):
            f.write("%d %d\n" % (o, len(recs[i]) + 16))
    k = next(i for i, o in enumerate(offs) if o > 2 * WINDOW + 70000)
    damage(path, offs[k] + 9)  # the length CRC
    check_named(conn, path, recs, offs, k, "length CRC mismatch",
                "a bad length CRC in the 3rd window (sidecar index)")
    # verify=false: the bad data CRC is not looked at, with the helper either
    path = os.path.join(d, "data_crc.tfrecord")
    got = [r[0] for r in conn.execute("SELECT record FROM %s" % tvf(path, "verify=false"))]
    C.eq(len(got), len(recs), "verify=false: every row of the damaged file")


def check_truncated(conn, d):
    recs = records(5, 30000)
    path = os.path.join(d, "shrinks.tfrecord")
    offs = write(path, recs)
    C.eq(conn.execute("SELECT count(*) FROM %s" % tvf(path)).fetchone()[0], len(recs),
         "indexed before it shrinks")
    conn.execute("CREATE VIRTUAL TABLE temp.s USING tfrecord(%s)" % sql_quote(path))
    cur = conn.execute("SELECT rowid, record FROM temp.s")
    got = [cur.fetchone() for _ in range(10)]
    cut = offs[len(offs) // 2]
    os.truncate(path, cut)
    err = None
    try:
        for r in cur:
            got.append(r)
    except Exception as e:  # sqlite3.Error
        err = str(e)
    C.check(err is not None and path in err and "offset" in err,
            "a file cut while scanned: the error names it and an offset", err)
    C.check(0 < len(got) <= len(offs) // 2 and got == list(enumerate(recs))[:len(got)],
            "the rows read before are the file's first records", "%d rows" % len(got))
    conn.execute("DROP TABLE temp.s")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    conn = connect(build)
    d = tempfile.mkdtemp(prefix="ds-tfscan-")
    try:
        C.run(check_same_rows, conn, d, name="same rows")
        C.run(check_held_values, conn, d, name="held values")
        C.run(check_damage, conn, d, name="damage")
        C.run(check_truncated, conn, d, name="truncated")
        path = os.path.join(d, "a.tfrecord")
        for bad in ("0", "3"):
            err = error_of(conn, "SELECT count(*) FROM %s" % tvf(path, "threads=" + bad))
            C.check(err is not None and "threads" in err, "threads=%s refused" % bad, err)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
