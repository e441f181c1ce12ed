"""test_remote_write.py - writers with an s3:// target (issue 26): rows are
staged locally and published at COMMIT as multipart uploads completed in
order. Against the S3 front (folder mode, signatures checked by botocore)
and s3rver:
- every writer (bagz one file, name@N, name@* rows_per_shard, datadings,
  tfrecord, atlas, bcolz) writes objects byte-identical to the local
  writer's files for the same rows, read back equal through the extension
  and through botocore; a large bagz goes up in several parts, sent at
  once;
- ROLLBACK, a failed statement, a connection closed without COMMIT: no
  object under the target, no request that writes, no open upload;
- mode=create over an existing object is refused at CREATE, and again at
  COMMIT when one appears in between (the HEAD before publishing, and the
  If-None-Match: * of the complete when it appears after that HEAD);
- mode=replace of one object replaces it; of a sharded dataset that
  exists it is refused (mixed window) with nothing uploaded;
- a 503 on a part is retried; a 403 on the complete fails the COMMIT
  with the old object intact, no upload left open, the message naming
  the URL and the code and no secret;
- a complete whose answer is lost (the retry answered NoSuchUpload)
  succeeds when the object there is this upload's (multipart ETag, or
  the MD5 of the bytes as s3rver gives it);
- a writer SIGKILLed while its parts go up leaves the target unchanged
  and an open upload, which the next writer of the target aborts;
- http(s) targets are still refused.
Usage: test_remote_write.py BUILD_DIR"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dstest  # noqa: E402
from dstest import Checker, connect, error_of, sql_quote, tree  # noqa: E402
from remote_servers import S3rver, s3rver_bin  # noqa: E402
from s3_front import Front  # noqa: E402
from writer_proc import FORMATS, insert_sql  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_remote_write_")
SECRET = "front-secret-key"
ROWS = ["r%03d" % i for i in range(40)]
# the writers' local staging folders and lock files go here (children too)
STAGE = os.path.join(TMP, "stage")
os.makedirs(STAGE)
os.environ["TMPDIR"] = STAGE


def staging():
    """The remote writers' local staging folders now."""
    return sorted(f for f in os.listdir(STAGE) if f.startswith("ds-remote-stage."))

# (module, target name, options, insert columns and rows SQL)
CASES = [("bagz", "one.bagz", ""), ("bagz", "sh@3.bagz", ""),
         ("bagz", "auto@*.bagz", "rows_per_shard=15"), ("datadings", "d.msgpack", ""),
         ("atlas", "a.atlas", ""), ("bcolz", "b.bcolz", ""), ("tfrecord", "t.tfrecord", ""),
         ("tfrecord", "ts@2.tfrecord", "")]


def insert(module, rows, table="w"):
    if module == "tfrecord":
        return "INSERT INTO %s(record) VALUES %s" % (
            table, ", ".join("(CAST(%s AS BLOB))" % sql_quote(r) for r in rows))
    return insert_sql(module, rows, table)


def read_sql(module):
    if module == "tfrecord":
        return "SELECT CAST(record AS TEXT) FROM tfrecord(?)"
    return FORMATS[module][3]


def create(conn, module, path, mode="create", opts="", table="w"):
    conn.execute("CREATE VIRTUAL TABLE temp.%s USING %s(%s, mode=%s%s)"
                 % (table, module, sql_quote(path), mode, (", " + opts) if opts else ""))


def rows_of(module, spec):
    c = connect(BUILD)
    try:
        return sorted(r[0] for r in c.execute(read_sql(module), (spec,)))
    finally:
        c.close()


def writes(front):
    """The requests that write (PUT, POST, DELETE) the front saw."""
    return [r for r in front.requests() if r[1] in ("PUT", "POST", "DELETE")]


def env_for(endpoint, key, secret):
    for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        os.environ.pop(k, None)
    os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=key,
                      AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1",
                      AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")


def local_copy(module, name, opts, rows):
    """The local writer's files for rows: {relative path: bytes}."""
    d = tempfile.mkdtemp(dir=TMP)
    c = connect(BUILD)
    create(c, module, os.path.join(d, name), opts=opts)
    c.execute(insert(module, rows))
    c.commit()
    c.close()
    return tree(d)


def test_formats(front, bucket_dir):
    for module, name, opts in CASES:
        prefix = "fmt/%s_%s" % (module, name.replace("@", "_").replace("*", "x"))
        target = "s3://bkt/%s/%s" % (prefix, name)
        want = local_copy(module, name, opts, ROWS)
        c = connect(BUILD)
        create(c, module, target, opts=opts)
        c.execute(insert(module, ROWS))
        c.commit()
        got = tree(os.path.join(bucket_dir, prefix))
        C.eq(sorted(got), sorted(want), "%s %s: the objects are the local writer's file names"
             % (module, name))
        C.check(got == want, "%s %s: every object byte-identical to the local writer's file"
                % (module, name))
        C.eq(sorted(r[0] for r in c.execute("SELECT * FROM (%s)" % read_sql(module).replace(
            "(?)", "(%s)" % sql_quote(target)))), sorted(ROWS),
             "%s %s: the writer's connection reads the published rows" % (module, name))
        c.close()
        C.eq(rows_of(module, target), sorted(ROWS), "%s %s: a fresh connection reads them"
             % (module, name))
        C.eq(front.uploads, {}, "%s %s: no upload left open" % (module, name))


