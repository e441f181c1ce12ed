"""test_remote_fixtures.py - every fixture of tests/fixtures/upstream (and
tests/fixtures/tfexample, tests/fixtures/tfrecord: good, cut, bad CRCs,
gzip, zlib, an .idx sidecar) read through the seam's remote backends gives
exactly the answers of the local read: nginx over http and https, s3rver
(s3://) and the S3 front (s3://, signatures checked by botocore). Every
module in both forms (table-valued and CREATE VIRTUAL TABLE, with a
`rowid =` lookup), `dataset`, `dataset_info`, `dataset_shards`,
`datadings_verify`, `bcolz_stats`/`bcolz_attrs`, bagz records=tfexample;
paths in answers are the URLs as given (the local answers with the local
folder replaced by the URL prefix). Plus: what http cannot do (@*, globs)
is refused saying why, writers refuse http(s) targets, a missing object
names the URL, status and S3 code, and request counts from the servers'
logs: opening a bagz shard is 1 request, `rowid = k` on an open table 1
GET. Usage: test_remote_fixtures.py BUILD_DIR"""
import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import dstest
from remote_servers import Nginx, S3rver, s3rver_bin
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
FIX = os.path.join(dstest.ROOT, "tests", "fixtures")
UP = os.path.join(FIX, "upstream")


def cases():
    """(module, path relative to FIX, options) of every fixture."""
    out = []
    for p in sorted(glob.glob(os.path.join(UP, "bagz", "*.bag*"))):
        name = os.path.basename(p)
        if name.startswith("limits.") or "-of-" in name:
            continue
        opts = "limits=separate" if os.path.exists(os.path.join(UP, "bagz", "limits." + name)) \
            else None
        out.append(("bagz", "upstream/bagz/" + name, opts))
    out += [("bagz", "upstream/bagz/inter@3.bagz", None),
            ("bagz", "upstream/bagz/concat@4.bagz", None),
            ("bagz", "upstream/bagz/inter-00000-of-00003.bagz,upstream/bagz/concat@4.bagz", None),
            ("bagz", "upstream/bagz/sepset@2.bagz", "limits=separate"),
            ("bagz", "tfexample/examples.bagz", "records=tfexample")]
    for d in sorted(glob.glob(os.path.join(UP, "datadings", "*", ""))):
        for p in sorted(glob.glob(os.path.join(d, "*.msgpack"))):
            out.append(("datadings", os.path.relpath(p, FIX), None))
    for p in sorted(glob.glob(os.path.join(FIX, "tfrecord", "*.tfrecord"))):
        out.append(("tfrecord", os.path.relpath(p, FIX), None))
    out += [("tfrecord", "tfrecord/examples.tfrecord", "records=tfexample"),
            ("tfrecord", "tfrecord/examples.gzip.tfrecord", "records=tfexample"),
            ("tfrecord", "tfrecord/examples.tfrecord,tfrecord/examples.zlib.tfrecord", None)]
    for kind in ("atlas", "bcolz"):
        for d in sorted(glob.glob(os.path.join(UP, kind, "*", ""))):
            if os.path.basename(d.rstrip("/")) != "expected":
                out.append((kind, os.path.relpath(d.rstrip("/"), FIX), None))
    return out


def absolute(spec, base):
    """A spec with each comma element put under base."""
    return ",".join(base + e for e in spec.split(","))


def answers(conn, mod, spec, opts):
    """Every answer the modules and functions give for spec, errors as
    text: [(label, rows or error)]."""
    res = []

    def q(label, sql, *args):
        try:
            res.append((label, conn.execute(sql, args).fetchall()))
        except sqlite3.Error as e:
            res.append((label, "ERROR " + str(e)))

    o = opts or ""
    q("tvf", "SELECT rowid, * FROM %s(?, ?)" % mod, spec, o)
    args = ", ".join([dstest.sql_quote(spec)] + ([opts] if opts else []))
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.t USING %s(%s)" % (mod, args))
        q("vtab", "SELECT rowid, * FROM temp.t")
        q("vtab rowid=1", "SELECT rowid, * FROM temp.t WHERE rowid = 1")
        q("vtab count", "SELECT count(*) FROM temp.t")
        conn.execute("DROP TABLE temp.t")
    except sqlite3.Error as e:
        res.append(("vtab create", "ERROR " + str(e)))
    q("dataset", "SELECT * FROM dataset(?, ?)", spec, o)
    q("dataset_info", "SELECT * FROM dataset_info(?)", spec)
    q("dataset_shards", "SELECT * FROM dataset_shards(?)", spec)
    if mod == "datadings":
        q("datadings_verify", "SELECT * FROM datadings_verify(?)", spec)
    if mod == "bcolz":
        q("bcolz_stats", "SELECT * FROM bcolz_stats(?)", spec)
        q("bcolz_attrs", "SELECT * FROM bcolz_attrs(?)", spec)
    return res


