"""test_dask.py - sqlite_datasets.dask.read_sql on real Dask: Dask's local
scheduler, then a LocalCluster of 2 worker processes.

For a sharded upstream fixture of each format (bagz concatenated and
interleaved with split_rows, datadings glob, atlas dataset root) and a bcolz
table cut with split_rows, a glob of TFRecord files (gzip, zlib, two gzip
members) cut with split_rows, the rows read_sql gives and group-by aggregates
Dask computes over them (sum, count, min, max; mean as sum / count) equal
the same SQL in one sqlite3 connection over the whole dataset. Also: a
join with an attached database in every task; .npy cells as numpy arrays;
a corrupt shard fails the computation with the extension's error naming
the file; a worker without the extension gets an error that says so; a
worker process killed while it runs a task is dead and dropped by the
scheduler, Dask retries the task and the answer is the same. read_sql types
expression columns from the first rows of the first partition (the whole
partition when those give no value), and opens the partitions of formats
that take threads= (bagz, atlas: the extension says which) with
threads=1 when they fill the cluster's worker threads.
Usage: test_dask.py BUILD_DIR"""
import math
import os
import shutil
import signal
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, sql_quote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYDIR)

C = Checker()

# A slow task: a recursive count SQLite spends a while on (no sleeping, no
# timing: the test only needs the task to be running when the worker dies).
SPIN = ("(SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
        "SELECT x + 1 FROM c WHERE x < 3000000) SELECT x FROM c))")


def fixture(*parts):
    return os.path.join(FIXTURES, *parts)


def module_table(conn, module, path, options=""):
    """CREATE the whole dataset as temp.whole (dropping an earlier one)."""
    conn.execute("DROP TABLE IF EXISTS temp.whole")
    from sqlite_datasets.dask import split_options
    args = ", ".join([sql_quote(path)] + [sql_quote(o) for o in split_options(options)])
    conn.execute("CREATE VIRTUAL TABLE temp.whole USING %s(%s)" % (module, args))


def rows_of(df):
    """DataFrame rows as tuples, in rowid order, NaN as None."""
    out = []
    for t in df.itertuples(index=False):
        out.append(tuple(None if isinstance(v, float) and math.isnan(v) else v for v in t))
    return sorted(out, key=lambda r: r[0])