def test_big(front, bucket_dir):
    """A bagz of ~12 MiB goes up in 2 parts of <= 8 MiB, both on their way
    at once; the object is the local file's bytes."""
    src = os.path.join(TMP, "big.bagz")
    c = connect(BUILD)
    create(c, "bagz", src)
    c.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 190) "
              "INSERT INTO w(record) SELECT randomblob(65536) FROM s")
    c.commit()
    c.close()
    before = len(front.requests())
    # each part held 3 s by the front: sent one after another, they never
    # overlap (the first goes during the INSERT, the second at COMMIT)
    front.match_faults = [("PUT", "partNumber", {"delay": 3}),
                          ("PUT", "partNumber", {"delay": 3})]
    front.max_inflight = 0
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/big/big.bagz")
    c.execute("INSERT INTO w(record) SELECT record FROM bagz(?)", (src,))
    c.commit()
    c.close()
    front.match_faults = []
    parts = [r for r in front.requests()[before:] if r[1] == "PUT"]
    C.eq(len(parts), 2, "a 12 MiB object: 2 part uploads")
    C.eq(front.max_inflight, 2, "... both on their way at once (several parts in flight)")
    C.check(open(os.path.join(bucket_dir, "big", "big.bagz"), "rb").read() ==
            open(src, "rb").read(), "the 12 MiB object is byte-identical to the local file")


def big_source(n):
    """A local bag of n records of 64 KiB (random bytes), made once."""
    src = os.path.join(TMP, "src%d.bag" % n)  # .bag: not compressed
    if not os.path.exists(src):
        c = connect(BUILD)
        create(c, "bagz", src)
        c.execute("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "
                  "INSERT INTO w(record) SELECT randomblob(65536) FROM s" % n)
        c.commit()
        c.close()
    return src


def parts(front, since):
    """The part uploads (PUT ...?partNumber) the front answered since
    request number `since`, by object path."""
    out = {}
    for r in front.requests()[since:]:
        if r[1] == "PUT" and r[5] == 200:
            out[r[2]] = out.get(r[2], 0) + 1
    return out


