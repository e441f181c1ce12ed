"""test_tfrecord_table.py - the tfrecord table (vtab/tfrecord_vtab.c, read
side) over the fixtures of tests/fixtures/tfrecord/ (written by
make_fixtures.py with python3-crc32c, python3-protobuf and Python's gzip /
zlib) equals their expected/*.json: every record in order, by rowid in a
shuffled order, through LIMIT / OFFSET; the damaged files read their intact
records and then fail with "tfrecord: <file>: record <k> at offset <off>";
verify=false reads past a bad data CRC; a comma list numbers shard and
shard_index; compression given or detected; the .idx sidecar used or not.
Writing: an uncompressed copy is byte-identical to the fixture; gzip shards
by rows_per_shard read back (and Python's gzip agrees); TFRecord to bagz and
back is byte-identical; ROLLBACK publishes nothing; mode=create refuses an
existing file; a NULL record is refused.
Usage: test_tfrecord_table.py BUILD_DIR"""
import gzip
import json
import os
import random
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect, error_of, sql_quote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "tfrecord")
C = Checker()


def expected(name):
    with open(os.path.join(FIX, "expected", name + ".json")) as f:
        e = json.load(f)
    e["records"] = [bytes.fromhex(h) for h in e["records"]]
    return e


def tvf(path, opts=""):
    return "tfrecord(%s%s)" % (sql_quote(path), ", " + sql_quote(opts) if opts else "")


def check_fixture(conn, name):
    e = expected(name)
    path = os.path.join(FIX, name)
    recs = e["records"]
    for opts in ("", "compression=" + e["compression"]):
        q = "SELECT record FROM %s ORDER BY rowid" % tvf(path, opts)
        if e["error"] is None:
            got = [r[0] for r in conn.execute(q)]
            C.eq(got, recs, "%s (%s): every record in order" % (name, opts or "detected"))
        else:
            err = error_of(conn, q)
            place = "tfrecord: %s: record %d at offset %d" % (
                path, e["error"]["record"], e["error"]["offset"])
            C.check(err is not None and err.startswith(place) and e["error"]["what"] in err,
                    "%s (%s): the scan fails at the damaged record" % (name, opts or "detected"),
                    err)
            # the intact records, each by rowid
            got = [conn.execute("SELECT record FROM %s WHERE rowid = ?" % tvf(path, opts),
                                (i,)).fetchone()[0] for i in range(len(recs))]
            C.eq(got, recs, "%s (%s): the intact records read" % (name, opts or "detected"))
    # by rowid, shuffled (compressed files: backward jumps start again)
    order = list(range(len(recs)))
    random.Random(25).shuffle(order)
    got = {i: conn.execute("SELECT record FROM %s WHERE rowid = ?" % tvf(path), (i,)).fetchone()[0]
           for i in order}
    C.eq([got[i] for i in range(len(recs))], recs, "%s: by rowid, shuffled" % name)
    # one cursor going backwards (a gzip / zlib file starts again per row)
    got = [r[0] for r in conn.execute("SELECT record FROM %s WHERE rowid < ? ORDER BY rowid DESC"
                                      % tvf(path), (len(recs),))]
    C.eq(got, recs[::-1], "%s: ORDER BY rowid DESC" % name)
    if len(recs) > 6:
        got = [r[0] for r in conn.execute("SELECT record FROM %s LIMIT 3 OFFSET 4" % tvf(path))]
        C.eq(got, recs[4:7], "%s: LIMIT 3 OFFSET 4" % name)


