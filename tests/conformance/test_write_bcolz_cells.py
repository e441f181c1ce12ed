"""test_write_bcolz_cells.py - the bcolz writer table's shortcut row
(vtab/bcolz_write.c bcolz_table_xupdate: the module's xUpdate puts
INTEGER, REAL and TEXT values straight into the writer's open chunks,
past the table writer's layers) writes what the long way
(ds_table_update, bcolz_writer_add) writes, and refuses what it refuses.

Each case runs the same statements on two tables: "fast", whose columns
all take the shortcut (int64, i2, f8, bool, S4), and "slow", the same
columns and one U4 column more, which sends every row the long way. The
rows mix values the shortcut takes with values it leaves to the long way
in the middle of a row (an INTEGER for f8, a BLOB or JSON text for S4, a
value out of range, NULL), statements that fail part-way, SAVEPOINT /
ROLLBACK TO across chunk boundaries (chunklen=3) and COMMITs between,
explicit rowids, UPDATE and DELETE, a COMMIT that fails (the target
appeared), DROP TABLE in a transaction.
Both tables must give the same outcome for every statement (error text
included) and, once committed, the same cells and the same bytes in every
file of the five shared columns.
Usage: test_write_bcolz_cells.py BUILD_DIR"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds-write-cells-")
COLS = "a int64, b i2, c f8, d bool, e S4"
NAMES = ["a", "b", "c", "d", "e"]

GOOD = [(i * 7 - 20, i % 300 - 150, i / 4.0, i % 2, "r%d" % (i % 100)) for i in range(40)]
# values the shortcut leaves to the long way, one per row, at each column
ODD = [
    (1, 2, 7, 1, "ab"),                    # INTEGER into f8
    (3, 4, 0.5, 0, b"xy"),                 # BLOB into S4
    (5, 6, 1.5, 1, "j"),                   # the row after: back on the shortcut
    (2 ** 40, 40000, 2.5, 0, "cd"),        # out of i2's range: an error
    (7, 8, 3.5, 2, "ef"),                  # not a bool: an error
    (9, 10, 4.5, 1, "toolong"),            # wider than S4: an error
    (11, None, 5.5, 0, "gh"),              # NULL
    (None, 12, 6.5, 1, "ij"),
    (13, 14, None, 0, "kl"),
    (15, 16, 8.5, None, None),
    (17, 18, 9.5, 1, "a\x00"),             # ends in NUL: bcolz_cell_encode decides
    (19, 20, 10.5, 0, ""),
    ("21", 22, 11.5, 1, "mn"),             # TEXT into int64
    (23, 24, 12.5, 0, 25),                 # INTEGER into S4
]
ODD_WRITTEN = 6  # the ODD rows either way writes (the others: errors)


def pair(name):
    """A connection with table fast and table slow writing name_fast and
    name_slow."""
    conn = connect(BUILD)
    conn.isolation_level = None
    paths = {}
    for t, cols in (("fast", COLS), ("slow", COLS + ", z U4")):
        paths[t] = os.path.join(TMP, "%s_%s" % (name, t))
        conn.execute("CREATE VIRTUAL TABLE temp.%s USING bcolz(%s, mode=create, chunklen=3, "
                     "columns=%s)" % (t, sql_quote(paths[t]), sql_quote(cols)))
    return conn, paths


def both(conn, sql, *params):
    """sql run on fast and on slow ({t} names the table, {z} and {zv} add
    slow's column z and its value 'x'): the outcome of each (None or the
    error text)."""
    out = []
    for t in ("fast", "slow"):
        z, zv = (", z", ", 'x'") if t == "slow" else ("", "")
        try:
            conn.execute(sql.format(t=t, z=z, zv=zv), params)
            out.append(None)
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(str(e).replace("slow", "fast"))
    return out


def insert_rows(conn, rows, label, expect_error=None):
    """rows inserted one statement per row (expect_error None) or all in
    one INSERT ... SELECT (expect_error: True or False)."""
    if expect_error is None:
        written = 0
        for k, r in enumerate(rows):
            f, s = both(conn, "INSERT INTO {t}(a, b, c, d, e{z}) VALUES (?, ?, ?, ?, ?{zv})", *r)
            C.check(f == s, "%s: row %d (%r): the same outcome both ways" % (label, k, r),
                    "shortcut %r, long way %r" % (f, s))
            written += f is None
        return written
    conn.execute("DROP TABLE IF EXISTS temp.src")
    conn.execute("CREATE TEMP TABLE src(k INTEGER PRIMARY KEY, a, b, c, d, e)")
    conn.executemany("INSERT INTO temp.src(a, b, c, d, e) VALUES (?, ?, ?, ?, ?)", rows)
    f, s = both(conn, "INSERT INTO {t}(a, b, c, d, e{z}) SELECT a, b, c, d, e{zv} FROM temp.src "
                "ORDER BY k")
    C.check(f == s, "%s: one statement of %d rows: the same outcome both ways" % (label, len(rows)),
            "shortcut %r, long way %r" % (f, s))
    C.check((f is not None) == expect_error, "%s: the statement %s" %
            (label, "fails" if expect_error else "succeeds"), f)


def files(root):
    """{relative path: bytes} of the five shared columns' files."""
    out = {}
    for col in NAMES:
        for d, _, fs in os.walk(os.path.join(root, col)):
            for f in fs:
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, root)] = fh.read()
    return out


