"""test_row_window.py - a table opened over one shard's files with the row
window options (shard, first_rowid, rowid_step, shard_index, rows: what
dataset_shards' HIDDEN open_options gives) keeps the whole dataset's
numbering, in all five modules.

For every dataset_shards entry of an upstream fixture of each format (bagz
concatenated and interleaved, datadings glob, atlas with a shared and with
per-shard dictionaries, a bcolz table, TFRecord files uncompressed, gzip
and zlib; with and without split_rows), the
entry's table answers exactly what the whole dataset's table answers for
those rows: every row, rowid = / IN / ranges, shard = / IN, ORDER BY rowid
DESC, LIMIT/OFFSET. Then a generated 1,000-shard bagz set: a read_sql task
maps or holds open only its own shard's file (counted in /proc/self/maps
and /proc/self/fd, while the whole dataset's table holds all 1,000), and
read_sql over it (Dask's synchronous scheduler) equals one connection's
answer. Bad window options are errors naming the option.
Usage: test_row_window.py BUILD_DIR"""
import os
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, sql_quote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from sqlite_datasets.dask import split_options  # noqa: E402

C = Checker()

# name, path, options, split_rows, columns compared
CASES = [
    ("bagz", ("bagz", "concat@4.bagz"), "", None, "record"),
    ("bagz interleaved", ("bagz", "inter@3.bagz"), "layout=interleaved", None, "record"),
    ("bagz interleaved split", ("bagz", "inter@3.bagz"), "layout=interleaved", 4, "record"),
    ("datadings", ("datadings", "sharded", "part-*.msgpack"), "", None, "key, sample"),
    ("datadings split", ("datadings", "sharded", "part-*.msgpack"), "", 2, "key, sample"),
    ("atlas shared dictionary", ("atlas", "shared_dict"), "", None, "example"),
    ("atlas many shards split", ("atlas", "many_shards"), "", 5, "example"),
    ("atlas per-shard dictionary", ("atlas", "per_shard_dict"), "", None, "example"),
    ("bcolz split", ("bcolz", "ctable_basic"), "", 7000, "id, x, name"),
    ("tfrecord glob (none, gzip, multi-member gzip, zlib)",
     ("..", "tfrecord", "examples*.tfrecord"), "", None, "record"),
    ("tfrecord split", ("..", "tfrecord", "examples.tfrecord"), "", 5, "record"),
]


def module_of(conn, path):
    return conn.execute("SELECT value FROM dataset_info(?) WHERE property = 'format'",
                        (path,)).fetchone()[0]


def has_shard(module):
    return module in ("bagz", "atlas", "tfrecord")