def check_writing(conn, ex):
    plain = os.path.join(FIX, "examples.tfrecord")
    with open(plain, "rb") as f:
        plain_bytes = f.read()
    with tempfile.TemporaryDirectory(prefix="tfrecord-write-") as d:
        def table(name, spec, opts=""):
            conn.execute("CREATE VIRTUAL TABLE temp.%s USING tfrecord(%s, mode=create%s)"
                         % (name, sql_quote(os.path.join(d, spec)), opts))

        # an uncompressed copy (of the zlib file's records) is the fixture's bytes
        table("c", "copy.tfrecord")
        C.eq(conn.execute("SELECT count(*) FROM c").fetchone()[0], 0, "new table: no rows")
        conn.execute("INSERT INTO c(record) SELECT record FROM %s"
                     % tvf(os.path.join(FIX, "examples.zlib.tfrecord")))
        conn.commit()
        with open(os.path.join(d, "copy.tfrecord"), "rb") as f:
            C.check(f.read() == plain_bytes, "uncompressed copy is byte-identical")
        C.eq([r[0] for r in conn.execute("SELECT record FROM c ORDER BY rowid")], ex,
             "the writer's table reads what it published")
        # gzip shards of 5 rows: 3 files, read back, Python's gzip agrees
        table("g", "g@*.tfrecord", ", compression=gzip, rows_per_shard=5")
        conn.execute("INSERT INTO g(record) SELECT record FROM %s" % tvf(plain))
        conn.commit()
        names = sorted(f for f in os.listdir(d) if f.startswith("g-"))
        C.eq(names, ["g-0000%d-of-00003.tfrecord" % i for i in range(3)], "gzip: 3 shards")
        joined = b"".join(gzip.open(os.path.join(d, n)).read() for n in names)
        C.check(joined == plain_bytes, "gzip shards: Python's gzip gives the frames")
        C.eq([r[0] for r in conn.execute("SELECT record FROM %s ORDER BY rowid"
                                         % tvf(os.path.join(d, "g@*.tfrecord")))],
             ex, "gzip shards read back")
        # TFRecord -> bagz -> TFRecord
        conn.execute("CREATE VIRTUAL TABLE temp.b USING bagz(%s, mode=create)"
                     % sql_quote(os.path.join(d, "b.bagz")))
        conn.execute("INSERT INTO b(record) SELECT record FROM %s" % tvf(plain))
        conn.commit()
        table("back", "back.tfrecord")
        conn.execute("INSERT INTO back(record) SELECT record FROM bagz(%s)"
                     % sql_quote(os.path.join(d, "b.bagz")))
        conn.commit()
        with open(os.path.join(d, "back.tfrecord"), "rb") as f:
            C.check(f.read() == plain_bytes, "TFRecord -> bagz -> TFRecord is byte-identical")
        # ROLLBACK: nothing published
        table("r", "rolled.tfrecord")
        conn.execute("INSERT INTO r(record) VALUES (x'00')")  # opens a transaction
        conn.rollback()
        C.check(not os.path.exists(os.path.join(d, "rolled.tfrecord")), "ROLLBACK publishes nothing")
        # SAVEPOINT / ROLLBACK TO inside a transaction, then mode=replace
        table("s", "saved.tfrecord")
        conn.isolation_level = None  # the SQL below manages the transaction
        conn.execute("BEGIN")
        conn.execute("INSERT INTO s(record) SELECT record FROM %s WHERE rowid < 6" % tvf(plain))
        conn.execute("SAVEPOINT sp")
        conn.execute("INSERT INTO s(record) VALUES (x'dead')")
        conn.execute("ROLLBACK TO sp")
        conn.execute("RELEASE sp")
        conn.execute("INSERT INTO s(record) SELECT record FROM %s WHERE rowid >= 6" % tvf(plain))
        conn.execute("COMMIT")
        conn.isolation_level = ""
        with open(os.path.join(d, "saved.tfrecord"), "rb") as f:
            C.check(f.read() == plain_bytes, "ROLLBACK TO a savepoint: the file is the fixture")
        conn.execute("DROP TABLE temp.s")
        conn.execute("CREATE VIRTUAL TABLE temp.rp USING tfrecord(%s, mode=replace)"
                     % sql_quote(os.path.join(d, "saved.tfrecord")))
        conn.execute("INSERT INTO rp(record) VALUES (x'01'), (x'')")
        conn.commit()
        C.eq([r[0] for r in conn.execute("SELECT record FROM %s" % tvf(
            os.path.join(d, "saved.tfrecord")))], [b"\x01", b""], "mode=replace: the new records")
        conn.execute("DROP TABLE temp.rp")
        # a NULL record; mode=create over an existing file (its writer gone)
        err = error_of(conn, "INSERT INTO c(record) VALUES (NULL)")
        C.check(err is not None and "a record must be a BLOB or TEXT" in err,
                "a NULL record is refused", err)
        conn.rollback()
        for t in ("c", "g", "b", "back", "r"):
            conn.execute("DROP TABLE temp.%s" % t)
        err = error_of(conn, "CREATE VIRTUAL TABLE temp.x USING tfrecord(%s, mode=create)"
                       % sql_quote(os.path.join(d, "copy.tfrecord")))
        C.check(err is not None and "already exists" in err, "mode=create refuses an existing file",
                err)