def test_early(front, bucket_dir):
    """A big staged file whose name is known goes up in parts while the
    INSERT runs (one bagz, name@N with rows_per_shard, datadings): parts
    are sent before COMMIT, nothing is visible under the target, COMMIT
    sends only the rest, and the objects are the local writer's bytes.
    A savepoint rolled back below sent parts sends them again; ROLLBACK
    and a close without COMMIT abort the upload."""
    src = big_source(400)  # 25 MiB: 3 whole parts and a tail
    cases = [("bagz", "one.bagz", "", "INSERT INTO w(record) SELECT record FROM bagz(%s)"),
             ("bagz", "sh@2.bagz", "rows_per_shard=200",
              "INSERT INTO w(record) SELECT record FROM bagz(%s)"),
             ("datadings", "d.msgpack", "",
              "INSERT INTO w(key, raw) SELECT printf('k%%05d', rowid), "
              "CAST(record AS BLOB) FROM bagz(%s)")]
    for module, name, opts, sql in cases:
        if module == "datadings":  # raw must be msgpack: a bin of the record
            sql = ("INSERT INTO w(key, sample) SELECT printf('k%%05d', rowid), "
                   "json_object('v', hex(substr(record, 1, 40000))) FROM bagz(%s)")
        prefix = "early/%s_%s" % (module, name.replace("@", "_"))
        d = tempfile.mkdtemp(dir=TMP)
        c = connect(BUILD)
        create(c, module, os.path.join(d, name), opts=opts)
        c.execute(sql % sql_quote(src))
        c.commit()
        c.close()
        want = tree(d)
        before = len(front.requests())
        c = connect(BUILD)
        c.isolation_level = None
        create(c, module, "s3://bkt/%s/%s" % (prefix, name), opts=opts)
        c.execute("BEGIN")
        c.execute(sql % sql_quote(src))
        # the helpers send what is final; give them a bounded moment
        for _ in range(100):
            if sum(parts(front, before).values()) >= 2 * (1 if name != "sh@2.bagz" else 2):
                break
            time.sleep(0.1)
        early = parts(front, before)
        C.check(sum(early.values()) >= 2, "%s %s: parts went up during the INSERT" % (module, name),
                early)
        C.check(not os.path.exists(os.path.join(bucket_dir, prefix)),
                "%s %s: ... and nothing is visible under the target before COMMIT"
                % (module, name))
        C.check(len(front.uploads) >= 1, "%s %s: ... an upload is open" % (module, name))
        c.execute("COMMIT")
        c.close()
        sent = parts(front, before)
        got = tree(os.path.join(bucket_dir, prefix))
        C.check(got == want, "%s %s: the objects are the local writer's bytes" % (module, name),
                sorted(got))
        need = {("/bkt/%s/%s" % (prefix, k)): max(1, (len(v) + (8 << 20) - 1) // (8 << 20))
                for k, v in want.items()}
        C.eq({k: v for k, v in sent.items() if k in need}, need,
             "%s %s: each part sent once (those of the INSERT not again at COMMIT)"
             % (module, name))
        C.eq(front.uploads, {}, "%s %s: no upload left open" % (module, name))
    # a savepoint rolled back below sent parts: they go again, the object is right
    src2 = big_source(401)
    d = tempfile.mkdtemp(dir=TMP)
    c = connect(BUILD)
    create(c, "bagz", os.path.join(d, "sp.bagz"))
    c.execute("INSERT INTO w(record) SELECT record FROM bagz(?) WHERE rowid < 150", (src,))
    c.execute("INSERT INTO w(record) VALUES ('tail')")
    c.commit()
    c.close()
    before = len(front.requests())
    c = connect(BUILD)
    c.isolation_level = None
    create(c, "bagz", "s3://bkt/early/sp.bagz")
    c.execute("BEGIN")
    c.execute("INSERT INTO w(record) SELECT record FROM bagz(?) WHERE rowid < 150", (src,))
    c.execute("SAVEPOINT s")
    c.execute("INSERT INTO w(record) SELECT record FROM bagz(?)", (src2,))
    for _ in range(100):  # part 2 (bytes 8-16 MiB, past the savepoint) sent
        if sum(parts(front, before).values()) >= 2:
            break
        time.sleep(0.1)
    c.execute("ROLLBACK TO s")
    c.execute("INSERT INTO w(record) VALUES ('tail')")
    c.execute("COMMIT")
    c.close()
    C.check(open(os.path.join(bucket_dir, "early", "sp.bagz"), "rb").read() ==
            open(os.path.join(d, "sp.bagz"), "rb").read(),
            "a savepoint rolled back below sent parts: the object is the local writer's bytes")
    C.check(sum(parts(front, before).values()) > 2,
            "... its 2 parts took more than 2 part uploads (the cut one went again)",
            parts(front, before))
    C.eq(front.uploads, {}, "... no upload left open")
    # ROLLBACK, and a close without COMMIT, after parts went up
    for how in ("rollback", "close"):
        before = len(front.requests())
        c = connect(BUILD)
        c.isolation_level = None
        create(c, "bagz", "s3://bkt/early/%s.bagz" % how)
        c.execute("BEGIN")
        c.execute("INSERT INTO w(record) SELECT record FROM bagz(?)", (src,))
        for _ in range(100):
            if parts(front, before):
                break
            time.sleep(0.1)
        C.check(parts(front, before), "%s: parts went up during the INSERT" % how)
        if how == "rollback":
            c.execute("ROLLBACK")
        c.close()
        C.check(not os.path.exists(os.path.join(bucket_dir, "early", how + ".bagz")),
                "%s: no object under the target" % how)
        C.eq(front.uploads, {}, "%s: the upload is aborted" % how)


def test_not_published(front, bucket_dir):
    for how in ("rollback", "failed statement", "close"):
        target = "s3://bkt/np/%s.bagz" % how.replace(" ", "_")
        before = len(writes(front))
        c = connect(BUILD)
        c.isolation_level = None
        create(c, "bagz", target)
        if how == "rollback":
            c.execute("BEGIN")
            c.execute(insert("bagz", ROWS))
            c.execute("ROLLBACK")
        elif how == "failed statement":
            e = error_of(c, "INSERT INTO w(record) VALUES ('a'), (NULL)")
            C.check(e is not None, "%s: the statement failed" % how, e)
        else:
            c.execute("BEGIN")
            c.execute(insert("bagz", ROWS))
        c.close()
        C.check(not os.path.exists(os.path.join(bucket_dir, "np", how.replace(" ", "_") + ".bagz")),
                "%s: no object under the target" % how)
        C.eq(writes(front)[before:], [], "%s: no request wrote anything" % how)
        C.eq(front.uploads, {}, "%s: no upload open" % how)


def test_create_refused(front, bucket_dir):
    os.makedirs(os.path.join(bucket_dir, "cr"), exist_ok=True)
    old = os.path.join(bucket_dir, "cr", "there.bagz")
    shutil.copy(os.path.join(TMP, "big.bagz"), old)
    oldb = open(old, "rb").read()
    c = connect(BUILD)
    e = error_of(c, "CREATE VIRTUAL TABLE temp.w USING bagz('s3://bkt/cr/there.bagz', mode=create)")
    C.check(e and "s3://bkt/cr/there.bagz" in e and "already exists" in e,
            "mode=create over an existing object: refused at CREATE", e)
    # appears between CREATE and COMMIT: the check before publishing
    create(c, "bagz", "s3://bkt/cr/late.bagz")
    c.execute(insert("bagz", ROWS))
    shutil.copy(old, os.path.join(bucket_dir, "cr", "late.bagz"))
    e = error_of(c, "COMMIT")
    C.check(e and "s3://bkt/cr/late.bagz" in e and "appeared after CREATE" in e,
            "an object appeared after CREATE: the COMMIT is refused", e)
    C.check(open(os.path.join(bucket_dir, "cr", "late.bagz"), "rb").read() == oldb,
            "... and the object that appeared is unchanged")
    c.close()
    C.eq(front.uploads, {}, "no upload left open")
    # appears after that check, before the complete: If-None-Match: *
    for conditional in (True, False):
        name = "race%d.bagz" % conditional
        path = os.path.join(bucket_dir, "cr", name)
        front.conditional = conditional
        front.before_complete = lambda rel, p=path: shutil.copy(old, p) and None
        c = connect(BUILD)
        create(c, "bagz", "s3://bkt/cr/" + name)
        c.execute(insert("bagz", ROWS))
        e = error_of(c, "COMMIT")
        front.before_complete = None
        if conditional:
            # SQLite drops an xCommit's error: the table's next statement has it
            C.eq(e, None, "COMMIT returns (SQLite drops the error of its last step)")
            e = error_of(c, insert("bagz", ROWS[:1]))
            C.check(e and "PreconditionFailed" in e and "412" in e and name in e,
                    "appeared just before the complete: If-None-Match refuses it (412)", e)
            C.check(open(path, "rb").read() == oldb, "... and that object is unchanged")
        else:
            # a server that ignores If-None-Match (s3rver) overwrites: documented
            C.check(e is None and open(path, "rb").read() != oldb,
                    "a server ignoring If-None-Match: the complete overwrites (documented)", e)
        c.close()
    front.conditional = True


def test_replace(front, bucket_dir):
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/rp/one.bagz")
    c.execute(insert("bagz", ROWS[:5]))
    c.commit()
    c.close()
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/rp/one.bagz", mode="replace")
    c.execute(insert("bagz", ROWS[5:12]))
    c.commit()
    c.close()
    C.eq(rows_of("bagz", "s3://bkt/rp/one.bagz"), sorted(ROWS[5:12]),
         "mode=replace of one object: the new rows")
    # a sharded dataset that exists: refused, nothing uploaded
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/rp/sh@2.bagz")
    c.execute(insert("bagz", ROWS[:6]))
    c.commit()
    c.close()
    old = tree(os.path.join(bucket_dir, "rp"))
    before = len(writes(front))
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/rp/sh@2.bagz", mode="replace")
    c.execute(insert("bagz", ROWS[6:9]))
    e = error_of(c, "COMMIT")
    C.check(e and "mixed" in e and "new name or prefix" in e and "sh-0000" in e,
            "replacing an existing sharded dataset is refused, saying why and what to do", e)
    c.close()
    C.check(tree(os.path.join(bucket_dir, "rp")) == old, "... the old objects unchanged")
    C.eq(writes(front)[before:], [], "... and nothing was uploaded")


def test_second_commit(front, bucket_dir):
    """A writer table that COMMITs twice: one object is replaced by the
    old and the new rows (read back from the object); a sharded dataset is
    refused at the second COMMIT (its shards would change one at a time)."""
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/two/one.bagz")
    c.execute(insert("bagz", ROWS[:5]))
    c.commit()
    c.execute(insert("bagz", ROWS[5:8]))
    c.commit()
    C.eq(sorted(r[0] for r in c.execute("SELECT CAST(record AS TEXT) FROM w")), sorted(ROWS[:8]),
         "a second COMMIT of one object: the writer's table has every row")
    c.close()
    C.eq(rows_of("bagz", "s3://bkt/two/one.bagz"), sorted(ROWS[:8]),
         "... and so has the object")
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/two/sh@2.bagz")
    c.execute(insert("bagz", ROWS[:4]))
    c.commit()
    old = tree(os.path.join(bucket_dir, "two"))
    c.execute(insert("bagz", ROWS[4:6]))
    e = error_of(c, "COMMIT")
    C.check(e and "mixed" in e and "sh-0000" in e,
            "a second COMMIT of a sharded dataset is refused (mixed window)", e)
    c.close()
    C.check(tree(os.path.join(bucket_dir, "two")) == old, "... and its objects are unchanged")
    C.eq(front.uploads, {}, "... no upload left open")


def test_faults(front, bucket_dir):
    # a 503 on the first part: retried
    front.match_faults = [("PUT", "partNumber", {"status": 503, "retry_after": 0})]
    before = len(front.requests())
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/ft/retry.bagz")
    c.execute(insert("bagz", ROWS))
    c.commit()
    c.close()
    puts = [r[5] for r in front.requests()[before:] if r[1] == "PUT"]
    C.eq(puts, [503, 200], "a 503 on a part: the part is sent again")
    C.eq(rows_of("bagz", "s3://bkt/ft/retry.bagz"), sorted(ROWS), "... and the object is whole")
    # a 403 on the complete of a replace: the old object stays
    oldb = open(os.path.join(bucket_dir, "ft", "retry.bagz"), "rb").read()
    front.match_faults = [("POST", "uploadId", {"status": 403})]
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/ft/retry.bagz", mode="replace")
    c.execute(insert("bagz", ROWS[:3]))
    C.eq(error_of(c, "COMMIT"), None, "COMMIT returns (SQLite drops the error of its last step)")
    e = error_of(c, insert("bagz", ROWS[:1]))
    C.check(e and "s3://bkt/ft/retry.bagz" in e and "403" in e and "nothing was published" in e,
            "a 403 on the complete fails the COMMIT naming the URL and status", e)
    C.check(SECRET not in (e or "") and "AKFRONT" not in (e or ""), "... and no key in it")
    c.close()
    C.check(open(os.path.join(bucket_dir, "ft", "retry.bagz"), "rb").read() == oldb,
            "... the old object intact")
    C.eq(front.uploads, {}, "... no upload left open")
    front.match_faults = []


def test_commit_point_fails(front, bucket_dir):
    """The commit point's complete fails (the connection drops, every
    try): the shards completed at xSync are deleted again, nothing stays
    open, and the table's next statement says so. Again with the first
    DELETE answered 404 (not there: fine; it crashed on a NULL error
    pointer before)."""
    for k, faults in enumerate(([], [("DELETE", "", {"status": 404})])):
        prefix = "cp%d" % k
        front.before_complete = lambda rel: rel.endswith("-00000-of-00003.bagz")
        front.match_faults = list(faults)
        c = connect(BUILD)
        create(c, "bagz", "s3://bkt/%s/c@3.bagz" % prefix, opts="retries=1")
        c.execute(insert("bagz", ROWS))
        C.eq(error_of(c, "COMMIT"), None, "%d: COMMIT returns (SQLite drops the error)" % k)
        front.before_complete = None
        e = error_of(c, insert("bagz", ROWS[:1]))
        C.check(e and "nothing was published" in e and "c-00000-of-00003.bagz" in e,
                "%d: the next statement says the COMMIT published nothing" % k, e)
        c.close()
        left = sorted(os.listdir(os.path.join(bucket_dir, prefix))) \
            if os.path.isdir(os.path.join(bucket_dir, prefix)) else []
        C.check(left == [] if k == 0 else
                left in (["c-00001-of-00003.bagz"], ["c-00002-of-00003.bagz"]),
                "%d: the shards completed at xSync are deleted again (but the one whose "
                "DELETE the server answered 404)" % k, left)
        C.eq(front.uploads, {}, "%d: no upload left open" % k)
    front.match_faults = []


def test_lost_complete(front, bucket_dir):
    """The answer to a CompleteMultipartUpload is lost (the front completes
    it, then drops the connection): the retry is answered NoSuchUpload,
    and the object now there is this upload's (by S3's multipart ETag, or
    by the MD5 of the staged bytes as s3rver gives it): the COMMIT
    succeeds. A NoSuchUpload with no such object still fails it."""
    want = local_copy("bagz", "l@2.bagz", "", ROWS)
    for k, s3_etags in enumerate((True, False)):
        front.s3_etags = s3_etags
        front.match_faults = [("POST", "uploadId", {"reset": True})]
        before = len(front.requests())
        c = connect(BUILD)
        create(c, "bagz", "s3://bkt/lc%d/l@2.bagz" % k)
        c.execute(insert("bagz", ROWS))
        e = error_of(c, "COMMIT")
        C.eq(e, None, "(%d) a complete whose answer was lost: the COMMIT succeeds" % k)
        e = error_of(c, insert("bagz", ROWS[:1]))
        C.eq(e, None, "(%d) ... and the next statement reports no error" % k)
        c.close()
        completes = [r[5] for r in front.requests()[before:]
                     if r[1] == "POST" and r[5] is not None]
        C.check(404 in completes, "(%d) ... the retried complete was answered NoSuchUpload"
                % k, completes)
        C.check(tree(os.path.join(bucket_dir, "lc%d" % k)) == want,
                "(%d) ... the objects are the local writer's bytes" % k)
        C.eq(rows_of("bagz", "s3://bkt/lc%d/l@2.bagz" % k), sorted(ROWS),
             "(%d) ... and read back" % k)
        C.eq(front.uploads, {}, "(%d) ... no upload left open" % k)
    front.s3_etags = False
    # NoSuchUpload and no object of ours there: the COMMIT fails
    front.match_faults = [("POST", "uploadId", {"status": 404})]
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/lc2/l@2.bagz")
    c.execute(insert("bagz", ROWS))
    e = error_of(c, "COMMIT")
    C.check(e and "404" in e and "s3://bkt/lc2/l-0000" in e,
            "a complete answered 404 with no object of ours there fails the COMMIT", e)
    c.close()
    C.check(not os.path.isdir(os.path.join(bucket_dir, "lc2")) or
            os.listdir(os.path.join(bucket_dir, "lc2")) == [], "... and nothing is published")
    C.eq(front.uploads, {}, "... no upload left open")
    front.match_faults = []


def test_killed(front, bucket_dir):
    """SIGKILL while a part goes up (the front holds it 5 s): the target
    is unchanged, one upload open; the next writer aborts it."""
    front.match_faults = [("PUT", "partNumber", {"delay": 5})]
    script = ("import sqlite3, sys\n"
              "c = sqlite3.connect(':memory:')\n"
              "c.enable_load_extension(True)\n"
              "c.load_extension(%r)\n"
              "c.execute(\"CREATE VIRTUAL TABLE temp.w USING bagz('s3://bkt/kl/k.bagz', "
              "mode=create)\")\n"
              "c.execute(%r)\n"
              "c.commit()\n") % (os.path.join(BUILD, "datasets"), insert("bagz", ROWS))
    C.eq(staging(), [], "no staging folder left by the writers closed so far")
    before = len(front.requests())
    p = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)
    for _ in range(200):  # at most 10 s for the part to arrive
        if any(r[1] == "PUT" for r in front.requests()[before:]):
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    C.eq(p.returncode, -9, "the writer was killed mid-upload")
    C.check(not os.path.exists(os.path.join(bucket_dir, "kl", "k.bagz")),
            "killed mid-upload: nothing under the target")
    C.eq([u["key"] for u in front.uploads.values()], ["bkt/kl/k.bagz"],
         "killed mid-upload: its upload is left open")
    C.eq(len(staging()), 1, "killed mid-upload: its local staging folder is left")
    front.match_faults = []
    c = connect(BUILD)
    create(c, "bagz", "s3://bkt/kl/k.bagz")
    c.execute(insert("bagz", ROWS[:4]))
    c.commit()
    c.close()
    C.eq(front.uploads, {}, "the next writer aborted the upload the killed one left")
    C.eq(staging(), [], "... and deleted the staging folder it left")
    C.eq(rows_of("bagz", "s3://bkt/kl/k.bagz"), sorted(ROWS[:4]), "... and published its rows")