def same_numbers(a, b):
    """Row lists equal, floats to 1e-9 relative (sums in another order)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if len(x) != len(y):
            return False
        for u, v in zip(x, y):
            if isinstance(u, float) or isinstance(v, float):
                if u is None or v is None or not math.isclose(u, v, rel_tol=1e-9):
                    return False
            elif u != v:
                return False
    return True


# name, module, path, options, split_rows, columns for the row check, group
# column, value column (integers)
CASES = [
    ("bagz", "bagz", fixture("bagz", "concat@4.bagz"), "", None,
     "rowid, shard, shard_index, record, length(record) AS v", "shard", "v"),
    ("bagz interleaved split", "bagz", fixture("bagz", "inter@3.bagz"), "layout=interleaved", 4,
     "rowid, shard, shard_index, record, length(record) AS v", "shard", "v"),
    ("datadings", "dataset", fixture("datadings", "sharded", "part-*.msgpack"), "", None,
     "rowid, key, shard, j AS v", "shard", "v"),
    ("atlas", "dataset", fixture("atlas", "many_shards"), "", None,
     "rowid, id AS v, word, shard, shard_index", "word", "v"),
    ("bcolz split", "dataset", fixture("bcolz", "ctable_basic"), "", 7000,
     "rowid, id, x, flag, name, label, small AS v", "label", "v"),
    ("tfrecord glob split", "dataset",
     os.path.join(ROOT, "tests", "fixtures", "tfrecord", "examples.*.tfrecord"), "", 5,
     "rowid, shard, shard_index, record, length(record) AS v", "shard", "v"),
]


def check_case(client_name, conn, case):
    from sqlite_datasets.dask import read_sql
    name, module, path, options, split, cols, group, value = case
    label = "%s %s" % (client_name, name)
    module_table(conn, module, path, options)
    want = sorted(conn.execute("SELECT %s FROM temp.whole" % cols).fetchall(),
                  key=lambda r: r[0])
    df = read_sql("SELECT %s FROM ds" % cols, path, options, split_rows=split)
    nparts = len(conn.execute("SELECT 1 FROM dataset_shards(?, ?)",
                              (path, ", ".join(filter(None, [options, split and
                                                              "split_rows=%d" % split])))
                              ).fetchall())
    C.eq(df.npartitions, nparts, label + ": one partition per shard or range")
    got = rows_of(df.compute())
    C.check(same_numbers(got, want), label + ": rows equal one connection's",
            "got %r... want %r..." % (got[:3], want[:3]))
    agg = df.groupby(group)[value].agg(["sum", "count", "min", "max"]).compute()
    got_agg = sorted((k, int(r["sum"]), int(r["count"]), int(r["min"]), int(r["max"]))
                     for k, r in agg.iterrows())
    want_agg = conn.execute(
        "SELECT %s, sum(v), count(v), min(v), max(v) FROM (SELECT %s FROM temp.whole) "
        "GROUP BY 1 ORDER BY 1" % (group, cols)).fetchall()
    C.eq(got_agg, sorted(want_agg), label + ": group-by sum/count/min/max equal SQL's")
    mean = df.groupby(group)[value].sum() / df.groupby(group)[value].count()
    got_mean = sorted(mean.compute().items())
    want_mean = conn.execute("SELECT %s, avg(v) FROM (SELECT %s FROM temp.whole) GROUP BY 1 "
                             "ORDER BY 1" % (group, cols)).fetchall()
    C.check(same_numbers(got_mean, want_mean), label + ": avg as sum / count equals SQL's",
            "got %r want %r" % (got_mean[:3], want_mean[:3]))


def check_attach(conn, tmp):
    from sqlite_datasets.dask import read_sql
    path = fixture("bagz", "concat@4.bagz")
    meta = os.path.join(tmp, "meta.db")
    m = sqlite3.connect(meta)
    m.execute("CREATE TABLE labels(shard INTEGER, name TEXT)")
    m.executemany("INSERT INTO labels VALUES (?, ?)", [(0, "zero"), (1, "one"), (3, "three")])
    m.commit()
    m.close()
    sql = ("SELECT d.rowid, m.name, length(d.record) AS n FROM ds d "
           "JOIN meta.labels m ON m.shard = d.shard")
    got = rows_of(read_sql(sql, path, attach={"meta": meta}).compute())
    conn.execute("ATTACH DATABASE ? AS meta", (meta,))
    module_table(conn, "bagz", path)
    want = sorted(conn.execute(sql.replace("FROM ds d", "FROM temp.whole d")).fetchall())
    conn.execute("DETACH DATABASE meta")
    C.eq(got, want, "attach: a join with an attached database in every task")


def check_npy(conn):
    import numpy
    import sqlite_datasets as sd
    from sqlite_datasets.dask import read_sql
    path = fixture("bcolz", "carray_2d_f32")
    df = read_sql("SELECT rowid, value FROM ds", path, split_rows=1000).compute()
    module_table(conn, "bcolz", path)
    want = conn.execute("SELECT rowid, value FROM temp.whole ORDER BY rowid").fetchall()
    got = sorted(zip(df["rowid"], df["value"]), key=lambda r: r[0])
    ok = len(got) == len(want) and all(
        g[0] == w[0] and isinstance(g[1], numpy.ndarray) and
        numpy.array_equal(g[1], sd.to_numpy(w[1]), equal_nan=True) for g, w in zip(got, want))
    C.check(ok, "npy: .npy cells come back as numpy arrays equal to to_numpy(blob)")
    local = sd.read_pandas("SELECT value FROM temp.whole LIMIT 3", conn)
    C.check(all(isinstance(v, numpy.ndarray) for v in local["value"]),
            "read_pandas turns .npy columns into arrays")


def check_meta(conn):
    """meta of GROUP BY and filtered queries: the expression columns' types
    from HEAD_ROWS rows of the first partition, or from the whole partition
    when those rows give no value (HEAD_ROWS made small to see both)."""
    import sqlite_datasets.dask as sdd
    path = fixture("bagz", "concat@4.bagz")
    module_table(conn, "bagz", path)
    saved = sdd.HEAD_ROWS
    sdd.HEAD_ROWS = 2
    try:
        sql = "SELECT shard, count(*) AS n, sum(length(record)) AS b FROM ds GROUP BY shard"
        df = sdd.read_sql(sql, path)
        C.eq([str(t) for t in df.dtypes], ["int64", "int64", "int64"],
             "meta: a per-shard GROUP BY's columns typed from the first rows")
        want = conn.execute(sql.replace("FROM ds", "FROM temp.whole")).fetchall()
        C.eq(sorted(df.compute().itertuples(index=False, name=None)), sorted(want),
             "meta: the per-shard GROUP BY equals one connection's")
        sql = "SELECT rowid, length(record) + 0 AS n, NULL + rowid AS z FROM ds WHERE rowid >= 3"
        df = sdd.read_sql(sql, path)
        C.eq([str(t) for t in df.dtypes], ["int64", "int64", "object"],
             "meta: rows past the first HEAD_ROWS type a column; all-NULL is object")
        got = rows_of(df.compute())
        C.eq(got, conn.execute(sql.replace("FROM ds", "FROM temp.whole")).fetchall(),
             "meta: the filtered query equals one connection's")
    finally:
        sdd.HEAD_ROWS = saved


def check_threads(conn):
    """With the 2-thread cluster as the Client: 4 partitions of a format
    that takes threads= fill it (threads=1 each); 1 does not; the user's
    threads= and formats without the option are left alone. Whether a
    format takes it comes from the extension (_takes_option), never a list
    of formats: for a fixture of each format it agrees with what
    dataset_shards, which accepts the module's own options, says."""
    import sqlite_datasets.dask as sdd
    C.eq(sdd._task_slots(), 2, "threads: the cluster runs 2 tasks at once")
    yes, no = (lambda: True), (lambda: False)
    C.eq([sdd._one_thread_each("", 4, yes), sdd._one_thread_each("layout=x", 2, yes),
          sdd._one_thread_each("", 1, yes), sdd._one_thread_each("threads=2", 4, yes),
          sdd._one_thread_each("", 4, no)],
         ["threads=1", "layout=x, threads=1", "", "threads=2", ""],
         "threads: threads=1 per partition only when the partitions fill the workers")
    for _, _, path, options, split, _, _, _ in CASES:
        parts = sdd.list_partitions(path, options, split, conn)
        try:
            conn.execute("SELECT count(*) FROM dataset_shards(?, ?)",
                         (path, sdd._with_option(options, "threads", 1))).fetchall()
            want = True
        except sqlite3.Error:
            want = False
        C.eq(sdd._takes_option(conn, path, options, parts[0], "threads", 1), want,
             "threads: %s takes threads= as dataset_shards says (%s)" % (path, want))


