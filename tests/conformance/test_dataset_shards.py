"""test_dataset_shards.py - dataset_shards(path [, options]) over sharded
upstream fixtures of every format and a generated 1,000-shard bagz set.

Each entry is checked against the format's own module: a whole shard's
path opened alone has `rows` rows; first_rowid is the rowid the whole
dataset gives that row (min(rowid) of the shard in bagz and atlas, the
running total in datadings); `bytes` against the file system (bagz file and
limits file, datadings file and index files, every file under an atlas
shard folder or bcolz root); split_rows ranges tile every shard and their
bytes are the stored records (uncompressed bagz: the records' lengths;
datadings: the raw samples' lengths). Options of each format's module (as
its "unknown option" error lists them) are accepted; others are errors, as
is a corrupt shard (naming the file).
Usage: test_dataset_shards.py BUILD_DIR"""
import os
import shutil
import sqlite3
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

C = Checker()
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
conn = connect(BUILD)
TMP = tempfile.mkdtemp(prefix="ds_shards_")

BAGZ = os.path.join(FIXTURES, "bagz")
DD = os.path.join(FIXTURES, "datadings")
ATLAS = os.path.join(FIXTURES, "atlas")
BCOLZ = os.path.join(FIXTURES, "bcolz")


def shards(path, options=None):
    args = sql_quote(path) + ("" if options is None else ", " + sql_quote(options))
    return conn.execute("SELECT shard, path, first_rowid, rows, bytes, shard_index "
                        "FROM dataset_shards(%s)" % args).fetchall()


def _count(path, options=""):
    conn.execute("DROP TABLE IF EXISTS temp.one")
    args = ", ".join([sql_quote(path)] + ([sql_quote(options)] if options else []))
    conn.execute("CREATE VIRTUAL TABLE temp.one USING dataset(%s)" % args)
    n = conn.execute("SELECT count(*) FROM temp.one").fetchone()[0]
    conn.execute("DROP TABLE temp.one")
    return n


def tree_bytes(d):
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            if os.path.isfile(p) and not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def sibling_bytes(path, suffixes):
    return sum(os.path.getsize(path + s) for s in suffixes if os.path.isfile(path + s))


DD_SUFFIXES = ["", ".offsets", ".keys", ".key_hashes", ".filter", ".md5", ".index"]


def check_whole(name, path, rows_by_shard_sql, file_bytes, options=None, alone=True):
    """Whole-shard entries against the module and the file system (alone:
    each shard's path also opens by itself)."""
    got = shards(path, options)
    C.check(len(got) > 0, name + " has shards")
    C.eq([g[0] for g in got], list(range(len(got))), name + " shard numbers")
    total = _count(path, options or "")
    C.eq(sum(g[3] for g in got), total, name + " rows add up to count(*)")
    for s, p, first, rows, nbytes, idx in got:
        if alone:
            C.eq(_count(p), rows, "%s shard %d alone has `rows` rows" % (name, s))
        C.eq(nbytes, file_bytes(p), "%s shard %d bytes" % (name, s))
        C.eq(idx, 0, "%s shard %d shard_index" % (name, s))
    if rows_by_shard_sql:
        want = dict((s, (lo, n)) for s, lo, n in conn.execute(rows_by_shard_sql))
        for s, p, first, rows, nbytes, idx in got:
            if rows:
                C.eq((first, rows), want.get(s), "%s shard %d first_rowid and rows" % (name, s))
    else:
        run = 0
        for s, p, first, rows, nbytes, idx in got:
            C.eq(first, run, "%s shard %d first_rowid is the running total" % (name, s))
            run += rows
    return got