def writer_child(target, rows, opts="", commit=True):
    """A python3 child that writes rows to target and commits (or, with
    commit=False, waits 60 s after its INSERT: to be killed before COMMIT)."""
    script = ("import sqlite3, time\n"
              "c = sqlite3.connect(':memory:')\n"
              "c.enable_load_extension(True)\n"
              "c.load_extension(%r)\n"
              "c.execute(%r)\n"
              "%sc.execute(%r)\n"
              "%s\n") % (os.path.join(BUILD, "datasets"),
                         "CREATE VIRTUAL TABLE temp.w USING bagz(%s, mode=create%s)"
                         % (sql_quote(target), opts),
                         # (python's sqlite3 opens no transaction before a
                         # statement that starts with WITH: it would
                         # autocommit, and publish)
                         "" if commit else "c.execute('BEGIN')\n", rows,
                         "c.commit()" if commit else "time.sleep(60)")
    return subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE)


def test_killed_in_commit(front, bucket_dir):
    """SIGKILL while the commit point's complete is on its way: the other
    shards are out but not shard 0, so the set is unreadable (an error,
    never rows); mode=create then refuses it, mode=replace overwrites it
    (its commit point is missing) and aborts the upload left open."""
    box = {}

    def kill_at_commit_point(rel):
        if rel.endswith("-00000-of-00003.bagz"):
            box["p"].send_signal(signal.SIGKILL)
            box["p"].wait(timeout=30)
            return True
        return False

    front.before_complete = kill_at_commit_point
    box["p"] = writer_child("s3://bkt/kc/k@3.bagz", insert("bagz", ROWS))
    try:
        box["p"].wait(timeout=60)
    finally:
        front.before_complete = None
    C.eq(box["p"].returncode, -9, "the writer was killed at the commit point's complete")
    C.eq(sorted(os.listdir(os.path.join(bucket_dir, "kc"))),
         ["k-00001-of-00003.bagz", "k-00002-of-00003.bagz"],
         "killed in COMMIT: shards 1 and 2 are out, not shard 0 (the commit point)")
    e = error_of(connect(BUILD), "SELECT count(*) FROM bagz('s3://bkt/kc/k@3.bagz')")
    C.check(e and "k-00000-of-00003.bagz" in e, "... the set is unreadable, never a mix", e)
    C.eq(len(front.uploads), 1, "... the commit point's upload is left open")
    c = connect(BUILD)
    e = error_of(c, "CREATE VIRTUAL TABLE temp.w USING bagz('s3://bkt/kc/k@3.bagz', mode=create)")
    C.check(e and "already exists" in e, "mode=create refuses the leftovers", e)
    create(c, "bagz", "s3://bkt/kc/k@3.bagz", mode="replace")
    c.execute(insert("bagz", ROWS[:9]))
    c.commit()
    C.eq(error_of(c, insert("bagz", ROWS[:1])), None, "mode=replace over a set without its "
         "commit point: published")
    c.close()
    C.eq(rows_of("bagz", "s3://bkt/kc/k@3.bagz"), sorted(ROWS[:9]), "... its rows read back")
    C.eq(front.uploads, {}, "... and the upload the killed writer left is aborted")