def check_damaged_tail(conn, name):
    """A file whose records stop at a damaged or cut record (its index ends
    there, expected "indexed"): count(*), and any query stepping onto that record without
    reading a column, fails naming the file, record and offset; rowid < k
    counts and reads the k intact records."""
    e = expected(name)
    if e["error"] is None or e["indexed"] != e["error"]["record"]:
        return  # intact, or damaged where only reading the record finds it
    path = os.path.join(FIX, name)
    k = e["error"]["record"]
    place = "tfrecord: %s: record %d at offset %d" % (path, k, e["error"]["offset"])
    for q in ("SELECT count(*) FROM %s" % tvf(path),
              "SELECT count(*) FROM %s WHERE rowid >= %d" % (tvf(path), k),
              "SELECT shard_index FROM %s WHERE rowid = %d" % (tvf(path), k)):
        err = error_of(conn, q)
        C.check(err is not None and err.startswith(place) and e["error"]["what"] in err,
                "%s: %s fails at the damaged record" % (name, q.split(" FROM")[0]), err)
    C.eq(conn.execute("SELECT count(*) FROM %s WHERE rowid < %d" % (tvf(path), k))
         .fetchone()[0], k, "%s: count(*) WHERE rowid < %d" % (name, k))
    C.eq([r[0] for r in conn.execute("SELECT record FROM %s WHERE rowid < %d ORDER BY rowid"
                                     % (tvf(path), k))],
         e["records"], "%s: rowid < %d reads the intact records" % (name, k))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    conn = connect(build)
    names = sorted(f[:-5] for f in os.listdir(os.path.join(FIX, "expected")))
    for name in names:
        C.run(check_fixture, conn, name, name=name)
    ex = expected("examples.tfrecord")["records"]
    # count(*): the index only
    C.eq(conn.execute("SELECT count(*) FROM %s" % tvf(os.path.join(FIX, "examples.tfrecord")))
         .fetchone()[0], 12, "count(*)")
    for name in names:
        C.run(check_damaged_tail, conn, name, name=name + " tail")
    # max_value_bytes: a longer record is an error naming the file, record and offset
    e = expected("examples.tfrecord")["records"]
    small = min(range(len(e)), key=lambda i: (len(e[i]) > 16, -len(e[i])))
    big = max(range(len(e)), key=lambda i: len(e[i]))
    path = os.path.join(FIX, "examples.tfrecord")
    got = conn.execute("SELECT record FROM %s WHERE rowid = ?" % tvf(path, "max_value_bytes=16"),
                       (small,)).fetchone()
    C.eq(got and got[0], e[small], "max_value_bytes=16: a record of %d bytes reads" % len(e[small]))
    err = error_of(conn, "SELECT length(record) FROM %s WHERE rowid = %d"
                   % (tvf(path, "max_value_bytes=16"), big))
    C.check(err is not None and "max_value_bytes=16" in err and
            ("%s: record %d at offset" % (path, big)) in err,
            "max_value_bytes=16: a record of %d bytes is refused" % len(e[big]), err)
    # verify=false: the damaged data CRC is not looked at
    got = [r[0] for r in conn.execute("SELECT record FROM %s ORDER BY rowid" % tvf(
        os.path.join(FIX, "bad_data_crc.tfrecord"), "verify=false"))]
    C.eq(got, ex, "verify=false reads past a bad data CRC")
    # a comma list: shards numbered, rowids across them
    spec = ",".join(os.path.join(FIX, n) for n in
                    ("examples.tfrecord", "examples.gzip.tfrecord", "examples.zlib.tfrecord"))
    rows = conn.execute("SELECT rowid, shard, shard_index, record FROM %s ORDER BY rowid"
                        % tvf(spec)).fetchall()
    C.eq([r[0] for r in rows], list(range(36)), "comma list: rowids 0..35")
    C.eq([(r[1], r[2]) for r in rows], [(s, i) for s in range(3) for i in range(12)],
         "comma list: shard and shard_index")
    C.eq([r[3] for r in rows], ex * 3, "comma list: records")
    C.eq(conn.execute("SELECT count(*), min(rowid) FROM %s WHERE shard = 2" % tvf(spec))
         .fetchone(), (12, 24), "shard = 2")
    # the CREATE form, idx=true and false give the same rows
    for idx in ("true", "false"):
        conn.execute("DROP TABLE IF EXISTS temp.t")
        conn.execute("CREATE VIRTUAL TABLE temp.t USING tfrecord(%s, idx=%s)" % (
            sql_quote(os.path.join(FIX, "examples.tfrecord")), idx))
        C.eq([r[0] for r in conn.execute("SELECT record FROM t WHERE rowid BETWEEN 2 AND 9")],
             ex[2:10], "CREATE form, idx=%s: rowid BETWEEN 2 AND 9" % idx)
    C.run(check_writing, conn, ex, name="writing")
    # build/tfrecord.so alone: the module and tfexample_json
    one = sqlite3.connect(":memory:")
    one.enable_load_extension(True)
    one.load_extension(os.path.join(build, "tfrecord"))
    C.eq(one.execute("SELECT count(*), json_extract(tfexample_json(max(record)), '$.label[0]') "
                     "FROM %s WHERE rowid = 1" % tvf(os.path.join(FIX, "examples.gzip.tfrecord")))
         .fetchone(), (1, 1), "build/tfrecord.so: the module and tfexample_json")
    one.close()
    # refusals
    err = error_of(conn, "SELECT * FROM %s" % tvf(os.path.join(FIX, "examples.tfrecord"),
                                                  "compression=bz2"))
    C.check(err is not None and "compression" in err, "compression=bz2 refused", err)
    err = error_of(conn, "SELECT * FROM %s" % tvf(os.path.join(FIX, "nope.tfrecord")))
    C.check(err is not None and err.startswith("tfrecord: ") and "nope.tfrecord" in err,
            "a missing file is named", err)
    C.exit()


if __name__ == "__main__":
    main()
