"""test_remote_dask.py - sqlite_datasets.dask over remote paths (issue 23,
item 8 "Fan-out"), on a LocalCluster of 2 worker processes:
- bagz concat@4.bagz over http:// (nginx, its access log), and over
  s3:// as concat@*.bagz (a listing), and the datadings glob
  sharded/part-*.msgpack over s3:// (the tests' S3 front, its request log):
  read_sql's rows equal the same SQL over the local fixture in one sqlite3
  connection; dataset_shards/list_partitions give the URLs as given (never
  made into local paths);
- each partition computed alone on the cluster (the server's log cleared
  before) requests only its own shard's objects: the shard's file (and, for
  datadings, its index files), never another shard's; and at least one.
The extension and the AWS_* variables reach the workers through the
environment they start with.
Usage: test_remote_dask.py BUILD_DIR"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, sql_quote  # noqa: E402
from remote_servers import Nginx  # noqa: E402
from s3_front import Front  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYDIR)

C = Checker()
COLS = {"bagz": "rowid, shard, shard_index, record, length(record) AS v",
        "dataset": "rowid, key, shard, shard_index, j AS v"}


def rows_of(df):
    """DataFrame rows as tuples, in rowid order."""
    return sorted((tuple(t) for t in df.itertuples(index=False)), key=lambda r: r[0])


def local_rows(conn, module, path, cols):
    conn.execute("DROP TABLE IF EXISTS temp.whole")
    conn.execute("CREATE VIRTUAL TABLE temp.whole USING %s(%s)" % (module, sql_quote(path)))
    return sorted(conn.execute("SELECT %s FROM temp.whole" % cols).fetchall(),
                  key=lambda r: r[0])


def url_path(url):
    """The request path a URL's object is asked for: /bkt/key for s3://bkt/key
    (path style), /path for http://host/path."""
    if url.startswith("s3://"):
        return "/" + url[len("s3://"):]
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def check_case(conn, name, module, local, remote, log, clear):
    """read_sql over `remote` equals the local read of `local`; each
    partition alone requests only its own shard's objects (`log()` gives the
    request paths since `clear()`)."""
    from sqlite_datasets.dask import list_partitions, read_sql
    cols = COLS[module]
    want = local_rows(conn, module, local, cols)
    df = read_sql("SELECT %s FROM ds" % cols, remote)
    parts = list_partitions(remote, conn=conn)
    C.check(len(parts) >= 2, name + ": several partitions", len(parts))
    C.eq(df.npartitions, len(parts), name + ": one partition per shard")
    C.check(all(p["path"].startswith(remote.split("://")[0] + "://") for p in parts),
            name + ": partition paths are the URLs as given", [p["path"] for p in parts])
    # each partition alone first, while no worker has read its shard (a
    # worker keeps what it opened: a second read may need no request)
    for i, part in enumerate(parts):
        own = own_objects(part["path"])
        clear()
        got = rows_of(df.partitions[i].compute())
        C.eq(len(got), part["rows"], "%s: partition %d alone gives its rows" % (name, i))
        seen = log()
        foreign = [p for p in seen if not p.startswith(own) and not is_listing(p)]
        C.check(bool(seen), "%s: partition %d's task made requests" % (name, i), seen)
        C.check(not foreign, "%s: partition %d's task requested only its own shard %s"
                % (name, i, own[0]), sorted(set(foreign)))
    C.eq(rows_of(df.compute()), want, name + ": rows equal the local read")


def own_objects(url):
    """Request-path prefixes of a shard's own objects: its file (and the
    files named after it: datadings' index files) and bagz's separate
    limits file (limits.<name>, which a reader may look for)."""
    p = url_path(url)
    folder, _, base = p.rpartition("/")
    return (p, folder + "/limits." + base)


def is_listing(path):
    """A request for a bucket (ListObjectsV2: the query string is not logged)."""
    return path.strip("/").count("/") == 0


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    os.environ["SQLITE_DATASETS_EXTENSION"] = os.path.join(build, "datasets.so")
    os.environ["PYTHONPATH"] = PYDIR + os.pathsep + os.environ.get("PYTHONPATH", "")
    import sqlite_datasets as sd
    s3root = tempfile.mkdtemp(prefix="ds_rdask_")
    shutil.copytree(os.path.join(FIXTURES, "bagz"), os.path.join(s3root, "bkt", "bagz"),
                    ignore=shutil.ignore_patterns("*.md", "*.txt"))
    shutil.copytree(os.path.join(FIXTURES, "datadings", "sharded"),
                    os.path.join(s3root, "bkt", "dd", "sharded"))
    try:
        with Nginx(FIXTURES) as web, Front(root=s3root) as s3:
            # the workers start with this environment
            os.environ.update(AWS_ENDPOINT_URL=s3.url("").rstrip("/"),
                              AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                              AWS_REGION="us-east-1")
            for k in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
                os.environ.pop(k, None)
            conn = sd.connect()

            def s3_clear():
                with s3.lock:
                    s3.log.clear()

            def s3_log():
                return [r[2] for r in s3.requests()]

            from distributed import Client, LocalCluster
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None, silence_logs=40) as cluster, \
                    Client(cluster):
                C.run(check_case, conn, "http bagz concat@4", "bagz",
                      os.path.join(FIXTURES, "bagz", "concat@4.bagz"),
                      web.url("bagz/concat@4.bagz"),
                      lambda: [r[1] for r in web.requests()], web.clear_log)
                C.run(check_case, conn, "s3 bagz concat@*", "bagz",
                      os.path.join(FIXTURES, "bagz", "concat@*.bagz"),
                      "s3://bkt/bagz/concat@*.bagz", s3_log, s3_clear)
                C.run(check_case, conn, "s3 datadings glob", "dataset",
                      os.path.join(FIXTURES, "datadings", "sharded", "part-*.msgpack"),
                      "s3://bkt/dd/sharded/part-*.msgpack", s3_log, s3_clear)
            conn.close()
    finally:
        shutil.rmtree(s3root, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