def test_killed_in_insert(front, bucket_dir):
    """SIGKILL at 3 random instants of a large INSERT (the child never
    reaches COMMIT: on an idle machine the INSERT may end before the kill,
    and a COMMIT would then publish): nothing written."""
    import random
    rows = ("WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 200000) "
            "INSERT INTO w(record) SELECT randomblob(100) FROM s")
    for k in range(3):
        before = len(front.requests())
        p = writer_child("s3://bkt/ki/k%d.bagz" % k, rows, commit=False)
        time.sleep(random.uniform(0.05, 0.6))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        # parts may have gone up (a multipart upload, never completed; the
        # last part maybe cut off by the kill): nothing deleted
        C.eq([r for r in front.requests()[before:] if r[1] == "DELETE"], [],
             "killed at a random instant of an INSERT (%d): nothing deleted" % k)
        C.check(not os.path.exists(os.path.join(bucket_dir, "ki", "k%d.bagz" % k)),
                "(%d) ... and no object exists" % k)
    # the next writer of each target aborts what the killed one left open
    for k in range(3):
        c = connect(BUILD)
        create(c, "bagz", "s3://bkt/ki/k%d.bagz" % k)
        c.execute(insert("bagz", ROWS[:2]))
        c.commit()
        c.close()
        C.eq(rows_of("bagz", "s3://bkt/ki/k%d.bagz" % k), sorted(ROWS[:2]),
             "(%d) the next writer publishes its rows" % k)
    C.eq(front.uploads, {}, "... and no upload is left open after the next writers")