def queries(module, e):
    """(label, WHERE/ORDER/LIMIT tail) pairs over the entry e's rowids."""
    f = e["first_rowid"]
    step = e["step"]
    ids = [f + k * step for k in range(e["rows"])]
    mid = ids[len(ids) // 2] if ids else f
    out = [("every row", ""),
           ("rowid =", "WHERE rowid = %d" % mid),
           ("rowid IN", "WHERE rowid IN (%d, %d, %d, -1)" % (f, mid, f + 1)),
           ("rowid range", "WHERE rowid > %d AND rowid <= %d" % (f, mid + step)),
           ("rowid >=", "WHERE rowid >= %d" % mid),
           ("DESC", "ORDER BY rowid DESC"),
           ("LIMIT/OFFSET", "ORDER BY rowid LIMIT 3 OFFSET 1")]
    if has_shard(module):
        out += [("shard =", "WHERE shard = %d" % e["shard"]),
                ("shard = other", "WHERE shard = %d" % (e["shard"] + 1)),
                ("shard IN", "WHERE shard IN (%d, 0)" % e["shard"])]
    return out


def check_case(conn, case):
    name, parts, options, split, cols = case
    path = os.path.join(FIXTURES, *parts)
    module = module_of(conn, path)
    opts = options + ("%ssplit_rows=%d" % (", " if options else "", split) if split else "")
    entries = [dict(shard=s, path=p, first_rowid=f, rows=n, open=o)
               for s, p, f, n, o in conn.execute(
                   "SELECT shard, path, first_rowid, rows, open_options FROM dataset_shards(?, ?)",
                   (path, opts))]
    nshards = len(set(e["shard"] for e in entries))
    step = nshards if "interleaved" in options else 1
    extra = ", shard, shard_index" if has_shard(module) else ""
    conn.execute("DROP TABLE IF EXISTS temp.whole")
    conn.execute("CREATE VIRTUAL TABLE temp.whole USING dataset(%s)" % ", ".join(
        [sql_quote(path)] + [sql_quote(o) for o in split_options(options)]))
    bad = []
    for e in entries:
        e["step"] = step
        ids = [e["first_rowid"] + k * step for k in range(e["rows"])]
        win = "rowid IN (%s)" % ", ".join(map(str, ids)) if ids else "0"
        conn.execute("DROP TABLE IF EXISTS temp.part")
        conn.execute("CREATE VIRTUAL TABLE temp.part USING dataset(%s)" % ", ".join(
            [sql_quote(e["path"])] +
            [sql_quote(o) for o in split_options(options) + split_options(e["open"])]))
        for label, tail in queries(module, e):
            got = conn.execute("SELECT rowid, %s%s FROM temp.part %s" % (cols, extra, tail)
                               ).fetchall()
            # the same query over the whole dataset's rows of the entry
            want = conn.execute(
                "SELECT * FROM (SELECT rowid AS rowid, %s%s FROM temp.whole WHERE %s) %s"
                % (cols, extra, win, tail)).fetchall()
            if got != want:
                bad.append((e["path"], e["open"], label, got[:3], want[:3]))
    conn.execute("DROP TABLE IF EXISTS temp.part")
    C.check(entries and not bad,
            "%s: %d entries, each shard's table equals the whole dataset's rows" % (
                name, len(entries)), bad[:2])
    return len(entries)


def bad_options(conn):
    p = os.path.join(FIXTURES, "bagz", "concat-00001-of-00004.bagz")
    C.raises(lambda: conn.execute("SELECT * FROM bagz(?, 'rowid_step=0')", (p,)).fetchall(),
             "rowid_step=0 is an error naming the option", "rowid_step")
    C.raises(lambda: conn.execute("SELECT * FROM bagz(?, 'first_rowid=-1')", (p,)).fetchall(),
             "first_rowid=-1 is an error naming the option", "first_rowid")
    C.raises(lambda: conn.execute(
        "SELECT * FROM bagz(?, 'first_rowid=9223372036854775800, rows=100')", (p,)).fetchall(),
        "rowids past 2^63 are an error", "overflow")


def dataset_files(tmp):
    """Files under tmp this process maps or holds open."""
    seen = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split(None, 5)[-1].strip()
            if p.startswith(tmp):
                seen.add(p)
    for fd in os.listdir("/proc/self/fd"):
        try:
            p = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if p.startswith(tmp):
            seen.add(p)
    return seen


def thousand_shards(conn, tmp):
    """1,000 bagz shards: a task's table holds one file; read_sql equals SQL."""
    import dask
    from sqlite_datasets.dask import _create_table, list_partitions, read_sql
    spec = os.path.join(tmp, "big@1000.bag")
    for k in range(1000):  # uncompressed bags: records, then their end offsets
        recs = [b"record %d of shard %d" % (i, k) for i in range(3)]
        ends = [sum(len(r) for r in recs[:i + 1]) for i in range(len(recs))]
        with open(os.path.join(tmp, "big-%05d-of-01000.bag" % k), "wb") as f:
            f.write(b"".join(recs) + b"".join(struct.pack("<Q", e) for e in ends))
    parts = list_partitions(spec)
    C.eq(len(parts), 1000, "1,000-shard bagz set: 1,000 partitions")
    import sqlite_datasets as sd
    task = sd.connect()
    try:
        _create_table(task, spec, "", "ds", parts[517])
        got = task.execute("SELECT rowid, shard, shard_index, record FROM ds").fetchall()
        files = dataset_files(tmp)
    finally:
        task.close()
    C.eq(sorted(os.path.basename(f) for f in files), ["big-00517-of-01000.bag"],
         "a task over shard 517 maps or holds open only that shard's file")
    whole = sd.connect()
    try:
        whole.execute("CREATE VIRTUAL TABLE temp.whole_set USING bagz(%s)" % sql_quote(spec))
        want = whole.execute("SELECT rowid, shard, shard_index, record FROM temp.whole_set "
                             "WHERE shard = 517").fetchall()
        nfiles = len(dataset_files(tmp))
    finally:
        whole.close()
    C.check(nfiles == 1000, "the whole dataset's table holds all 1,000 files (the count works)",
            nfiles)
    C.eq(got, want, "shard 517's task rows (rowid, shard, shard_index) equal the whole table's")
    sql = "SELECT rowid, shard, shard_index, length(record) AS n FROM ds"
    with dask.config.set(scheduler="synchronous"):
        df = read_sql(sql, spec).compute()
    got = sorted(tuple(int(v) for v in t) for t in df.itertuples(index=False))
    want = conn.execute("SELECT rowid, shard, shard_index, length(record) FROM bagz(?)",
                        (spec,)).fetchall()
    C.eq(got, want, "read_sql over 1,000 shards equals one connection's rows")


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    os.environ["SQLITE_DATASETS_EXTENSION"] = os.path.join(build, "datasets.so")
    import sqlite_datasets as sd
    conn = sd.connect()
    for case in CASES:
        C.run(check_case, conn, case, name="check_case %s" % (case[0],))
    C.run(bad_options, conn)
    tmp = tempfile.mkdtemp(prefix="ds_window_")
    try:
        C.run(thousand_shards, conn, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
