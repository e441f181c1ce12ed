"""test_replaced_bcolz.py - a bcolz table that has read some chunks of
version 7 of a ctable, queried again right after another process replaced
the ctable with version 8 (issue 20, item 8): the answer holds one version
only, or the query fails saying the dataset changed while it was read; the
query after that reads version 8 (table-valued form) or refuses the table
(CREATE form). Before the fix, the chunks read earlier (cached) came from
version 7 and the others, opened by path, from version 8.

The writer runs in a child process that has its rows inserted and waits
for a line on stdin to COMMIT, so the second query follows the replace by
a few milliseconds (within the 100 ms in which a table trusts its files
without looking at the disk). Usage: test_replaced_bcolz.py BUILD"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import ROOT, Checker, sql_quote  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
C = Checker()
tmp = tempfile.mkdtemp(prefix="ds-replaced-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
ROWS = 40  # five chunks of 8

WRITER = r"""
import os, sqlite3, sys
build, path, v, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = sqlite3.connect(":memory:", isolation_level=None)
c.enable_load_extension(True)
c.load_extension(os.path.join(build, "datasets"))
c.execute("CREATE VIRTUAL TABLE temp.w USING bcolz('%s', mode=replace, chunklen=8, "
          "columns='v INTEGER, w INTEGER')" % path.replace("'", "''"))
c.execute("BEGIN")
c.execute("INSERT INTO w(v, w) WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 "
          "FROM s WHERE i < %d) SELECT %d, i FROM s" % (rows - 1, v))
print("ready", flush=True)
sys.stdin.readline()
c.execute("COMMIT")
print("done", flush=True)
"""


def writer(path, v):
    """A child with version v inserted, waiting to commit."""
    p = subprocess.Popen(["/usr/bin/python3", "-c", WRITER, BUILD, path, str(v), str(ROWS)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    if p.stdout.readline().strip() != "ready":
        p.kill()
        raise RuntimeError("writer did not start: " + p.communicate()[1][-500:])
    return p


def commit(p):
    p.stdin.write("go\n")
    p.stdin.flush()
    ok = p.stdout.readline().strip() == "done"
    p.communicate(timeout=60)
    return ok and p.returncode == 0


def connect():
    import sqlite3
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(os.path.join(BUILD, "datasets"))
    return c


def answer(conn, sql):
    """('rows', [v...]) or ('error', message)."""
    try:
        return "rows", [r[0] for r in conn.execute(sql).fetchall()]
    except Exception as e:  # noqa: BLE001 - an error is a possible outcome
        return "error", str(e)


# form, first query (reads chunk 0 or row 1 only), query after the replace
CASES = [
    ("create scan", "create", "SELECT v FROM %s WHERE rowid < 8", "SELECT v FROM %s"),
    ("create lookups", "create", "SELECT v FROM %s WHERE rowid = 1",
     "SELECT v FROM %s WHERE rowid IN (1, 9, 17, 25, 33)"),
    ("tvf scan", "tvf", "SELECT json_extract(row, '$.v') FROM %s WHERE rowid < 8",
     "SELECT json_extract(row, '$.v') FROM %s"),
    ("tvf lookups", "tvf", "SELECT json_extract(row, '$.v') FROM %s WHERE rowid = 1",
     "SELECT json_extract(row, '$.v') FROM %s WHERE rowid IN (1, 9, 17, 25, 33)"),
]

for name, form, first_sql, second_sql in CASES:
    path = os.path.join(tmp, name.replace(" ", "_") + ".bcolz")
    w = writer(path, 7)
    C.check(commit(w), "%s: version 7 written" % name)
    conn = connect()
    if form == "create":
        conn.execute("CREATE VIRTUAL TABLE temp.t USING bcolz(%s)" % sql_quote(path))
        table = "temp.t"
    else:
        table = "bcolz(%s)" % sql_quote(path)
    w = writer(path, 8)
    for attempt in (1, 2):  # the second from a dataset opened (and looked at) before
        C.eq(answer(conn, first_sql % table), ("rows", [7] * (8 if "scan" in name else 1)),
             "%s: reads version 7 (%d)" % (name, attempt))
    C.check(commit(w), "%s: version 8 written by another process" % name)
    kind, got = answer(conn, second_sql % table)
    if kind == "rows":
        C.check(len(set(got)) == 1, "%s: the query after the replace reads one version"
                % name, got)
    else:
        C.check("the dataset changed while it was read" in got and path in got,
                "%s: the query after the replace fails saying the dataset changed" % name, got)
    kind, got = answer(conn, second_sql % table)
    if form == "tvf":
        n = ROWS if "scan" in name else 5
        C.eq((kind, got), ("rows", [8] * n), "%s: the next query reads version 8" % name)
    else:
        C.check(kind == "rows" and len(set(got)) == 1 or
                (kind == "error" and "changed" in got),
                "%s: the next query reads one version or refuses the table" % name, got)
    conn.close()

shutil.rmtree(tmp)
C.exit()
