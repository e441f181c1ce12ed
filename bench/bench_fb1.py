"""bench_fb1.py - F-B1: the B1 query fanned out on Dask.

Usage: bench_fb1.py BENCH_DIR EXT [RUNS]
  BENCH_DIR holds b1@4.bagz (bench/run.sh generates it); EXT is the
  extension without .so (build/datasets).

Times (best of RUNS, default 3):
  one     SELECT label, count(*), sum(length(record)) ... GROUP BY label in
          one sqlite3 connection over b1@4.bagz, with the defaults
          (threads=2: records decompress on both CPUs already); the target's
          yardstick
  one1    the same with threads=1: one CPU, the work each task does (the
          fair yardstick for 2 one-thread workers), and one shard alone
  dask4   the same through read_sql on a LocalCluster(n_workers=2,
          threads_per_worker=1): per-shard GROUP BY in SQL, combined by
          Dask (sum of counts, sum of sums); target dask4 / one <= 0.65.
          Includes read_sql() itself (dataset_shards, meta: timed alone too)
  dask16  the same with split_rows=62500 (16 partitions)
  local   read_sql with no Client: Dask's local threads, then processes
  per-task overhead: SELECT count(*) over 64 partitions (no record is
          decompressed) on the cluster: wall time x 2 workers / 64 is
          what a worker spends per task (scheduling, connection, opening
          the shard, the result's trip back)
  dataset_shards over a generated 1,000-shard bagz set (written to
          BENCH_DIR/fb1many once), and the files a task opens.
Answers are checked equal to the one-connection query before timing."""
import os
import struct
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

LABEL = "CAST(record AS TEXT) ->> '$.label'"
QUERY = ("SELECT %s AS label, count(*) AS n, sum(length(record)) AS b FROM {t} GROUP BY 1"
         % LABEL)


def best(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


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


def main():
    bench_dir, ext = sys.argv[1], os.path.abspath(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.environ["SQLITE_DATASETS_EXTENSION"] = ext + ".so"
    os.environ["PYTHONPATH"] = os.path.join(ROOT, "python")
    import sqlite_datasets as sd
    from sqlite_datasets.dask import read_sql
    from distributed import Client, LocalCluster

    b1 = os.path.join(bench_dir, "b1@4.bagz")
    shard0 = os.path.join(bench_dir, "b1-00000-of-00004.bagz")
    conn = sd.connect()
    one_sql = QUERY.format(t="bagz('%s')" % b1)
    one1_sql = QUERY.format(t="bagz('%s', 'threads=1')" % b1)
    shard_sql = QUERY.format(t="bagz('%s', 'threads=1')" % shard0)
    want = sorted(conn.execute(one_sql).fetchall())
    ok = sorted(conn.execute(one1_sql).fetchall()) == want

    runs_made = [0]

    def fresh(sql):
        """sql made unique with a comment: the same collection computed
        again right after a run has the same keys, and while the client's
        release of the last results is still on its way the scheduler or
        a worker hands those back without running anything (a 64-partition
        count took 0.1 s instead of 2 s that way)."""
        runs_made[0] += 1
        return "%s /* run %d */" % (sql, runs_made[0])

    def fan(split=None, **kw):
        df = read_sql(fresh(QUERY.format(t="ds")), b1, split_rows=split)
        out = df.groupby("label")[["n", "b"]].sum().compute(**kw)
        return sorted((k, int(r["n"]), int(r["b"])) for k, r in out.iterrows())

    res = {"load": os.getloadavg()[0]}
    t_one = best(lambda: conn.execute(one_sql).fetchall(), runs)
    t_one1 = best(lambda: conn.execute(one1_sql).fetchall(), runs)
    t_shard = best(lambda: conn.execute(shard_sql).fetchall(), runs)
    res["local_threads"] = best(lambda: fan(scheduler="threads"), runs)
    res["local_processes"] = best(lambda: fan(scheduler="processes"), runs)
    t = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster):
        t_start = time.perf_counter() - t
        ok = ok and fan() == want and fan(62500) == want
        t4 = best(lambda: fan(), runs)
        t_build = best(lambda: read_sql(QUERY.format(t="ds"), b1), runs)
        t16 = best(lambda: fan(62500), runs)
        counts = [read_sql(fresh("SELECT count(*) AS n FROM ds"), b1, split_rows=15625)
                  for _ in range(runs)]
        t64 = best(lambda: counts.pop().n.sum().compute(), runs)
    many = many_shards(bench_dir)
    t_list = best(lambda: conn.execute("SELECT count(*) FROM dataset_shards(?)",
                                       (many,)).fetchall(), runs)
    print("F-B1 (B1 = 1M records, 4 bagz shards; 2-worker LocalCluster; best of %d; "
          "load average %.1f at start)" % (runs, res["load"]))
    print("answers equal the one-connection query: %s" % ("yes" if ok else "NO"))
    print("one connection            %7.2f s   (defaults: threads=2, both CPUs)" % t_one)
    print("one connection, threads=1 %7.2f s   (one CPU: what the tasks do; "
          "one shard alone %.2f s)" % (t_one1, t_shard))
    print("read_sql, 4 partitions    %7.2f s   ratio %.2f (target <= 0.65); "
          "vs threads=1 %.2f" % (t4, t4 / t_one, t4 / t_one1))
    print("  of which read_sql()     %7.2f s   (dataset_shards, meta; cluster start "
          "%.1f s, not timed)" % (t_build, t_start))
    print("read_sql, 16 partitions   %7.2f s   ratio %.2f" % (t16, t16 / t_one))
    print("no Client, threads        %7.2f s   ratio %.2f" % (res["local_threads"],
                                                         res["local_threads"] / t_one))
    print("no Client, processes      %7.2f s   ratio %.2f" % (res["local_processes"],
                                                         res["local_processes"] / t_one))
    print("per-task overhead         %7.1f ms  a worker's time per task (count(*) over "
          "64 partitions on 2 workers: %.2f s)" % (t64 * 2 / 64 * 1000, t64))
    print("dataset_shards, 1000 shards %5.3f s" % t_list)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
