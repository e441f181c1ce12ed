"""test_write_atomic.py - what is atomic when writing datasets, for bagz,
datadings, tfrecord and the directory datasets atlas and bcolz: ROLLBACK, a statement failing at row 100 of 1000 (alone, and
inside a transaction), ROLLBACK TO a savepoint, mode=create over an
existing dataset, mode=replace (another connection reads the old data until
the commit), a connection closed without commit, and a writer process
killed with SIGKILL in the middle of a large INSERT (the target stays as it
was, and the next writer of the path removes the dead writer's
temporaries). Usage: test_write_atomic.py BUILD_DIR"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_write_atomic_")
_n = [0]

SERIES = "WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %d) "


def p(name):
    return os.path.join(TMP, name)


def temporaries():
    return sorted(f for f in os.listdir(TMP) if ".ds-tmp." in f or f.endswith(".ds-lock"))


def snapshot(keep):
    """{path: bytes} of every file below TMP whose top-level name passes keep
    (directory datasets included)."""
    out = {}
    for x in os.listdir(TMP):
        if not keep(x):
            continue
        if os.path.isdir(p(x)):
            for root, _, files in os.walk(p(x)):
                for f in files:
                    out[os.path.join(root, f)] = open(os.path.join(root, f), "rb").read()
        else:
            out[p(x)] = open(p(x), "rb").read()
    return out


def tree_size(path):
    """Bytes of a file, or of every file below a directory."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


class Fmt:
    """How to make a writer, insert rows and read them for one format."""

    def __init__(self, module, ext, cols, value_sql, bad_sql, big_sql=None):
        self.module, self.ext, self.cols = module, ext, cols
        self.value_sql, self.bad_sql = value_sql, bad_sql
        self.big_sql = big_sql or value_sql  # rows of the SIGKILL case

    def writer(self, conn, name, mode="create"):
        _n[0] += 1
        t = "temp.w%d" % _n[0]
        conn.execute("CREATE VIRTUAL TABLE %s USING %s(%s, mode=%s)"
                     % (t, self.module, sql_quote(p(name + self.ext)), mode))
        return t

    def insert(self, conn, t, n, start=0, fail_at=None):
        v = self.bad_sql.replace("%d", str(fail_at)) if fail_at is not None else self.value_sql
        conn.execute(("INSERT INTO %s(%s) " % (t, self.cols)) + (SERIES % (n - 1)) +
                     "SELECT %s FROM s" % v.replace("{i}", "(i + %d)" % start))

    def count(self, conn, name):
        """Rows of the dataset on disk (a fresh connection: a table-valued
        call's cache looks for changed files at most every 100 ms)."""
        path = p(name + self.ext)
        if not os.path.exists(path):
            return None
        fresh = connect(BUILD)
        n = fresh.execute("SELECT count(*) FROM %s(?)" % self.module, (path,)).fetchone()[0]
        fresh.close()
        return n


FORMATS = [
    Fmt("bagz", ".bag", "record", "CAST({i} AS TEXT)",
        "CASE WHEN {i} = %d THEN NULL ELSE CAST({i} AS TEXT) END"),
    Fmt("datadings", ".msgpack", "key, sample", "'k' || {i}, '{\"i\": ' || {i} || '}'",
        "CASE WHEN {i} = %d THEN 'k0' ELSE 'k' || {i} END, '{}'"),
    Fmt("atlas", ".atlas", "example", "'{\"i\": ' || {i} || '}'",
        "CASE WHEN {i} = %d THEN 'not json' ELSE '{\"i\": ' || {i} || '}' END"),
    Fmt("bcolz", ".bcolz", "value", "{i}", "CASE WHEN {i} = %d THEN 'x' ELSE {i} END",
        "random()"),  # blosc packs a series of integers too well to grow
    Fmt("tfrecord", ".tfrecord", "record", "CAST({i} AS TEXT)",
        "CASE WHEN {i} = %d THEN NULL ELSE CAST({i} AS TEXT) END"),
]

