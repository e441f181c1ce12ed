"""test_write_reconnect.py - writer tables that SQLite connects again, and
second commits, for bagz, datadings, atlas and bcolz.

1. A failed CREATE VIRTUAL TABLE in temp makes SQLite reset the temp
   schema and reconnect (xConnect) the writer tables already there: the
   reconnected table keeps its writer (no "already exists", no "another
   writer" from its own lock), reads what it published, and goes on
   writing; inside a transaction (the old and the new sqlite3_vtab both
   live until the COMMIT) the rows of both statements are committed once.
2. A second, third... commit on the same table appends, atomically: two
   autocommit INSERTs read back equal to one INSERT of all the rows (for
   atlas and bcolz the files too), a failing second statement and a
   ROLLBACK of the second transaction leave the first commit as it was.
3. ALTER TABLE ... RENAME TO of a writer table: the table keeps its writer
   under the new name (it goes on writing, a reconnect after a failed
   CREATE finds it, DROP frees its lock); inside a transaction the rename
   is refused (a ROLLBACK would bring the old name back).
4. ROLLBACK TO drops every trace of the rows it undoes, also what helper
   threads made of them (datadings' key hashes, the compressors' queues):
   rows 0-9, a savepoint, rows 100-149, ROLLBACK TO, rows 10-19, COMMIT
   writes the files one INSERT of rows 0-19 writes, byte for byte.
Usage: test_write_reconnect.py BUILD_DIR"""
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_write_reconnect_")
SERIES = "WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE i < %d) "
BAD_CREATE = "CREATE VIRTUAL TABLE temp.bad USING bagz('x.bagz', mode=create, level=99)"


def p(name):
    return os.path.join(TMP, name)


class Fmt:
    """A writer table of one format: its CREATE options, the columns an
    INSERT names, the row values for i, a value that fails, and how to read
    the rows back."""

    def __init__(self, module, ext, opts, cols, value, bad, read):
        self.module, self.ext, self.opts, self.cols = module, ext, opts, cols
        self.value, self.bad, self.read = value, bad, read

    def create(self, conn, table, name, mode="create"):
        conn.execute("CREATE VIRTUAL TABLE temp.%s USING %s(%s, mode=%s%s)"
                     % (table, self.module, sql_quote(p(name + self.ext)), mode, self.opts))

    def insert(self, conn, table, lo, hi, bad_at=None):
        v = self.value if bad_at is None else self.bad.replace("%d", str(bad_at))
        conn.execute("INSERT INTO %s(%s) " % (table, self.cols) + SERIES % (lo, hi) +
                     "SELECT %s FROM s" % v)

    def rows(self, name):
        """The dataset's rows through a fresh connection (None: absent)."""
        path = p(name + self.ext)
        if not os.path.exists(path):
            return None
        fresh = connect(BUILD)
        got = [tuple(r) for r in fresh.execute(self.read % self.module, (path,))]
        fresh.close()
        return got


FORMATS = [
    Fmt("bagz", ".bag", "", "record", "CAST(i AS TEXT)",
        "CASE WHEN i = %d THEN NULL ELSE CAST(i AS TEXT) END", "SELECT record FROM %s(?)"),
    Fmt("datadings", ".msgpack", "", "key, sample", "'k' || i, '{\"i\": ' || i || '}'",
        "CASE WHEN i = %d THEN 'k0' ELSE 'k' || i END, '{}'", "SELECT key, sample FROM %s(?)"),
    Fmt("atlas", ".atlas", ", block_size=4, shard_size=10, strategy=1", "example",
        "'{\"label\": ' || i || ', \"name\": \"n' || i || '\"}'",
        "CASE WHEN i = %d THEN 'not json' ELSE '{}' END", "SELECT example FROM %s(?)"),
    Fmt("bcolz", ".bcolz", ", chunklen=4, columns='id INTEGER, score REAL, name TEXT, raw BLOB'",
        "id, score, name, raw", "i, i / 4.0, 'n' || i, CAST('b' || i AS BLOB)",
        "CASE WHEN i = %d THEN 'x' ELSE i END, 0.0, 'n', x'01'",
        "SELECT * FROM %s(?)"),
]


def error_of(fn):
    """The text of the sqlite3.Error fn() raises ("" when none)."""
    try:
        fn()
        return ""
    except sqlite3.Error as e:
        return str(e)


def leftovers():
    return sorted(f for f in os.listdir(TMP) if ".ds-tmp." in f or f.endswith(".ds-lock"))


