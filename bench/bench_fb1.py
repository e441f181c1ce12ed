"""bench_fb1.py - F-B1: the B1 query fanned out on Dask.

Usage: bench_fb1.py BENCH_DIR EXT [RUNS]
  BENCH_DIR holds b1@4.bagz (bench/run.sh generates it); EXT is the
  extension without .so (build/datasets).

The query: SELECT label, count(*), sum(length(record)) ... GROUP BY label.

The yardstick is the query in one sqlite3 connection on one CPU (bagz
threads=1): issue 15 starts from "today a query runs in one SQLite
connection on one core", and 2 one-thread workers on 2 CPUs can at best
halve that. The target, read_sql over the 4 shards on a
LocalCluster(n_workers=2, threads_per_worker=1) <= 0.65 of it, is judged
against that yardstick. The connection's defaults (threads=2: records
already decompress on the second CPU) give the other ratio, printed too
(info).

Wall times are the best of RUNS (default 3) with the variants interleaved
and the yardstick measured in the same rounds. CPU times (user + system,
from os.times and time.thread_time) say where the work goes, which a wall
time on a shared machine cannot:
  tasks      each task's own CPU (the worker thread that ran it, plus a
             decoding thread if it had one), against the same shard's
             query alone in a plain connection
  workers    the worker processes' CPU over the computation: the tasks plus
             Dask's own work in them (event loop, task bookkeeping, the
             statistical profiler)
  client     this process: the client, the scheduler and the nannies
  background what an idle cluster spends per second (polling: it grows
             with the wall time, so with the load of a shared machine)
Also: 16 shards (the same records written once by our bagz writer into
BENCH_DIR/fb1x16/b1@16.bagz, 62,500 a shard), Dask's local schedulers (no
Client), the per-task overhead (count(*) over 64 partitions: a worker's
wall time per task, and the CPU per task outside the task itself) and
dataset_shards over a generated 1,000-shard bagz set. Answers are checked
equal to the one-connection query before timing.

Output: notes, then the table bench/results_md.py reads (ms)."""
import os
import statistics
import struct
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

LABEL = "CAST(record AS TEXT) ->> '$.label'"
QUERY = ("SELECT %s AS label, count(*) AS n, sum(length(record)) AS b FROM {t} GROUP BY 1"
         % LABEL)
TARGET = 0.65
ROW_FMT = "%-50s %10s %10s %7s %17s %17s %7s  %s"


def cpu():
    """This process's CPU seconds (all threads, user + system)."""
    t = os.times()
    return t.user + t.system


def install_task_clock():
    """(Run on each worker.) Wrap sqlite_datasets.dask.ShardQuery.__call__
    so that every task records its thread's and its process's CPU seconds
    (the process's includes a decoding thread) in _fb1_tasks."""
    import sqlite_datasets.dask as sdd
    if getattr(sdd, "_fb1_tasks", None) is not None:
        return
    sdd._fb1_tasks = []
    call = sdd.ShardQuery.__call__

    def timed(self, part):
        t, p = time.thread_time(), cpu()
        try:
            return call(self, part)
        finally:
            sdd._fb1_tasks.append((time.thread_time() - t, cpu() - p))
    sdd.ShardQuery.__call__ = timed


def take_task_clock():
    """(Run on each worker.) The task CPU records since the last call."""
    import sqlite_datasets.dask as sdd
    out, sdd._fb1_tasks = sdd._fb1_tasks, []
    return out


class Series:
    """Wall times (s) of one variant, and CPU accounting per run."""

    def __init__(self):
        self.walls, self.notes = [], []

    def best(self):
        return min(self.walls)

    def median(self):
        return statistics.median(self.walls)


