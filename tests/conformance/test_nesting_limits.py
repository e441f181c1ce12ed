"""test_nesting_limits.py - writers refuse what their readers would refuse
(issue 20 item 9): a value nested deeper than the reader's limit is an
error at INSERT naming the row, and every value a writer accepts reads back
equal. datadings: msgpack containers nest at most 32 levels (msgpack-c's
parser stack; the sample's map is the first), through `sample` JSON and a
`columns=` JSON column. atlas: pickle containers nest at most 1000 levels
(the block's list is the first), through `example` JSON and a JSON column.
Lists around each limit are written one per table; the deepest accepted
reads back as written, the first refused leaves nothing published.
Usage: test_nesting_limits.py BUILD_DIR"""
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
TMP = tempfile.mkdtemp(prefix="ds_nesting_")
_n = [0]


INNER = [""]


def nested(k):
    """k lists, one inside the other, the innermost holding INNER[0]."""
    return "[" * k + INNER[0] + "]" * k


def table(mod, path, opts=""):
    _n[0] += 1
    t = "temp.w%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING %s(%s, mode=create%s)"
                 % (t, mod, sql_quote(path), opts))
    return t


def try_write(mod, path, opts, sql, params):
    """Write one row; None when accepted, else the error text."""
    t = table(mod, path, opts)
    try:
        conn.execute(sql % t, params)
        conn.commit()
        return None
    except sqlite3.Error as e:
        conn.rollback()
        return str(e)


# module, form, levels the row adds around the lists, the limit, writer
# options, INSERT, its parameters, the read, the JSON it should give (no
# spaces: Python's json cannot parse 1000 levels), the row's name
CASES = [
    ("datadings", "sample", 1, 32, "",
     "INSERT INTO %s(sample) VALUES (?)", lambda k: ('{"key": "a", "v": %s}' % nested(k),),
     "SELECT sample FROM datadings(?)", lambda k: '{"key":"a","v":%s}' % nested(k), "sample 0"),
    ("datadings", "columns", 1, 32, ", columns='v JSON'",
     "INSERT INTO %s(key, v) VALUES ('a', ?)", lambda k: (nested(k),),
     "SELECT sample FROM datadings(?)", lambda k: '{"key":"a","v":%s}' % nested(k), "sample 0"),
    ("atlas", "example", 1, 1000, "",
     "INSERT INTO %s(example) VALUES (?)", lambda k: (nested(k),),
     "SELECT example FROM atlas(?)", nested, "example 0"),
    ("atlas", "columns", 2, 1000, ", columns='v JSON'",
     "INSERT INTO %s(v) VALUES (?)", lambda k: (nested(k),),
     "SELECT example FROM atlas(?)", lambda k: '{"v":%s}' % nested(k), "example 0"),
]
for mod, form, around, limit, opts, sql, params, read, want, row in CASES:
    for INNER[0] in ("", "1"):
        deepest = limit - around  # lists that fit with the row's own levels
        for k in (deepest - 1, deepest, deepest + 1):
            path = os.path.join(TMP, "%s_%s_%d_%s" % (mod, form, k, INNER[0]))
            label = "%s %s: %d nested lists holding %r (%d levels with the row's)" % (
                mod, form, k, INNER[0], k + around)
            err = try_write(mod, path, opts, sql, params(k))
            if k <= deepest:
                if C.check(err is None, label + ": written", err):
                    try:
                        got = [r[0].replace(" ", "") for r in conn.execute(read, (path,)).fetchall()]
                    except sqlite3.Error as e:
                        got = e
                    C.eq(got, [want(k)], label + ": reads back as written")
            else:
                C.check(err is not None and row in err and str(limit) in err and "nested" in err,
                        label + ": refused at INSERT naming the row and the limit", err)
                C.check(not os.path.exists(path), label + ": nothing published", path)

shutil.rmtree(TMP)
C.exit()