def test_killed_random_commit(front, bucket_dir):
    """SIGKILL at 4 random instants of the COMMIT of a 3-shard create
    (every request held 30 ms so that the COMMIT takes a while): a fresh
    reader gets all the rows or an error, never some of them; then a
    writer with mode=replace publishes over what is not a whole set (or is
    refused over a whole one), and no upload is left open."""
    import random
    rows = ROWS[:30]
    for k in range(4):
        target = "s3://bkt/kr%d/k@3.bagz" % k
        front.always = {"delay": 0.03}
        script = ("import sqlite3, sys\n"
                  "c = sqlite3.connect(':memory:')\n"
                  "c.enable_load_extension(True)\n"
                  "c.load_extension(%r)\n"
                  "c.execute(\"CREATE VIRTUAL TABLE temp.w USING bagz('%s', mode=create)\")\n"
                  "c.execute(%r)\n"
                  "sys.stdout.write('commit\\n'); sys.stdout.flush()\n"
                  "c.commit()\n") % (os.path.join(BUILD, "datasets"), target,
                                     insert("bagz", rows))
        p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdout.readline()  # the COMMIT starts now
        time.sleep(random.uniform(0.0, 0.5))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        front.always = {}
        # a request the front had whole before the kill still completes
        # (the set may become whole after the kill): read once it has
        C.check(front.quiesce(), "(%d) the front is idle after the kill" % k)
        c = connect(BUILD)
        try:
            got = sorted(r[0] for r in c.execute(read_sql("bagz"), (target,)))
        except Exception as e:  # noqa: BLE001 - an error is an allowed answer
            got = "error: %s" % e
        c.close()
        C.check(got == sorted(rows) or str(got).startswith("error"),
                "killed at a random instant of COMMIT (%d): all rows or an error" % k,
                str(got)[:200])
        whole = got == sorted(rows)
        c = connect(BUILD)
        create(c, "bagz", target, mode="replace")
        c.execute(insert("bagz", ROWS[30:33]))
        e = error_of(c, "COMMIT")
        if whole:  # killed after its COMMIT: a whole set is not replaced
            C.check(e and "mixed" in e, "(%d) the next writer may not replace the whole set"
                    % k, e)
            want = sorted(rows)
        else:
            C.eq((e, error_of(c, insert("bagz", ROWS[:1]))), (None, None),
                 "(%d) the next writer (mode=replace) publishes" % k)
            want = sorted(ROWS[30:33])
        c.close()
        C.eq(rows_of("bagz", target), want, "(%d) ... the rows read back" % k)
        C.eq(front.uploads, {}, "(%d) ... and no upload is left open" % k)