def many_shards(bench_dir):
    """1,000 bagz files of 10 uncompressed records (written once)."""
    d = os.path.join(bench_dir, "fb1many")
    last = os.path.join(d, "m-00999-of-01000.bag")
    if not os.path.exists(last):
        os.makedirs(d, exist_ok=True)
        for k in range(1000):
            recs = [b"record %d of shard %d" % (i, k) for i in range(10)]
            ends, pos = [], 0
            for r in recs:
                pos += len(r)
                ends.append(pos)
            tmp = os.path.join(d, "tmp.bag")
            with open(tmp, "wb") as f:
                f.write(b"".join(recs) + b"".join(struct.pack("<Q", e) for e in ends))
            os.rename(tmp, os.path.join(d, "m-%05d-of-01000.bag" % k))
    return os.path.join(d, "m@1000.bag")


def sixteen_shards(conn, bench_dir, b1):
    """B1's records as 16 bagz shards of 62,500 (zstd level 3, as
    gen_b1), written once by the extension's bagz writer into
    BENCH_DIR/fb1x16 (the writer makes the files appear at the commit)."""
    d = os.path.join(bench_dir, "fb1x16")
    spec = os.path.join(d, "b1@16.bagz")
    if not os.path.exists(os.path.join(d, "b1-00015-of-00016.bagz")):
        os.makedirs(d, exist_ok=True)
        conn.execute("CREATE VIRTUAL TABLE temp.fb1x16 USING bagz('%s', mode=replace, level=3, "
                     "rows_per_shard=62500)" % spec)
        with conn:
            conn.execute("INSERT INTO fb1x16(record) SELECT record FROM bagz('%s')" % b1)
        conn.execute("DROP TABLE temp.fb1x16")
    return spec


def row(workload, ours, yard, target=None, unit=1000.0):
    """One table line: ours and yard are Series (or plain numbers in s, or
    None); ms; ratio of the best; spread median/max; target verdict."""
    def fig(v):
        if v is None:
            return "-", None
        b = v.best() if isinstance(v, Series) else v
        return "%.1f" % (b * unit), b

    def spread(v):
        if not isinstance(v, Series):
            return "-/-"
        return "%.1f/%.1f" % (v.median() * unit, max(v.walls) * unit)
    o, ob = fig(ours)
    y, yb = fig(yard)
    ratio = ob / yb if ob is not None and yb else None
    med = (ours.median() / yard.median()) if isinstance(ours, Series) and \
        isinstance(yard, Series) else None
    if target is None:
        verdict = "(info)"
    elif isinstance(target, str):
        verdict = target
    else:
        verdict = "<= %.2f %s" % (target, "n/a" if ratio is None else
                                  "PASS" if ratio <= target else "MISS")
    return ROW_FMT % (workload, o, y, "-" if ratio is None else "%.2f" % ratio,
                      spread(ours), spread(yard), "-" if med is None else "%.2f" % med,
                      verdict)


