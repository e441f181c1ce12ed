"""test_write_refusals.py - what a writer cannot write so that it reads back
is refused at INSERT with an error naming the column, and what it accepts
reads back equal (issue 20 item 11):

1. INSERT into a table-valued form says that form only reads and how to
   write (no empty path in the message), for every module.
2. bcolz S/BLOB and U/TEXT cells: a value ending in a NUL byte would read
   back without it (numpy drops trailing NULs): refused; other bytes and
   text read back equal (S with bytes=blob). NULL in a bytes column says
   "bytes", not "text".
3. bcolz datetime64/timedelta64: INT64_MIN is NaT (reads back NULL):
   refused as ticks; INT64_MIN + 1 reads back.
4. bcolz number columns take text by one rule: text that spells a decimal
   number (-?D+(.D+)?([eE][-+]?D+)?) is that number (an integer column also
   needs it whole and in range), any other text is an error; every column
   type the same way.
5. columns= names equal ignoring ASCII case are refused by every writer's
   and reader's columns= option.
Usage: test_write_refusals.py BUILD_DIR"""
import math
import os
import re
import shutil
import struct
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.mkdtemp(prefix="ds_write_refusals_")
_n = [0]


def new_path(ext=""):
    _n[0] += 1
    return os.path.join(TMP, "t%d%s" % (_n[0], ext))


def write_one(cols, value, read_opts=""):
    """A one-row bcolz table with columns=cols holding value: ("ok", the
    value read back) or ("err", message)."""
    path = new_path(".bcolz")
    _n[0] += 1
    w = "temp.w%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s, mode=create, columns=%s)"
                 % (w, sql_quote(path), sql_quote(cols)))
    try:
        conn.execute("INSERT INTO %s VALUES (?)" % w, (value,))
        conn.commit()
    except sqlite3.Error as e:
        conn.rollback()
        return "err", str(e)
    _n[0] += 1
    r = "temp.r%d" % _n[0]
    try:
        conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s%s)" % (r, sql_quote(path), read_opts))
        got = conn.execute("SELECT * FROM %s" % r).fetchall()
    except sqlite3.Error as e:
        return "written, not read", str(e)
    return "ok", got[0][0] if len(got) == 1 else got


# 1. the table-valued form only reads
for mod, col in (("bagz", "record"), ("datadings", "sample"), ("atlas", "example"),
                 ("bcolz", "row")):
    C.raises(lambda: conn.execute("INSERT INTO %s(%s) VALUES ('a')" % (mod, col)),
             "%s: INSERT into the table-valued form says it only reads and how to write" % mod,
             mod + ": the table-valued form only reads", "CREATE VIRTUAL TABLE")

# 2. bytes and text cells
BYTES = [b"\x00", b"a\x00", b"\x00\x00", b"", b"\x00a", b"a", b"\xff\xfe"]
for cols in ("b BLOB", "b S4", "b S"):
    for v in BYTES:
        got = write_one(cols, v, ", bytes=blob")
        label = "bcolz %s: %r" % (cols, v)
        if v.endswith(b"\x00"):
            C.check(got[0] == "err" and "column 'b'" in got[1] and "NUL" in got[1],
                    label + " is refused naming the column (it would read back shorter)", got)
        else:
            C.eq(got, ("ok", v), label + " reads back equal (bytes=blob)")
TEXTS = ["a\x00", "\x00", "", "\x00a", "é"]
for cols in ("t TEXT", "t U4", "t U", "t S4"):
    for v in TEXTS:
        got = write_one(cols, v)
        label = "bcolz %s: %r" % (cols, v)
        if v.endswith("\x00"):
            C.check(got[0] == "err" and "column 't'" in got[1] and "NUL" in got[1],
                    label + " is refused naming the column (it would read back shorter)", got)
        else:
            C.eq(got, ("ok", v), label + " reads back equal")
for cols, word in (("b BLOB", "bytes"), ("b S4", "bytes"), ("t TEXT", "text"), ("t U4", "text")):
    got = write_one(cols, None)
    C.check(got[0] == "err" and ("NULL in a %s" % word) in got[1] and
            "column '%s'" % cols[0] in got[1],
            "bcolz %s: NULL is refused as NULL in a %s column" % (cols, word), got)

# 3. NaT
for cols in ("t m8[s]", "t M8[s]", "t m8[ns]", "t M8[ns]"):
    got = write_one(cols, -2 ** 63)
    C.check(got[0] == "err" and "column 't'" in got[1] and "NaT" in got[1],
            "bcolz %s: -9223372036854775808 (NaT) is refused naming the column" % cols, got)
    got = write_one(cols, None)
    C.eq(got, ("ok", None), "bcolz %s: NULL is NaT and reads back NULL" % cols)
    if cols.startswith("t m"):
        got = write_one(cols, -2 ** 63 + 1)
        C.eq(got, ("ok", -2 ** 63 + 1), "bcolz %s: -9223372036854775807 reads back" % cols)

