"""test_rowid_overflow.py - a row window whose rowids would pass SQLite's
largest integer (issue 20 item 10): first_rowid + (rows - 1) * rowid_step
above 9223372036854775807 is an error that names the file and the options,
in every format and both forms, never rowids that wrap to negative. A window
that ends exactly at the largest rowid reads every row with the rowids
first_rowid + i * rowid_step.
Each format gets a 3-row dataset written here by its writer.
Usage: test_rowid_overflow.py BUILD_DIR"""
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.mkdtemp(prefix="ds_rowid_overflow_")
TOP = 2 ** 63 - 1
N = 3

# module, file name, CREATE options, column, three values
FORMATS = [("bagz", "x.bagz", "", "record", "('a'),('b'),('c')"),
           ("datadings", "x.msgpack", "", "sample",
            "('{\"key\":\"a\"}'),('{\"key\":\"b\"}'),('{\"key\":\"c\"}')"),
           ("atlas", "x_atlas", ", columns='a INTEGER'", "a", "(1),(2),(3)"),
           ("bcolz", "x.bcolz", ", columns='a i8'", "a", "(1),(2),(3)")]
_n = [0]


def rows(sql):
    return conn.execute(sql).fetchall()


for mod, name, cols, col, vals in FORMATS:
    path = os.path.join(TMP, name)
    conn.execute("CREATE VIRTUAL TABLE temp.w_%s USING %s(%s, mode=create%s)"
                 % (mod, mod, sql_quote(path), cols))
    conn.execute("INSERT INTO w_%s(%s) VALUES %s" % (mod, col, vals))
    conn.commit()
    for first, step in ((TOP, 1), (TOP - 1, 1), (TOP - 2 ** 32, 2 ** 32),
                        (TOP - 2 * 2 ** 32 + 1, 2 ** 32)):
        opts = "first_rowid=%d, rowid_step=%d" % (first, step)
        fits = first + (N - 1) * step <= TOP
        for form in ("tvf", "create"):
            if form == "tvf":
                src = "%s(%s, %s)" % (mod, sql_quote(path), sql_quote(opts.replace(" ", "")))
            else:
                _n[0] += 1
                src = "temp.r%d" % _n[0]
                conn.execute("CREATE VIRTUAL TABLE %s USING %s(%s, %s)"
                             % (src, mod, sql_quote(path), opts))
            label = "%s %s %s" % (mod, form, opts)
            q = "SELECT rowid FROM %s ORDER BY rowid" % src
            if fits:
                try:
                    got = [r[0] for r in rows(q)]
                except sqlite3.Error as e:
                    got = e
                C.eq(got, [first + i * step for i in range(N)], label + ": every rowid")
            else:
                C.raises(lambda: rows(q), label + ": rowids past the largest are an error",
                         mod + ": ", name, "first_rowid=%d" % first, "rowid_step=%d" % step,
                         str(TOP))
                C.raises(lambda: rows("SELECT min(rowid) FROM %s" % src),
                         label + ": min(rowid) is an error", name, "first_rowid")
                # the same window cut to the rows that fit reads them
                fit = (TOP - first) // step + 1
                sub = src if form == "create" else None
                if form == "tvf":
                    sub = "%s(%s, %s)" % (mod, sql_quote(path),
                                          sql_quote(opts.replace(" ", "") + ",rows=%d" % fit))
                    C.eq([r[0] for r in rows("SELECT rowid FROM %s ORDER BY rowid" % sub)],
                         [first + i * step for i in range(fit)],
                         label + ": rows=%d reads the rows that fit" % fit)

shutil.rmtree(TMP)
C.exit()