def tree(path):
    """{relative path: bytes} of a file or of every file below a directory."""
    if os.path.isfile(path):
        return {"": open(path, "rb").read()}
    out = {}
    for root, _, files in os.walk(path):
        for f in files:
            full = os.path.join(root, f)
            out[os.path.relpath(full, path)] = open(full, "rb").read()
    return out


def dataset_bytes(f, name):
    """Every file of dataset `name` of format f, {suffix or path: bytes}
    (datadings: the data file and its five index files beside it)."""
    base = p(name + f.ext)
    if f.module == "datadings":
        return {k: tree(base + k)[""] for k in
                ("", ".offsets", ".keys", ".key_hashes", ".filter", ".md5")}
    return tree(base)


for f in FORMATS:
    m = f.module
    # --- 1. reconnect after a failed CREATE, autocommit
    conn = connect(BUILD)
    conn.isolation_level = None
    f.create(conn, "w", "auto")
    f.insert(conn, "w", 0, 2)
    C.raises(lambda: conn.execute(BAD_CREATE), "%s: the second CREATE fails" % m, "level")
    n = []
    C.eq(error_of(lambda: n.append(conn.execute("SELECT count(*) FROM w").fetchone()[0])), "",
         "%s: the table reconnected after a failed CREATE reads" % m)
    C.eq(n, [3], "%s: ... what it published" % m)
    C.eq(error_of(lambda: f.insert(conn, "w", 3, 4)), "", "%s: the reconnected table goes on writing" % m)
    C.eq(len(f.rows("auto") or []), 5, "%s: the dataset holds both commits" % m)
    C.raises(lambda: f.create(conn, "w2", "auto", mode="replace"),
             "%s: a second table on the same path is still refused" % m, "another writer")
    conn.execute("DROP TABLE w")
    C.eq(leftovers(), [], "%s: DROP after a reconnect leaves no lock or temporary" % m)

    # --- 1b. the same inside a transaction: both sqlite3_vtabs share the writer
    f.create(conn, "t", "txn")
    conn.execute("BEGIN")
    f.insert(conn, "t", 0, 2)
    C.raises(lambda: conn.execute(BAD_CREATE), "%s: failed CREATE inside a transaction" % m, "level")
    C.eq(error_of(lambda: f.insert(conn, "t", 3, 4)), "",
         "%s: INSERT after the failed CREATE in the same transaction" % m)
    conn.execute("COMMIT")
    C.eq(len(f.rows("txn") or []), 5, "%s: the transaction's rows before and after, once" % m)
    C.eq(conn.execute("SELECT count(*) FROM t").fetchone()[0], 5,
         "%s: the table reads the transaction's commit" % m)
    conn.execute("DROP TABLE t")
    conn.close()
    C.eq(leftovers(), [], "%s: no lock or temporary after close" % m)

    # --- 1c. a connection closed while a reconnected writer is open
    conn = connect(BUILD)
    f.create(conn, "c", "closed")
    try:
        conn.execute(BAD_CREATE)
    except sqlite3.Error:
        pass
    conn.execute("SELECT count(*) FROM c").fetchone()
    conn.close()
    C.eq(leftovers(), [], "%s: closing the connection frees a kept writer (lock gone)" % m)

    # --- 2. second commits append
    conn = connect(BUILD)
    conn.isolation_level = None
    f.create(conn, "one", "one")
    f.insert(conn, "one", 0, 22)
    f.create(conn, "two", "two")
    f.insert(conn, "two", 0, 9)
    f.insert(conn, "two", 10, 22)
    C.eq(f.rows("two"), f.rows("one"), "%s: two autocommit INSERTs read back as one INSERT" % m)
    C.eq(conn.execute("SELECT count(*) FROM two").fetchone()[0], 23,
         "%s: the table reads both commits" % m)
    if m in ("atlas", "bcolz"):
        C.eq(tree(p("two" + f.ext)), tree(p("one" + f.ext)),
             "%s: two commits write the files one commit writes" % m)
    # a third commit
    f.insert(conn, "two", 23, 25)
    C.eq(len(f.rows("two")), 26, "%s: a third commit appends" % m)
    before = tree(p("two" + f.ext))
    # a failing statement leaves the earlier commits
    C.raises(lambda: f.insert(conn, "two", 26, 40, bad_at=30), "%s: a failing later statement" % m, "30")
    C.eq(tree(p("two" + f.ext)), before, "%s: a failed later statement leaves the files" % m)
    C.eq(conn.execute("SELECT count(*) FROM two").fetchone()[0], 26,
         "%s: ... and the table's rows" % m)
    # ROLLBACK of a later transaction
    conn.execute("BEGIN")
    f.insert(conn, "two", 26, 30)
    conn.execute("ROLLBACK")
    C.eq(tree(p("two" + f.ext)), before, "%s: ROLLBACK of a later transaction leaves the files" % m)
    # ROLLBACK TO inside a later transaction
    conn.execute("BEGIN")
    f.insert(conn, "two", 26, 27)
    conn.execute("SAVEPOINT s")
    f.insert(conn, "two", 28, 30)
    conn.execute("ROLLBACK TO s")
    conn.execute("COMMIT")
    got = f.rows("two")
    C.eq(len(got), 28, "%s: ROLLBACK TO in a later transaction keeps its rows before the savepoint" % m)
    C.eq(leftovers(), [l for l in leftovers() if l.endswith(".ds-lock")],
         "%s: no temporary after later commits" % m)
    conn.close()
    C.eq(leftovers(), [], "%s: nothing left after close" % m)

    # --- 3. ALTER TABLE RENAME keeps the writer
    conn = connect(BUILD)
    conn.isolation_level = None
    f.create(conn, "old", "renamed")
    f.insert(conn, "old", 0, 2)
    C.eq(error_of(lambda: conn.execute("ALTER TABLE old RENAME TO new")), "",
         "%s: a writer table can be renamed" % m)
    C.eq(error_of(lambda: f.insert(conn, "new", 3, 4)), "",
         "%s: the renamed table goes on writing" % m)
    C.eq(len(f.rows("renamed") or []), 5, "%s: ... into the same dataset" % m)
    C.raises(lambda: conn.execute(BAD_CREATE), "%s: a failed CREATE after the rename" % m, "level")
    C.eq(error_of(lambda: f.insert(conn, "new", 5, 5)), "",
         "%s: the renamed table reconnected under its new name keeps its writer" % m)
    C.eq(conn.execute("SELECT count(*) FROM new").fetchone()[0], 6,
         "%s: ... and reads what it published" % m)
    conn.execute("BEGIN")
    f.insert(conn, "new", 6, 6)
    C.raises(lambda: conn.execute("ALTER TABLE new RENAME TO newer"),
             "%s: renaming inside a transaction is refused" % m, "inside a transaction")
    conn.execute("COMMIT")
    C.eq(len(f.rows("renamed") or []), 7, "%s: the transaction around the refused rename commits" % m)
    conn.execute("DROP TABLE new")
    C.eq(leftovers(), [], "%s: DROP of a renamed writer table frees its lock" % m)
    conn.close()

    # --- 4. ROLLBACK TO leaves no trace in the files
    os.makedirs(p("sp_a"), exist_ok=True)
    os.makedirs(p("sp_b"), exist_ok=True)
    conn = connect(BUILD)
    conn.isolation_level = None
    f.create(conn, "spa", "sp_a/same")
    conn.execute("BEGIN")
    f.insert(conn, "spa", 0, 9)
    conn.execute("SAVEPOINT s")
    f.insert(conn, "spa", 100, 149)
    conn.execute("ROLLBACK TO s")
    f.insert(conn, "spa", 10, 19)
    conn.execute("COMMIT")
    f.create(conn, "spb", "sp_b/same")
    f.insert(conn, "spb", 0, 19)
    a, b = dataset_bytes(f, "sp_a/same"), dataset_bytes(f, "sp_b/same")
    C.eq(len(f.rows("sp_a/same")), 20, "%s: ROLLBACK TO keeps the 20 rows around it" % m)
    C.eq(a, b, "%s: rows, savepoint, rows rolled back, rows: the files of one INSERT" % m)
    conn.close()

# --- 5. the options a writer table reads its own output with are the
# options as given (they were written back to text and parsed again: a
# value holding '' lost a quote, and the table read back nothing)
conn = connect(BUILD)
conn.isolation_level = None
with open(p("it''s.dict"), "wb") as fd:
    fd.write(b"hello world, a raw zstd dictionary " * 64)
conn.execute("CREATE VIRTUAL TABLE temp.qd USING bagz(%s, mode=create, dictionary=%s)"
             % (sql_quote(p("qd.bagz")), sql_quote(p("it''s.dict"))))
conn.execute("INSERT INTO qd(record) VALUES (?)", (b"hello world" * 3,))
C.eq(conn.execute("SELECT record FROM qd").fetchall(), [(b"hello world" * 3,)],
     "a writer table reads back with its options as given (a '' in a dictionary path)")
conn.close()

shutil.rmtree(TMP)
C.exit()