def check_split(name, path, whole, n, options=None, range_bytes=None, stride=None):
    """split_rows=n ranges tile each shard of `whole`."""
    opts = "split_rows=%d" % n + ("" if options is None else ", " + options)
    got = shards(path, opts)
    for s, p, first, rows, nbytes, idx in whole:
        mine = [g for g in got if g[0] == s]
        C.check(all(g[1] == p for g in mine), "%s split shard %d paths" % (name, s))
        C.eq([g[5] for g in mine], list(range(0, rows, n)) or [0],
             "%s split shard %d starts" % (name, s))
        C.eq(sum(g[3] for g in mine), rows, "%s split shard %d rows" % (name, s))
        C.check(all(g[3] <= n for g in mine), "%s split shard %d at most %d rows" % (name, s, n))
        step = stride(len(whole)) if stride else 1
        C.eq([g[2] for g in mine], [first + g[5] * step for g in mine],
             "%s split shard %d first_rowid" % (name, s))
        for g in mine:
            if range_bytes and g[3]:
                C.eq(g[4], range_bytes(g, step), "%s range %d+%d bytes" % (name, g[2], g[3]))
            elif g[3]:
                C.check(0 < g[4] <= nbytes, "%s range %d+%d bytes within the shard's"
                        % (name, g[2], g[3]), g)
    return got


# ---- bagz: concatenated, interleaved, separate limits
w = check_whole("bagz concat", os.path.join(BAGZ, "concat@4.bagz"),
                "SELECT shard, min(rowid), count(*) FROM bagz(%s) GROUP BY shard"
                % sql_quote(os.path.join(BAGZ, "concat@4.bagz")),
                os.path.getsize)
check_split("bagz concat", os.path.join(BAGZ, "concat@4.bagz"), w, 3)
inter = os.path.join(BAGZ, "inter@3.bagz")
w = check_whole("bagz interleaved", inter,
                "SELECT shard, min(rowid), count(*) FROM bagz(%s, 'layout=interleaved') "
                "GROUP BY shard" % sql_quote(inter), os.path.getsize, "layout=interleaved")
check_split("bagz interleaved", inter, w, 4, "layout=interleaved", stride=lambda k: k)
sep = os.path.join(BAGZ, "sepset@2.bagz")
check_whole("bagz separate", sep,
            "SELECT shard, min(rowid), count(*) FROM bagz(%s, 'limits=separate') GROUP BY shard"
            % sql_quote(sep),
            lambda p: os.path.getsize(p) + os.path.getsize(
                os.path.join(os.path.dirname(p), "limits." + os.path.basename(p))))

# ---- uncompressed bagz (generated): a range's bytes are its records' lengths
def write_bag(path, records):
    with open(path, "wb") as f:
        ends, pos = [], 0
        for r in records:
            f.write(r)
            pos += len(r)
            ends.append(pos)
        f.write(b"".join(struct.pack("<Q", e) for e in ends))


for k in range(3):
    write_bag(os.path.join(TMP, "raw-%05d-of-00003.bag" % k),
              [b"x" * (k * 7 + i) for i in range(5 + k)])
raw = os.path.join(TMP, "raw@3.bag")
w = check_whole("bag raw", raw, "SELECT shard, min(rowid), count(*) FROM bagz(%s) GROUP BY shard"
                % sql_quote(raw), os.path.getsize)


def bag_range_bytes(g, step):
    return conn.execute("SELECT sum(length(record)) FROM bagz(%s) WHERE rowid >= ? AND rowid < ?"
                        % sql_quote(raw), (g[2], g[2] + g[3])).fetchone()[0]


check_split("bag raw", raw, w, 2, range_bytes=bag_range_bytes)

# ---- datadings glob
dd = os.path.join(DD, "sharded", "part-*.msgpack")
w = check_whole("datadings", dd, None, lambda p: sibling_bytes(p, DD_SUFFIXES))


def dd_range_bytes(g, step):
    return conn.execute("SELECT sum(length(raw)) FROM datadings(%s) WHERE rowid >= ? AND rowid < ?"
                        % sql_quote(dd), (g[2], g[2] + g[3])).fetchone()[0]


check_split("datadings", dd, w, 2, range_bytes=dd_range_bytes)

# ---- atlas dataset root and a bare shard
for name in ("many_shards", "standard"):
    root = os.path.join(ATLAS, name)
    w = check_whole("atlas " + name, root,
                    "SELECT shard, min(rowid), count(*) FROM atlas(%s) GROUP BY shard"
                    % sql_quote(root), tree_bytes, alone=False)
    check_split("atlas " + name, root, w, 3)