_reads = [0]


def same_tables(conn, paths, label, nrows):
    got = {}
    for t in ("fast", "slow"):
        _reads[0] += 1
        r = "temp.r%d" % _reads[0]
        conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s)" % (r, sql_quote(paths[t])))
        got[t] = conn.execute("SELECT a, b, c, d, e FROM %s ORDER BY rowid" % r).fetchall()
    C.eq(len(got["fast"]), nrows, "%s: %d rows written" % (label, nrows))
    C.eq(got["fast"], got["slow"], "%s: the same cells both ways" % label)
    ff, fs = files(paths["fast"]), files(paths["slow"])
    C.eq(sorted(ff), sorted(fs), "%s: the same files both ways" % label)
    diff = [p for p in ff if ff[p] != fs.get(p)]
    C.eq(diff, [], "%s: the same bytes in every file both ways" % label)


def case_rows():
    conn, paths = pair("rows")
    conn.execute("BEGIN")
    n = insert_rows(conn, GOOD[:5] + ODD + GOOD[5:9], "rows")
    C.eq(n, 9 + ODD_WRITTEN, "rows: the odd rows the long way takes are written")
    f, s = both(conn, "INSERT INTO {t}(a, b, c, d, e{z}) VALUES (1, 2, 3.0, 1, json('\"jj\"'){zv})")
    C.check(f == s, "rows: JSON text into S4: the same outcome both ways", (f, s))
    n += f is None
    conn.execute("COMMIT")
    same_tables(conn, paths, "rows", n)


def case_statements():
    conn, paths = pair("stmts")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[:4], "stmts 1", expect_error=False)
    # fails at its fifth row: the four before it (a chunk flushed) go back
    insert_rows(conn, GOOD[4:8] + [ODD[3]] + GOOD[8:10], "stmts 2", expect_error=True)
    insert_rows(conn, GOOD[10:17], "stmts 3", expect_error=False)
    insert_rows(conn, GOOD[17:20] + ODD[:3] + GOOD[20:22], "stmts 4", expect_error=False)
    conn.execute("COMMIT")
    same_tables(conn, paths, "stmts", 4 + 7 + 3 + 3 + 2)


def case_savepoints():
    conn, paths = pair("savepoints")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[:4], "savepoints 1", expect_error=False)
    conn.execute("SAVEPOINT s1")
    insert_rows(conn, GOOD[4:11], "savepoints 2", expect_error=False)
    conn.execute("ROLLBACK TO s1")  # back into the second chunk
    insert_rows(conn, GOOD[11:13], "savepoints 3", expect_error=False)
    conn.execute("SAVEPOINT s2")
    insert_rows(conn, GOOD[13:14], "savepoints 4")
    conn.execute("ROLLBACK TO s2")  # back within the open chunk
    insert_rows(conn, GOOD[14:20], "savepoints 5")
    conn.execute("RELEASE s2")
    conn.execute("COMMIT")
    same_tables(conn, paths, "savepoints", 4 + 2 + 6)
    # a second transaction: the published rows come back, then more
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[20:25], "savepoints 6", expect_error=False)
    conn.execute("COMMIT")
    same_tables(conn, paths, "savepoints, second commit", 4 + 2 + 6 + 5)