def main():
    bench_dir, ext = sys.argv[1], os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.environ["SQLITE_DATASETS_EXTENSION"] = ext + ".so"
    os.environ["PYTHONPATH"] = os.path.join(ROOT, "python")
    import sqlite_datasets as sd
    from sqlite_datasets.dask import read_sql
    from distributed import Client, LocalCluster

    load0 = " ".join("%.2f" % x for x in os.getloadavg())
    b1 = os.path.join(bench_dir, "b1@4.bagz")
    conn = sd.connect()
    b16 = sixteen_shards(conn, bench_dir, b1)
    shard_paths = [os.path.join(bench_dir, "b1-%05d-of-00004.bagz" % s) for s in range(4)]

    def one(path, opts=""):
        return QUERY.format(t="bagz('%s'%s)" % (path, ", '%s'" % opts if opts else ""))
    want = sorted(conn.execute(one(b1)).fetchall())
    ok = sorted(conn.execute(one(b1, "threads=1")).fetchall()) == want
    ok = ok and sorted(conn.execute(one(b16, "threads=1")).fetchall()) == want

    made = [0]

    def fresh(sql):
        """sql made unique with a comment: the same collection computed
        again right after a run has the same keys, and while the client's
        release of the last results is still on its way the scheduler or
        a worker hands those back without running anything (a 64-partition
        count took 0.1 s instead of 2 s that way)."""
        made[0] += 1
        return "%s /* run %d */" % (sql, made[0])

    def fan(path, options="", **kw):
        df = read_sql(fresh(QUERY.format(t="ds")), path, options)
        out = df.groupby("label")[["n", "b"]].sum().compute(**kw)
        return sorted((k, int(r["n"]), int(r["b"])) for k, r in out.iterrows())

    def timed(series, fn):
        t = time.perf_counter()
        got = fn()
        series.walls.append(time.perf_counter() - t)
        return got

    def one_conn(series, sql):
        """The query in conn; its CPU (one thread with threads=1) noted."""
        c = cpu()
        timed(series, lambda: conn.execute(sql).fetchall())
        series.notes.append(cpu() - c)

    # No Client: Dask's local schedulers, the yardstick interleaved.
    s = {k: Series() for k in ("one1", "one2", "threads", "processes")}
    ok = ok and fan(b1, scheduler="threads") == want
    for _ in range(runs):
        one_conn(s["one1"], one(b1, "threads=1"))
        one_conn(s["one2"], one(b1))
        timed(s["threads"], lambda: fan(b1, scheduler="threads"))
        timed(s["processes"], lambda: fan(b1, scheduler="processes"))
    local = s

    # The cluster.
    c = {k: Series() for k in ("one1", "one2", "one1x16", "alone", "fan4", "fan4t2",
                               "fan16", "count64", "build")}
    t = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as client:
        t_start = time.perf_counter() - t
        client.run(install_task_clock)
        ok = ok and fan(b1) == want and fan(b16) == want
        client.run(take_task_clock)
        w0, c0 = client.run(cpu), cpu()
        time.sleep(2)
        w1, c1 = client.run(cpu), cpu()
        bg_workers = sum(w1[k] - w0[k] for k in w0) / len(w0) / 2
        bg_client = (c1 - c0) / 2

        def cluster_run(series, fn):
            """fn's wall time, and (tasks' thread CPU, tasks' process CPU
            (with what the worker's other threads did meanwhile), workers'
            CPU, client CPU, tasks) of the run."""
            client.run(take_task_clock)
            w0, c0 = client.run(cpu), cpu()
            timed(series, fn)
            w1, c1 = client.run(cpu), cpu()
            tasks = [x for v in client.run(take_task_clock).values() for x in v]
            series.notes.append((sum(x[0] for x in tasks), sum(x[1] for x in tasks),
                                 sum(w1[k] - w0[k] for k in w0), c1 - c0, len(tasks)))
        counts = []
        for _ in range(runs):
            one_conn(c["one1"], one(b1, "threads=1"))
            one_conn(c["one2"], one(b1))
            one_conn(c["one1x16"], one(b16, "threads=1"))
            t0 = time.thread_time()
            for p in shard_paths:
                conn.execute(one(p, "threads=1")).fetchall()
            c["alone"].walls.append(time.thread_time() - t0)  # CPU, 4 shards alone
            cluster_run(c["fan4"], lambda: fan(b1))
            cluster_run(c["fan4t2"], lambda: fan(b1, "threads=2"))
            cluster_run(c["fan16"], lambda: fan(b16))
            timed(c["build"], lambda: read_sql(QUERY.format(t="ds"), b1))
            counts.append(read_sql(fresh("SELECT count(*) AS n FROM ds"), b1, split_rows=15625))
            cluster_run(c["count64"], lambda: counts.pop().n.sum().compute())
    many = many_shards(bench_dir)
    lst = Series()
    for _ in range(runs):
        timed(lst, lambda: conn.execute("SELECT count(*) FROM dataset_shards(?)",
                                        (many,)).fetchall())
    load1 = " ".join("%.2f" % x for x in os.getloadavg())

    def acct(series, name):
        """The CPU accounting line of the run with the best wall time."""
        i = series.walls.index(series.best())
        tthr, _, work, cli, n = series.notes[i]
        return ("  %-24s wall %.2f s; workers %.2f s: %d tasks' own threads %.2f, the rest %.2f "
                "(Dask in the workers; and the decoding threads if threads=2); "
                "client+scheduler+nannies %.2f s" % (name, series.best(), work, n, tthr,
                                                     work - tthr, cli))

    print("F-B1 Dask fan-out benchmark, %s UTC" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()))
    print("B1: %s (1M records, 4 bagz shards) and %s; %d CPUs; read_sql on "
          "LocalCluster(n_workers=2, threads_per_worker=1); yardstick: the query in one "
          "connection on one CPU (threads=1)" % (b1, b16, os.cpu_count() or 0))
    print("wall times: min of %d runs, the variants interleaved" % runs)
    print("answers equal the one-connection query: %s" % ("yes" if ok else "NO"))
    print()
    print("CPU seconds (user+system) of the best run of each; the single connection:")
    print("  one connection, threads=1: %.2f s; the 4 shards alone (4 statements): %.2f s; "
          "threads=2: %.2f s" % (min(c["one1"].notes), c["alone"].best(), min(c["one2"].notes)))
    print(acct(c["fan4"], "read_sql, 4 shards"))
    print(acct(c["fan4t2"], "4 shards, threads=2"))
    print(acct(c["fan16"], "read_sql, 16 shards"))
    print("  background of the idle cluster: %.0f ms/s per worker, %.0f ms/s in this process "
          "(polling: grows with the wall time)" % (bg_workers * 1000, bg_client * 1000))
    i = c["count64"].walls.index(c["count64"].best())
    tthr, _, work, cli, n = c["count64"].notes[i]
    per_task = c["count64"].best() * 2 / 64
    print("per-task overhead: count(*) over 64 partitions in %.2f s: %.1f ms of a worker's "
          "wall per task; CPU per task %.1f ms in the task's thread, %.1f ms more in the "
          "worker, %.1f ms in client+scheduler+nannies" % (
              c["count64"].best(), per_task * 1000, tthr / n * 1000,
              (work - tthr) / n * 1000, cli / n * 1000))
    print("read_sql() itself (dataset_shards, meta) %.3f s; cluster start %.1f s (not timed)"
          % (c["build"].best(), t_start))
    print()
    print("load average (1/5/15 min) %s at start, %s at end" % (load0, load1))
    print(ROW_FMT % ("workload", "ours ms", "yardst. ms", "ratio", "ours med/max",
                     "yardst. med/max", "med r.", "target"))
    print(ROW_FMT % ("--------", "-------", "----------", "-----", "------------",
                     "---------------", "------", "------"))
    print(row("read_sql 4 shards / one connection threads=1", c["fan4"], c["one1"], TARGET))
    print(row("read_sql 4 shards / one connection threads=2", c["fan4"], c["one2"]))
    print(row("read_sql 16 shards / one connection threads=1", c["fan16"], c["one1x16"]))
    print(row("read_sql 4 shards threads=2 / one conn. threads=1", c["fan4t2"], c["one1"]))
    print(row("no Client, threads / one connection threads=1", local["threads"],
              local["one1"]))
    print(row("no Client, processes / one connection threads=1", local["processes"],
              local["one1"]))
    print(row("tasks' CPU, 4 shards / the 4 shards alone (CPU)",
              min(x[0] for x in c["fan4"].notes), c["alone"]))
    print(row("workers' CPU, 4 shards / one connection CPU",
              min(x[2] for x in c["fan4"].notes), min(c["one1"].notes)))
    print(row("per-task overhead: a worker's wall per task", per_task, None))
    print(row("dataset_shards, 1,000 bagz shards", lst, None,
              "< 1000 ms %s" % ("PASS" if lst.best() < 1 else "MISS")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