def replaced(v, a, b):
    """v with every text a replaced by b (rows, errors)."""
    if isinstance(v, str):
        return v.replace(a, b)
    if isinstance(v, (list, tuple)):
        return type(v)(replaced(x, a, b) for x in v)
    return v


def unknown_bytes(answer):
    """A folder's answer as http gives it: no listing, so dataset_info's
    bytes_on_disk and dataset_shards' bytes are NULL (the rest is equal)."""
    label, v = answer
    if isinstance(v, str):
        return answer
    if label == "dataset_info":
        return (label, [(k, None) if k == "bytes_on_disk" else (k, x) for k, x in v])
    if label == "dataset_shards":
        return (label, [tuple(r[:-1]) + (None,) for r in v])
    return answer


def compare(t, conn, tag, base, local, listing=True):
    """Every case read under base gives the local answers (base for FIX).
    Without listing (http), a folder's bytes in dataset_info and
    dataset_shards are NULL (bytes walks the folder)."""
    same = 0
    for (mod, rel, opts), want in local:
        got = answers(conn, mod, absolute(rel, base), opts)
        exp = replaced(want, FIX + "/", base)
        if not listing and mod in ("atlas", "bcolz"):
            exp = [unknown_bytes(x) for x in exp]
        ok = got == exp
        if not ok:
            for (l1, g), (l2, e) in zip(got, exp):
                if g != e:
                    t.check(False, "%s: %s %s %s: same as local" % (tag, mod, rel, l1),
                            (dstest._short(g), dstest._short(e)))
                    break
        same += ok
    t.eq(same, len(local), "%s: %d fixture reads give the local answers" % (tag, len(local)))


CLIENT = r"""
import sqlite3, sys
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
for line in sys.stdin:
    print(c.execute(line).fetchall(), flush=True)
"""


def make_shard(folder):
    """folder/big.bagz: 5000 records of 100 bytes written by the extension
    (its limits, 40 KB, fit the tail an open fetches; its records do not)."""
    conn = dstest.connect(BUILD)
    conn.execute("CREATE VIRTUAL TABLE temp.w USING bagz(%s, mode=create)"
                 % dstest.sql_quote(os.path.join(folder, "big.bagz")))
    conn.execute("WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4999) "
                 "INSERT INTO temp.w(record) SELECT randomblob(100) FROM n")
    conn.commit()
    conn.close()