# 4. text that looks like a number: one rule for every number column
DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?\Z")
TEXTS = ["12", "-3", "1.5", "1.0", "1e2", "-0", "2.5e-1", "300", "1e400",
         " 12", "12 ", "+3", "0x10", "abc", "", "1.", ".5", "1e", "inf", "nan", "1_0"]
# column, lowest and highest integer (None: a float column), float32?
NUMERIC = [("x i1", -128, 127, False), ("x i8", -2 ** 63, 2 ** 63 - 1, False),
           ("x u2", 0, 65535, False), ("x INTEGER", -2 ** 63, 2 ** 63 - 1, False),
           ("x ?", 0, 1, False), ("x m8[s]", -2 ** 63 + 1, 2 ** 63 - 1, False),
           ("x f4", None, None, True), ("x f8", None, None, False),
           ("x REAL", None, None, False)]
for cols, lo, hi, f4 in NUMERIC:
    for text in TEXTS:
        got = write_one(cols, text)
        label = "bcolz %s: text %r" % (cols, text)
        if not DECIMAL.match(text):
            C.check(got[0] == "err" and "column 'x'" in got[1] and "decimal number" in got[1],
                    label + " is not a decimal number: refused naming the column", got)
            continue
        d = float(text)
        if lo is None:  # a float column takes every decimal number
            want = d
            if f4 and math.isfinite(d):
                want = struct.unpack("<f", struct.pack("<f", d))[0]
            C.eq(got, ("ok", want), label + " is the number " + repr(want))
        else:  # digits are read exactly, other spellings as a double
            whole = int(text) if re.match(r"-?[0-9]+\Z", text) else \
                int(d) if math.isfinite(d) and d == math.floor(d) else None
            if whole is not None and lo <= whole <= hi:
                C.eq(got, ("ok", whole), label + " is the integer %d" % whole)
            else:
                C.check(got[0] == "err" and "column 'x'" in got[1],
                        label + " is not a whole number in range: refused naming the column",
                        got)

# 5. names equal ignoring ASCII case
DD = os.path.join(FIXTURES, "datadings", "mid", "mid.msgpack")
AT = os.path.join(FIXTURES, "atlas")
TF = os.path.join(TMP, "tf.bagz")
CASES = [  # module, path (None: a new one), options before columns=
    ("datadings", None, "mode=create"), ("datadings", DD, ""),
    ("atlas", None, "mode=create"), ("bcolz", None, "mode=create"),
    ("bagz", None, "mode=create, records=tfexample"),
]
for mod, path, opts in CASES:
    for cols, clash in (("a INTEGER, a REAL", ("a", "a")), ("a INTEGER, A INTEGER", ("a", "A")),
                        ("Label TEXT, x REAL, lABEL TEXT", ("Label", "lABEL"))):
        if mod == "bcolz":
            cols = cols.replace("INTEGER", "i8").replace("REAL", "f8").replace("TEXT", "U4")
        p = path or new_path()
        _n[0] += 1
        sql = "CREATE VIRTUAL TABLE temp.c%d USING %s(%s, %scolumns=%s)" % (
            _n[0], mod, sql_quote(p), opts + ", " if opts else "", sql_quote(cols))
        if not opts.startswith("mode") and clash[0] != clash[1]:
            # a reader's names are fields of the data, where case counts:
            # two fields, the second column renamed (issue 22's Dask pinning)
            conn.execute(sql)
            names = [r[1] for r in conn.execute("PRAGMA temp.table_info(c%d)" % _n[0])]
            C.check(clash[0] in names and clash[1] + "_2" in names,
                    "%s reader columns=%r: fields differing in case are two columns" % (mod, cols),
                    names)
            continue
        C.raises(lambda: conn.execute(sql),
                 "%s %s columns=%r: names equal ignoring case are refused" % (
                     mod, "writer" if opts.startswith("mode") else "reader", cols),
                 mod + ": ", clash[0], clash[1], "same column")
    # distinct names still work; non-ASCII letters are not folded (as SQLite)
    p = path or new_path()
    _n[0] += 1
    cols = "a INTEGER, b INTEGER, \u00c9 INTEGER, \u00e9 INTEGER"
    if mod == "bcolz":
        cols = cols.replace("INTEGER", "i8")
    conn.execute("CREATE VIRTUAL TABLE temp.c%d USING %s(%s, %scolumns=%s)" % (
        _n[0], mod, sql_quote(p), opts + ", " if opts else "", sql_quote(cols)))
    names = [r[1] for r in conn.execute("PRAGMA table_info(c%d)" % _n[0])]
    C.check(all(n in names for n in ("a", "b", "\u00c9", "\u00e9")),
            "%s: distinct names (and non-ASCII letters in either case) are columns" % mod, names)

shutil.rmtree(TMP)
C.exit()
