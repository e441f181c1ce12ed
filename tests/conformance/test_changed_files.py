"""test_changed_files.py - a dataset rewritten on disk between statements
must give a clear error (or be reopened), never read a stale mapping (which
would kill the process with SIGBUS). Files are checked for changes at most
every 100 ms, so the test waits that long. Usage: test_changed_files.py BUILD"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
tmp = tempfile.mkdtemp(prefix="ds-changed-")

CASES = [  # module, fixture folder, path inside the copy, the file to truncate, a row query
    ("bagz", "bagz", "mid.bagz", "mid.bagz", "SELECT length(record) FROM %s WHERE rowid = 40000"),
    ("datadings", "datadings/basic", "basic.msgpack", "basic.msgpack",
     "SELECT length(sample) FROM %s WHERE rowid = 150"),
    ("atlas", "atlas/none", ".", "1/data.bin", "SELECT example FROM %s WHERE rowid = 30"),
    ("bcolz", "bcolz/carray_int32", ".", "data/__1.blp", "SELECT * FROM %s WHERE rowid = 70000"),
]

for module, fixture, rel, victim, query in CASES:
    d = os.path.join(tmp, module)
    shutil.copytree(os.path.join(FIXTURES, fixture), d)
    path = os.path.join(d, rel)
    tvf = "%s(%s)" % (module, sql_quote(path))
    conn.execute("CREATE VIRTUAL TABLE temp.%s_t USING %s(%s)" % (module, module, sql_quote(path)))
    C.check(conn.execute(query % tvf).fetchone() is not None, "%s: reads before the change" % module)
    C.check(conn.execute(query % ("temp.%s_t" % module)).fetchone() is not None,
            "%s create: reads before the change" % module)
    with open(os.path.join(d, victim), "r+b") as f:
        f.truncate(10)
    time.sleep(0.15)
    for form, t in (("tvf", tvf), ("create", "temp.%s_t" % module)):
        for attempt in (1, 2):  # the second time too: no stale mapping is reused
            try:
                conn.execute(query % t).fetchall()
                C.check(False, "%s %s: changed files give an error (try %d)" % (module, form, attempt))
            except Exception as e:  # noqa: BLE001 - the error is the expected result
                C.check(str(e).startswith(module + ": "), "%s %s: changed files give an error (try %d)"
                        % (module, form, attempt), str(e))

shutil.rmtree(tmp)
C.exit()
