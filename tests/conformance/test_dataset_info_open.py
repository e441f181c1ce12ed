"""test_dataset_info_open.py - dataset_info opens a dataset once (issue 21
section 2): it used to run CREATE VIRTUAL TABLE ... USING dataset(...) in a
nested in-memory connection to learn the columns, then open the dataset
again for its facts. Under strace, one dataset_info call over a fixture of
each format opens each file of the dataset at most once (a folder may be
listed by detection and by the reader; bcolz reads a column's
meta/storage again for the cparams fact), and says the same as before: the
columns are those of the CREATE form's PRAGMA table_info.
Usage: test_dataset_info_open.py BUILD_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
C = Checker()
DATASETS = [("bagz", os.path.join(FIXTURES, "bagz", "concat@4.bagz"), ""),
            ("bagz", os.path.join(FIXTURES, "bagz", "separate.bagz"), ""),
            ("datadings", os.path.join(FIXTURES, "datadings", "basic", "basic.msgpack"),
             "infer=5"),
            ("atlas", os.path.join(FIXTURES, "atlas", "none"), ""),
            ("bcolz", os.path.join(FIXTURES, "bcolz", "ctable_basic"), "bytes=blob")]

PROG = r"""
import sqlite3, sys
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(sys.argv[1])
conn.execute("SELECT * FROM dataset_info(?, ?)", (sys.argv[2], sys.argv[3])).fetchall()
"""


def opens(path, opts, tmp):
    """{file: times opened} of the files under the dataset's folder that
    one dataset_info call opens."""
    log = os.path.join(tmp, "strace.log")
    subprocess.run(["strace", "-f", "-e", "trace=open,openat", "-o", log,
                    "/usr/bin/python3", "-c", PROG, os.path.join(BUILD, "datasets"), path,
                    opts], check=True, capture_output=True)
    root = path if os.path.isdir(path) else os.path.dirname(path)
    counts, fds = {}, {}
    for line in open(log):
        m = re.search(r'open(?:at)?\((?:(AT_FDCWD|\d+), )?"([^"]+)".*= (-?\d+)', line)
        if not m or int(m.group(3)) < 0:
            continue
        name = m.group(2)
        if m.group(1) not in (None, "AT_FDCWD") and not name.startswith("/"):
            name = os.path.join(fds.get(m.group(1), "?"), name)  # relative to a folder's fd
        fds[m.group(3)] = name
        if name.startswith(root + os.sep) and os.path.isfile(name):
            counts[name] = counts.get(name, 0) + 1
    return counts


def check(module, path, opts, tmp):
    counts = opens(path, opts, tmp)
    C.check(counts, "%s %s: dataset_info opens its files" % (module, os.path.basename(path)))
    # bcolz: a column's meta/storage is read again for its cparams
    # (bcolz_col_cparams, the `cparams` fact), by name, not by reopening
    # the table
    twice = {os.path.relpath(f, FIXTURES): n for f, n in counts.items()
             if n > (2 if module == "bcolz" and f.endswith("/meta/storage") else 1)}
    C.eq(twice, {}, "%s %s: no file opened twice" % (module, os.path.basename(path)))
    conn = connect(BUILD)
    info = dict(conn.execute("SELECT property, value FROM dataset_info(?, ?)",
                             (path, opts)).fetchall())
    args = "".join(", " + o.strip() for o in opts.split(",") if o.strip())
    conn.execute("CREATE VIRTUAL TABLE temp.t USING dataset(%s%s)" % (sql_quote(path), args))
    want = {name: typ for name, typ in conn.execute("SELECT name, type FROM pragma_table_info('t')")}
    C.eq(json.loads(info["columns"]), want,
         "%s %s: columns as the CREATE form declares them" % (module, os.path.basename(path)))


if not shutil.which("strace"):
    C.check(False, "strace is installed (Debian package strace)")
else:
    with tempfile.TemporaryDirectory() as tmp:
        for module, path, opts in DATASETS:
            C.run(check, module, path, opts, tmp, name=module)
C.exit()