def counts(t, tag, env, url, log):
    """Request counts from the server's log (a fresh process, one step at
    a time): opening a bagz shard (big.bagz), then `rowid = k` lookups."""
    p = subprocess.Popen([sys.executable, "-c", CLIENT, os.path.join(BUILD, "datasets")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    got = []
    try:
        for sql in ["CREATE VIRTUAL TABLE temp.t USING bagz('%s')" % url,
                    "SELECT length(record) FROM temp.t WHERE rowid = 100",
                    "SELECT length(record) FROM temp.t WHERE rowid = 2500"]:
            n = len(log())
            p.stdin.write(sql + "\n")
            p.stdin.flush()
            p.stdout.readline()
            got.append(len(log()) - n)
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    t.eq(got[0], 1, tag + ": opening a bagz shard costs 1 request")
    t.eq(got[1:], [1, 1], tag + ": `rowid = k` on an open table costs 1 GET")


def main():
    t = dstest.Checker()
    local_conn = dstest.connect(BUILD)
    cs = cases()
    local = [((m, r, o), answers(local_conn, m, absolute(r, FIX + "/"), o)) for m, r, o in cs]
    ok_local = sum(1 for _, a in local if all(not isinstance(v, str) for _, v in a[:1]))
    # tfrecord: bad CRCs and cut files fail by design, and records=tfexample
    # needs the CREATE form (the table-valued call says so)
    broken_tfr = sum(1 for m, r, o in cs if m == "tfrecord" and ("bad_" in r or "cut" in r or o))
    t.check(ok_local >= len(cs) - 6 - broken_tfr, "%d of %d fixtures read locally (the rest are errors by design, compared too)" % (ok_local, len(cs)))
    env0 = dict(os.environ)
    with Nginx(FIX) as ng:
        os.environ["CURL_CA_BUNDLE"] = ng.ca
        for tls in (False, True):
            tag = "https" if tls else "http"
            conn = dstest.connect(BUILD)
            # over http an atlas root's shard folders are named from
            # meta.json, zero-padded as the writers pad them (many_shards:
            # 00 .. 11)
            compare(t, conn, "nginx " + tag, ng.url("", tls), local, listing=False)
            # what http cannot do, and says why
            e = dstest.error_of(conn, "SELECT count(*) FROM bagz(?)",
                                ng.url("upstream/bagz/inter@*.bagz", tls))
            t.check(e and "listing" in e, tag + ": @* refused, saying why", e)
            e = dstest.error_of(conn, "SELECT count(*) FROM datadings(?)",
                                ng.url("upstream/datadings/sharded/*.msgpack", tls))
            t.check(e and "listing" in e, tag + ": a glob refused, saying why", e)
            e = dstest.error_of(conn, "SELECT count(*) FROM bagz(?)",
                                ng.url("upstream/bagz/none.bagz", tls))
            t.check(e and ng.url("upstream/bagz/none.bagz", tls) in e and "HTTP 404" in e,
                    tag + ": a missing file names the URL and HTTP 404", e)
            e = dstest.error_of(conn, "SELECT count(*) FROM atlas(?)",
                                ng.url("upstream/atlas/types/../../bagz", tls))
            t.check(e and ("'..'" in e or "Permission denied" in e), tag + ": '..' in a remote path refused", e)
    shard_dir = tempfile.mkdtemp(prefix="ds-big-")
    make_shard(shard_dir)
    with Nginx(shard_dir) as ng:
        counts(t, "nginx", dict(os.environ), ng.url("big.bagz"), ng.requests)
    os.environ.clear()
    os.environ.update(env0)

    # the S3 front: objects from the fixtures folder, signatures checked
    root = tempfile.mkdtemp(prefix="ds-s3f-")
    try:
        shutil.copytree(FIX, os.path.join(root, "bkt"))
        shutil.copy(os.path.join(shard_dir, "big.bagz"), os.path.join(root, "bkt", "big.bagz"))
        with Front(root, keys={"AKFRONT": ("front-secret", None)}, region="us-east-1") as s3:
            os.environ.update(AWS_ENDPOINT_URL=s3.url("").rstrip("/"), AWS_ACCESS_KEY_ID="AKFRONT",
                              AWS_SECRET_ACCESS_KEY="front-secret", AWS_REGION="us-east-1")
            os.environ.pop("AWS_SESSION_TOKEN", None)
            os.environ.pop("AWS_PROFILE", None)
            conn = dstest.connect(BUILD)
            compare(t, conn, "S3 front", "s3://bkt/", local)
            e = dstest.error_of(conn, "SELECT count(*) FROM bagz(?)", "s3://bkt/upstream/none.bagz")
            t.check(e and "s3://bkt/upstream/none.bagz" in e and "404" in e and "NoSuchKey" in e,
                    "S3 front: a missing object: URL, 404, NoSuchKey", e)
            t.check("front-secret" not in (e or ""), "no secret in the message")
            t.eq(conn.execute("SELECT count(*) FROM bagz(?)",
                              ("s3://bkt/upstream/bagz/inter@*.bagz",)).fetchall(),
                 local_conn.execute("SELECT count(*) FROM bagz(?)",
                                    (FIX + "/upstream/bagz/inter@*.bagz",)).fetchall(),
                 "S3 front: @* lists")
            t.eq(conn.execute("SELECT count(*) FROM datadings(?)",
                              ("s3://bkt/upstream/datadings/sharded/*.msgpack",)).fetchall(),
                 local_conn.execute("SELECT count(*) FROM datadings(?)",
                                    (FIX + "/upstream/datadings/sharded/*.msgpack",)).fetchall(),
                 "S3 front: a datadings glob lists")
            # a writer on s3:// (test_remote_write.py writes): CREATE and
            # DROP without rows touch nothing
            e = dstest.error_of(conn, "CREATE VIRTUAL TABLE temp.w USING bagz("
                                "'s3://bkt/out/new.bagz', mode=create)")
            t.eq(e, None, "a writer on s3:// is created")
            conn.execute("DROP TABLE temp.w")
            t.check(not os.path.exists(os.path.join(FIX, "out")) and not os.path.exists("s3:"),
                    "nothing created")
            e = dstest.error_of(conn, "CREATE VIRTUAL TABLE temp.w2 USING bagz("
                                "'https://someone:pw-secret@127.0.0.1:9/out/new.bagz?tok=q-secret', "
                                "mode=create)")
            t.check(e and "writing to https:// is not supported" in e
                    and "127.0.0.1:9/out/new.bagz" in e and "secret" not in e,
                    "a writer on an https:// URL with user info and a query: refused, "
                    "the URL named without them", e)
            # options: endpoint= wins over AWS_ENDPOINT_URL (pointed at a
            # closed port here); retries=0 fails on the first 503
            good = os.environ["AWS_ENDPOINT_URL"]
            os.environ["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
            want = local_conn.execute("SELECT count(*) FROM bagz(?)",
                                      (FIX + "/upstream/bagz/zstd.bagz",)).fetchall()
            c2 = dstest.connect(BUILD)
            t.eq(c2.execute("SELECT count(*) FROM bagz(?, ?)",
                            ("s3://bkt/upstream/bagz/zstd.bagz", "endpoint=" + good)).fetchall(),
                 want, "endpoint= in the table-valued form")
            c2.execute("CREATE VIRTUAL TABLE temp.e USING bagz('s3://bkt/upstream/bagz/level19.bagz', "
                       "endpoint='%s', url_style=path, region=us-east-1, timeout_ms=20000)" % good)
            t.eq(c2.execute("SELECT count(*) FROM temp.e").fetchall(),
                 local_conn.execute("SELECT count(*) FROM bagz(?)",
                                    (FIX + "/upstream/bagz/level19.bagz",)).fetchall(),
                 "endpoint=, url_style=, region=, timeout_ms= in CREATE")
            e = dstest.error_of(c2, "SELECT count(*) FROM bagz(?)", "s3://bkt/upstream/bagz/zstd.bagz")
            t.check(e and "127.0.0.1:9" in e, "without endpoint=: AWS_ENDPOINT_URL is used", e)
            os.environ["AWS_ENDPOINT_URL"] = good
            time.sleep(2.1)  # past the probe cache's 2 s
            # every request answered 503: retries=0 makes each ask one
            # try, retries=2 three
            s3.always = {"status": 503, "retry_after": 0}
            asked = []
            for r in (0, 2):
                time.sleep(2.1)
                n = len(s3.requests())
                e = dstest.error_of(c2, "SELECT count(*) FROM bagz(?, 'retries=%d')" % r,
                                    "s3://bkt/upstream/bagz/dict.bagz")
                asked.append(len(s3.requests()) - n)
                t.check(e and "503" in e and "SlowDown" in e, "retries=%d: 503 SlowDown" % r, e)
            s3.always = {}
            t.check(asked[0] > 0 and asked[1] == 3 * asked[0],
                    "retries=2 makes 3 tries of each request retries=0 makes once", asked)
            s3.faults = []
            e = dstest.error_of(c2, "SELECT count(*) FROM bagz(?, 'url_style=sideways')",
                                "s3://bkt/upstream/bagz/zstd.bagz")
            t.check(e and "url_style" in e, "a bad url_style= is an error naming it", e)
            counts(t, "S3 front", dict(os.environ), "s3://bkt/big.bagz",
                   s3.requests)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(shard_dir, ignore_errors=True)
        os.environ.clear()
        os.environ.update(env0)

    # s3rver: every fixture put as an object
    if not s3rver_bin():
        t.check(False, "s3rver installed (tools/deps.sh test)")
    else:
        with S3rver() as srv:
            cl = srv.client()
            for p in glob.glob(os.path.join(FIX, "**", "*"), recursive=True):
                if os.path.isfile(p) and "/expected/" not in p:
                    with open(p, "rb") as f:
                        cl.put_object(Bucket="bkt", Key=os.path.relpath(p, FIX), Body=f.read())
            os.environ.update(AWS_ENDPOINT_URL=srv.endpoint, AWS_ACCESS_KEY_ID="S3RVER",
                              AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1")
            conn = dstest.connect(BUILD)
            compare(t, conn, "s3rver", "s3://bkt/", local)
        os.environ.clear()
        os.environ.update(env0)
    return t.exit()


if __name__ == "__main__":
    sys.exit(main())