def case_rowids():
    conn, paths = pair("rowids")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[:5], "rowids 1", expect_error=False)
    # rows 5, 6 with their rowid (the next index), NULL; a wrong rowid
    for label, rowid, ok in (("the next index", 5, True), ("NULL", None, True),
                             ("not the next index", 3, False),
                             ("the next index again", 7, True)):
        f, s = both(conn, "INSERT INTO {t}(rowid, a, b, c, d, e{z}) VALUES (?, 1, 2, 3.5, 1, 'x'{zv})",
                    rowid)
        C.check(f == s, "rowids: rowid %s: the same outcome both ways" % label, (f, s))
        C.check((f is None) == ok, "rowids: rowid %s %s" % (label, "taken" if ok else "refused"), f)
    insert_rows(conn, GOOD[5:12], "rowids 2", expect_error=False)
    conn.execute("COMMIT")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[12:14], "rowids 3", expect_error=False)
    # after rows the shortcut took: UPDATE and DELETE (of published rows)
    # still refused
    for sql, label in (("UPDATE {t} SET a = 1 WHERE rowid = 2", "UPDATE"),
                       ("DELETE FROM {t} WHERE rowid = 2", "DELETE")):
        f, s = both(conn, sql)
        C.check(f is not None and f == s, "rowids: %s refused, the same error both ways" % label, (f, s))
    insert_rows(conn, GOOD[14:18], "rowids 4", expect_error=False)
    conn.execute("COMMIT")
    same_tables(conn, paths, "rowids", 5 + 3 + 7 + 2 + 4)


def case_failed_commit():
    # the targets appear after the rows went in (mode=create): COMMIT fails;
    # the tables' next statements say so, both ways alike
    conn, paths = pair("failed")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[:8], "failed 1", expect_error=False)
    for t in ("fast", "slow"):
        os.makedirs(paths[t])
        with open(os.path.join(paths[t], "theirs.txt"), "w") as fh:
            fh.write("not ours")
    try:
        conn.execute("COMMIT")
        committed = None
    except Exception as e:  # noqa: BLE001 - checked below
        committed = str(e)
    C.check(committed is not None, "failed: COMMIT over what appeared fails", committed)
    if not conn.in_transaction:
        conn.execute("BEGIN")
    f, s = both(conn, "INSERT INTO {t}(a, b, c, d, e{z}) VALUES (1, 2, 3.5, 1, 'x'{zv})")
    C.check(f == s, "failed: the next INSERT: the same outcome both ways", (f, s))
    conn.execute("ROLLBACK")
    for t in ("fast", "slow"):
        C.eq(sorted(os.listdir(paths[t])), ["theirs.txt"], "failed: %s: what appeared is untouched" % t)


def case_drop():
    # DROP TABLE inside the transaction after rows the shortcut took; a new
    # table on the same paths writes afresh
    conn, paths = pair("drop")
    conn.execute("BEGIN")
    insert_rows(conn, GOOD[:8], "drop 1", expect_error=False)
    conn.execute("DROP TABLE temp.fast")
    conn.execute("DROP TABLE temp.slow")
    conn.execute("COMMIT")
    for t in ("fast", "slow"):
        C.check(not os.path.exists(paths[t]), "drop: %s: nothing published" % t)
    conn2, paths2 = pair("drop")
    C.eq(paths2, paths, "drop: the same paths")
    insert_rows(conn2, GOOD[8:20], "drop 2", expect_error=False)
    same_tables(conn2, paths2, "drop", 12)


for fn in (case_rows, case_statements, case_savepoints, case_rowids, case_failed_commit,
           case_drop):
    C.run(fn)
shutil.rmtree(TMP, ignore_errors=True)
C.exit()