for f in FORMATS:
    m = f.module
    conn = connect(BUILD)
    # ROLLBACK leaves nothing
    t = f.writer(conn, "rb")
    f.insert(conn, t, 1000)
    conn.rollback()
    C.eq(f.count(conn, "rb"), None, "%s: ROLLBACK leaves no dataset" % m)
    C.eq(conn.execute("SELECT count(*) FROM %s" % t).fetchone()[0], 0, "%s: the table is empty again" % m)
    C.eq([x for x in temporaries() if ".ds-tmp." in x], [], "%s: ROLLBACK leaves no temporary" % m)
    # a statement failing at row 100 of 1000: alone, nothing
    t = f.writer(conn, "fail")
    C.raises(lambda: f.insert(conn, t, 1000, fail_at=100), "%s: statement fails at row 100" % m, "100")
    conn.commit()
    C.eq(f.count(conn, "fail"), None, "%s: the failed statement wrote nothing" % m)
    # ... inside a transaction: the earlier statement's rows stay
    f.insert(conn, t, 5)
    C.raises(lambda: f.insert(conn, t, 1000, start=5, fail_at=105), "%s: fails at row 100 in a txn" % m, "105")
    conn.commit()
    C.eq(f.count(conn, "fail"), 5, "%s: only the rows of the statement that succeeded" % m)
    # ROLLBACK TO a savepoint
    t = f.writer(conn, "sp")
    conn.isolation_level = None
    conn.execute("BEGIN")
    f.insert(conn, t, 10)
    conn.execute("SAVEPOINT a")
    f.insert(conn, t, 10, start=10)
    conn.execute("SAVEPOINT b")
    f.insert(conn, t, 10, start=20)
    conn.execute("ROLLBACK TO b")
    f.insert(conn, t, 3, start=30)
    conn.execute("ROLLBACK TO a")
    f.insert(conn, t, 2, start=40)
    conn.execute("RELEASE a")
    conn.execute("COMMIT")
    conn.isolation_level = ""
    C.eq(f.count(conn, "sp"), 12, "%s: ROLLBACK TO keeps the rows before the savepoint" % m)
    if m in ("bagz", "tfrecord"):
        got = [r[0] for r in conn.execute("SELECT record FROM %s(?)" % m, (p("sp" + f.ext),))]
        C.eq(got, [str(i).encode() for i in list(range(10)) + [40, 41]], "%s: ROLLBACK TO rows in order" % m)
    elif m in ("atlas", "bcolz"):
        sql = "SELECT json_extract(example, '$.i') FROM atlas(?)" if m == "atlas" else "SELECT row FROM bcolz(?)"
        got = [int(r[0]) for r in conn.execute(sql, (p("sp" + f.ext),))]
        C.eq(got, list(range(10)) + [40, 41], "%s: ROLLBACK TO rows in order" % m)
    else:
        got = [r[0] for r in conn.execute("SELECT key FROM datadings(?)", (p("sp.msgpack"),))]
        C.eq(got, ["k%d" % i for i in list(range(10)) + [40, 41]], "datadings: ROLLBACK TO rows in order")
        C.eq([r[3] for r in conn.execute("SELECT * FROM datadings_verify(?)", (p("sp.msgpack"),))], [1] * 5,
             "datadings: md5 right after ROLLBACK TO")
    conn.execute("DROP TABLE %s" % t)  # its writer lock goes with it
    # mode=create over an existing dataset: refused, untouched
    before = snapshot(lambda x: x.startswith("sp."))
    C.raises(lambda: f.writer(conn, "sp"), "%s: mode=create refuses an existing dataset" % m, "already exists")
    C.eq(snapshot(lambda x: x.startswith("sp.")), before,
         "%s: mode=create left the files untouched" % m)
    # mode=replace: another connection sees the old data until the commit
    other = connect(BUILD)
    t = f.writer(conn, "sp", mode="replace")
    f.insert(conn, t, 100, start=1000)
    C.eq(f.count(other, "sp"), 12, "%s: replace: old data readable before the commit" % m)
    conn.commit()
    C.eq(f.count(other, "sp"), 100, "%s: replace: new data after the commit" % m)
    other.close()
    conn.execute("DROP TABLE %s" % t)
    # a connection closed without commit
    t = f.writer(conn, "closed")
    f.insert(conn, t, 50)
    conn.close()
    C.eq(os.path.exists(p("closed" + f.ext)), False, "%s: close without commit writes nothing" % m)
    C.eq(temporaries(), [], "%s: no temporary or lock left" % m)

# A writer killed with SIGKILL in the middle of a large INSERT
for f in FORMATS:
    m = f.module
    path = p("sp" + f.ext)
    old = snapshot(lambda x: x.startswith("sp.") or x == "sp" + f.ext)
    script = ("import sqlite3, sys\n"
              "conn = sqlite3.connect(':memory:')\n"
              "conn.enable_load_extension(True)\n"
              "conn.load_extension(sys.argv[1])\n"
              "conn.execute(\"CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=replace)\")\n"
              "conn.execute(\"\"\"%sINSERT INTO w(%s) SELECT %s FROM s\"\"\")\n"
              "conn.commit()\n" % (m, sql_quote(path).replace('"', '\\"'), SERIES % 50000000, f.cols,
                                   f.big_sql.replace("{i}", "i").replace('"', '\\"')))
    child = subprocess.Popen([sys.executable, "-c", script, os.path.join(BUILD, "datasets")])
    deadline = time.time() + 60
    grown = False
    while time.time() < deadline and child.poll() is None:
        tmps = [x for x in os.listdir(TMP) if ".ds-tmp." in x]
        if any(tree_size(p(x)) > (4 << 20) for x in tmps):
            grown = True
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    C.check(grown, "%s: the child was killed in the middle of its INSERT" % m)
    now = snapshot(lambda x: x.startswith("sp.") or x == "sp" + f.ext)
    C.check(now == old, "%s: after SIGKILL the old dataset is untouched" % m)
    C.check(any(".ds-tmp." in x for x in os.listdir(TMP)), "%s: the dead writer left temporaries" % m)
    conn = connect(BUILD)
    C.eq(f.count(conn, "sp"), 100, "%s: the old dataset still reads" % m)
    t = f.writer(conn, "sp", mode="replace")
    C.eq([x for x in os.listdir(TMP) if ".ds-tmp." in x], [], "%s: the next writer removed them" % m)
    conn.close()
    C.eq(temporaries(), [], "%s: nothing left after the next writer" % m)

shutil.rmtree(TMP)
C.exit()