def check_corrupt(tmp):
    from sqlite_datasets.dask import read_sql
    d = os.path.join(tmp, "corrupt")
    os.mkdir(d)
    for k in range(4):
        shutil.copy(fixture("bagz", "concat-%05d-of-00004.bagz" % k), d)
    bad = os.path.join(d, "concat-00001-of-00004.bagz")
    with open(bad, "r+b") as f:  # record 0's zstd magic number
        f.write(b"\0\0\0\0")
    df = read_sql("SELECT shard, length(record) AS n FROM ds", os.path.join(d, "concat@4.bagz"))
    try:
        df.n.sum().compute()
        C.check(False, "corrupt shard fails the computation")
    except Exception as e:  # the task's sqlite3 error, re-raised by Dask
        msg = str(e)
        C.check("bagz:" in msg and "concat-00001-of-00004.bagz" in msg,
                "corrupt shard fails the computation with our error naming the file", msg)


def check_missing_extension(client):
    from sqlite_datasets.dask import read_sql
    import sqlite_datasets as sd
    df = read_sql("SELECT count(*) AS n FROM ds", fixture("bagz", "concat@4.bagz"))
    saved = client.run(lambda: os.environ.get(sd.ENV))
    client.run(lambda: os.environ.__setitem__(sd.ENV, "/nonexistent/datasets.so"))
    try:
        df.n.sum().compute()
        C.check(False, "a worker without the extension fails")
    except Exception as e:
        msg = str(e)
        C.check(type(e).__name__ == "ExtensionNotFound" and "/nonexistent/datasets.so" in msg
                and "not on host" in msg,
                "a worker without the extension gets an error that says so", repr(e))
    for addr, value in saved.items():
        client.run(lambda v=value: os.environ.__setitem__(sd.ENV, v), workers=[addr])