def test_endpoint_option(front, bucket_dir):
    """endpoint= of the writer table is what the uploads use (the
    environment's endpoint is a closed port here)."""
    good = os.environ["AWS_ENDPOINT_URL"]
    os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
    try:
        c = connect(BUILD)
        create(c, "bagz", "s3://bkt/opt/e@2.bagz", opts="endpoint=" + sql_quote(good))
        c.execute(insert("bagz", ROWS))
        c.commit()
        e = error_of(c, insert("bagz", ROWS[:1]))
        C.eq(e, None, "endpoint= on a writer: the COMMIT published (no error after it)")
        c.close()
    finally:
        os.environ["AWS_ENDPOINT_URL"] = good
    C.eq(sorted(os.listdir(os.path.join(bucket_dir, "opt"))) if os.path.isdir(
        os.path.join(bucket_dir, "opt")) else [],
         ["e-00000-of-00002.bagz", "e-00001-of-00002.bagz"],
         "endpoint= on a writer: its objects went to that endpoint")


def test_gs(front, bucket_dir):
    """gs:// (Cloud Storage's XML API, HMAC keys) goes through the same
    path: a sharded bagz, byte-identical to the local writer's."""
    os.environ.update(GS_ENDPOINT_URL="http://127.0.0.1:%d" % front.port,
                      GS_ACCESS_KEY_ID="AKFRONT", GS_SECRET_ACCESS_KEY=SECRET)
    want = local_copy("bagz", "g@2.bagz", "", ROWS)
    c = connect(BUILD)
    create(c, "bagz", "gs://bkt/gs/g@2.bagz")
    c.execute(insert("bagz", ROWS))
    c.commit()
    c.close()
    C.check(tree(os.path.join(bucket_dir, "gs")) == want,
            "gs://: the objects are byte-identical to the local writer's files")
    C.eq(rows_of("bagz", "gs://bkt/gs/g@2.bagz"), sorted(ROWS), "gs://: read back")
    C.eq(front.uploads, {}, "gs://: no upload left open")


def test_two_writers(front, bucket_dir):
    """Two writers of one s3:// target on this machine: the second is
    refused while the first is open (a lock file per target URL under
    $TMPDIR); once it is closed, the next one writes."""
    c1, c2 = connect(BUILD), connect(BUILD)
    create(c1, "bagz", "s3://bkt/two_w/x@2.bagz")
    e = error_of(c2, "CREATE VIRTUAL TABLE temp.w USING bagz('s3://bkt/two_w/x@2.bagz', "
                 "mode=create)")
    C.check(e and "another writer has this dataset open" in e and "s3://bkt/two_w" in e,
            "a second writer of the same s3:// target is refused while the first is open", e)
    c1.close()
    create(c2, "bagz", "s3://bkt/two_w/x@2.bagz")
    c2.execute(insert("bagz", ROWS[:4]))
    c2.commit()
    c2.close()
    C.eq(rows_of("bagz", "s3://bkt/two_w/x@2.bagz"), sorted(ROWS[:4]),
         "... after it closed, the next writer publishes")