bare = shards(os.path.join(ATLAS, "single_shard"))
C.eq([(b[0], b[2], b[3]) for b in bare], [(0, 0, _count(os.path.join(ATLAS, "single_shard")))],
     "atlas bare shard is one shard")

# ---- bcolz: one shard; ranges
for name in ("ctable_basic", "carray_int32"):
    root = os.path.join(BCOLZ, name)
    w = check_whole("bcolz " + name, root, None, tree_bytes)
    C.eq(len(w), 1, "bcolz %s is one shard" % name)
    check_split("bcolz " + name, root, w, 7000)

# ---- options: each module's own are accepted, others refused
# (the options of writer tables, mode=create|replace, describe a dataset to
# write: dataset_shards lists one that exists)
WRITING_OPTIONS = {"mode", "level", "rows_per_shard", "block_size", "strategy", "dict_size",
                   "shard_size", "chunklen", "expectedlen", "cname", "clevel", "shuffle"}
for fmt, path in (("bagz", os.path.join(BAGZ, "concat@4.bagz")), ("datadings", dd),
                  ("atlas", os.path.join(ATLAS, "many_shards")),
                  ("bcolz", os.path.join(BCOLZ, "ctable_basic"))):
    conn.execute("DROP TABLE IF EXISTS temp.probe")
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.probe USING %s(%s, no_such_option=1)"
                     % (fmt, sql_quote(path)))
        C.check(False, fmt + " module refuses an unknown option")
        continue
    except sqlite3.Error as e:
        msg = str(e)
    known = msg.split("known options: ")[-1].rstrip(")").split(", ")
    C.check(len(known) > 1, fmt + " module lists its options", msg)
    for opt in known:
        if opt in WRITING_OPTIONS:  # a writer table's, not a dataset's
            continue
        value = {"limits": "tail", "layout": "concatenated"}.get(opt, "1")
        try:
            shards(path, "%s=%s" % (opt, value))
            C.check(True, "%s: dataset_shards takes %s" % (fmt, opt))
        except sqlite3.Error as e:
            C.check("unknown option" not in str(e), "%s: dataset_shards takes %s" % (fmt, opt), e)
    C.raises(lambda: shards(path, "no_such_option=1"), fmt + " unknown option refused",
             "dataset_shards", "no_such_option")
C.raises(lambda: shards(os.path.join(BCOLZ, "ctable_basic"), "split_rows=0"),
         "split_rows=0 refused", "split_rows")
C.raises(lambda: shards(os.path.join(TMP, "nope@3.bagz")), "missing files", "dataset_shards",
         "nope")
C.raises(lambda: conn.execute("SELECT * FROM dataset_shards()").fetchall(), "no path",
         "dataset_shards")

# ---- a corrupt shard names its file
bad = os.path.join(TMP, "bad")
os.mkdir(bad)
for k in range(2):
    write_bag(os.path.join(bad, "b-%05d-of-00002.bag" % k), [b"abc", b"de"])
with open(os.path.join(bad, "b-00001-of-00002.bag"), "r+b") as f:
    f.seek(-8, 2)
    f.write(struct.pack("<Q", 1 << 40))
C.raises(lambda: shards(os.path.join(bad, "b@2.bag")), "corrupt shard named",
         "dataset_shards", "b-00001-of-00002.bag")

# ---- 1,000 shards: every one listed, counts right
many = os.path.join(TMP, "many")
os.mkdir(many)
for k in range(1000):
    write_bag(os.path.join(many, "m-%05d-of-01000.bag" % k), [b"r"] * (k % 3))
got = shards(os.path.join(many, "m@1000.bag"))
C.eq(len(got), 1000, "1000 shards listed")
C.eq([g[3] for g in got], [k % 3 for k in range(1000)], "1000 shards' rows")
firsts, run = [], 0
for k in range(1000):
    firsts.append(run)
    run += k % 3
C.eq([g[2] for g in got], firsts, "1000 shards' first_rowid")

shutil.rmtree(TMP)
C.exit()