def start_time(pid):
    """(process start time in clock ticks, state letter) of pid from
    /proc, or None when no such process exists."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return int(fields[19]), fields[0]


def gone(pid, started):
    """The process pid that started at `started` is dead: no such pid, a
    zombie, or the pid now belongs to a process started later."""
    now = start_time(pid)
    return now is None or now[0] != started or now[1] in "ZX"


def wait_until(cond, guard=300):
    """Poll cond until it holds (guard: seconds before giving up, a guard
    against hanging, not a measurement). Returns cond()."""
    deadline = time.monotonic() + guard
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.05)
    return cond()


def check_worker_killed(client, conn):
    from sqlite_datasets.dask import read_sql
    path = fixture("bagz", "concat@4.bagz")
    sql = "SELECT shard, length(record) AS n, %s AS spin FROM ds" % SPIN
    df = read_sql(sql, path, split_rows=2)
    module_table(conn, "bagz", path)
    want = sorted(conn.execute("SELECT shard, sum(length(record)), count(*) FROM temp.whole "
                               "GROUP BY shard").fetchall())
    total = df.groupby("shard").n.agg(["sum", "count"])
    pids = client.run(os.getpid)
    future = client.compute(total)
    victim = None
    deadline = time.monotonic() + 120  # a guard against hanging, not a measurement
    while victim is None and not future.done() and time.monotonic() < deadline:
        for addr, keys in client.processing().items():
            if keys:  # every first-stage task runs a read_sql partition
                victim = addr
                break
        else:
            time.sleep(0.02)
    C.check(victim is not None, "a read_sql task was running on a worker")
    if victim is not None:
        started = start_time(pids[victim])[0]
        os.kill(pids[victim], signal.SIGKILL)
        # the kill took: that process is dead, and the scheduler (which
        # sees its connections close) no longer counts it as a worker.
        # Whether and when the nanny starts a replacement is Dask's
        # business (minutes on a loaded machine): not waited for.
        C.check(wait_until(lambda: gone(pids[victim], started)),
                "the killed worker's process is dead")
        C.check(wait_until(lambda: victim not in client.scheduler_info()["workers"]),
                "the scheduler dropped the killed worker")
    result = future.result(timeout=300)
    got = sorted((k, int(r["sum"]), int(r["count"])) for k, r in result.iterrows())
    C.eq(got, want, "worker killed mid-computation: Dask retries, the answer is the same")


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    os.environ["SQLITE_DATASETS_EXTENSION"] = os.path.join(build, "datasets.so")
    os.environ["PYTHONPATH"] = PYDIR + os.pathsep + os.environ.get("PYTHONPATH", "")
    import dask
    import sqlite_datasets as sd
    conn = sd.connect()
    tmp = tempfile.mkdtemp(prefix="ds_dask_")
    try:
        with dask.config.set(scheduler="threads"):  # no Client: Dask's local scheduler
            C.run(check_case, "local", conn, CASES[0])
            C.run(check_meta, conn)
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster) as client:
            for case in CASES:
                C.run(check_case, "cluster", conn, case)
            C.run(check_threads, conn)
            C.run(check_attach, conn, tmp)
            C.run(check_npy, conn)
            C.run(check_corrupt, tmp)
            C.run(check_missing_extension, client)
            C.run(check_worker_killed, client, conn)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