def test_deleted_outside_fresh(front, bucket_dir):
    """With the disk cache's freshness window open (tests/run.sh shuts it
    for the rest), a dataset deleted by another program and written again
    with mode=create within the window: the writer's checks ask the server
    anew, so no cached "exists" refuses the copy (issue 24's window must not
    reach the writers' checks)."""
    cache = tempfile.mkdtemp(dir=TMP)
    env = dict(os.environ, DATASETS_REMOTE_CACHE_FRESH_MS="60000", XDG_CACHE_HOME=cache)
    env.pop("DATASETS_REMOTE_CACHE_DIR", None)
    child = ("import sys; sys.path.insert(0, %r)\n"
             "from dstest import connect\n"
             "c = connect(%r)\n"
             "c.execute(\"CREATE VIRTUAL TABLE temp.w USING bagz('s3://bkt/fresh/o@2.bagz', "
             "mode=create, rows_per_shard=3)\")\n"
             "try:\n"
             "    c.execute(\"INSERT INTO w(record) VALUES ('a'),('b'),('c'),('d'),('e'),('f')\")\n"
             "    c.commit()\n"
             "    print('ok', c.execute(\"SELECT count(*) FROM bagz('s3://bkt/fresh/o@2.bagz')\")"
             ".fetchone()[0])\n"
             "except Exception as e:\n"
             "    print('ERR', e)\n") % (os.path.dirname(os.path.abspath(__file__)), BUILD)
    folder = os.path.join(bucket_dir, "fresh")
    for round_ in range(2):
        shutil.rmtree(folder, ignore_errors=True)  # deleted by another program
        out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                             text=True, timeout=60).stdout.strip()
        C.eq(out, "ok 6", "copy %d into a target deleted from outside, window open" % round_)
        C.eq(sorted(os.listdir(folder)) if os.path.isdir(folder) else [],
             ["o-00000-of-00002.bagz", "o-00001-of-00002.bagz"],
             "copy %d: both shards published" % round_)
    shutil.rmtree(folder, ignore_errors=True)


def test_http_refused():
    c = connect(BUILD)
    e = error_of(c, "CREATE VIRTUAL TABLE temp.w USING bagz("
                 "'https://someone:pw-secret@127.0.0.1:9/out/new.bagz?tok=q-secret', mode=create)")
    C.check(e and "writing to https:// is not supported" in e and "secret" not in e,
            "an https:// target is refused, the URL named without user info or query", e)


def test_s3rver():
    """The same through s3rver (no ListMultipartUploads: cleanup is skipped;
    read back with botocore)."""
    with S3rver() as s:
        env_for(s.endpoint, "S3RVER", "S3RVER")
        cl = s.client()
        for module, name, opts in CASES[:4] + CASES[6:7]:
            prefix = "v/%s_%s" % (module, name.replace("@", "_").replace("*", "x"))
            want = local_copy(module, name, opts, ROWS)
            c = connect(BUILD)
            create(c, module, "s3://bkt/%s/%s" % (prefix, name), opts=opts)
            c.execute(insert(module, ROWS))
            c.commit()
            c.close()
            keys = sorted(o["Key"] for o in
                          cl.list_objects_v2(Bucket="bkt", Prefix=prefix + "/").get("Contents", []))
            got = {k[len(prefix) + 1:]: cl.get_object(Bucket="bkt", Key=k)["Body"].read()
                   for k in keys}
            C.check(got == want, "s3rver %s %s: botocore reads the local writer's bytes"
                    % (module, name))
            C.eq(rows_of(module, "s3://bkt/%s/%s" % (prefix, name)), sorted(ROWS),
                 "s3rver %s %s: read back through the extension" % (module, name))


def main():
    root = os.path.join(TMP, "front")
    bucket_dir = os.path.join(root, "bkt")
    os.makedirs(bucket_dir)
    with Front(root=root, keys={"AKFRONT": (SECRET, None)}) as front:
        env_for("http://127.0.0.1:%d" % front.port, "AKFRONT", SECRET)
        C.run(test_formats, front, bucket_dir)
        C.run(test_big, front, bucket_dir)
        C.run(test_early, front, bucket_dir)
        C.run(test_not_published, front, bucket_dir)
        C.run(test_create_refused, front, bucket_dir)
        C.run(test_replace, front, bucket_dir)
        C.run(test_second_commit, front, bucket_dir)
        C.run(test_faults, front, bucket_dir)
        C.run(test_commit_point_fails, front, bucket_dir)
        C.run(test_lost_complete, front, bucket_dir)
        C.run(test_killed, front, bucket_dir)
        C.run(test_endpoint_option, front, bucket_dir)
        C.run(test_killed_in_commit, front, bucket_dir)
        C.run(test_killed_in_insert, front, bucket_dir)
        C.run(test_killed_random_commit, front, bucket_dir)
        C.run(test_gs, front, bucket_dir)
        C.run(test_two_writers, front, bucket_dir)
        C.run(test_deleted_outside_fresh, front, bucket_dir)
    C.run(test_http_refused)
    if s3rver_bin():
        C.run(test_s3rver)
    else:
        print("SKIP s3rver is not installed (tools/deps.sh test)")


main()
shutil.rmtree(TMP, ignore_errors=True)
C.exit()
