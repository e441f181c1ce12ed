"""test_bcolz_fixtures.py - conformance of the bcolz tables with upstream.

Every expected/*.json in tests/fixtures/upstream/bcolz was read back by the
real upstream bcolz. This compares every listed row's every cell through
the CREATE form (typed columns) and the table-valued form (row JSON), the
row count, bcolz_attrs against the __attrs__ objects, and bcolz_stats
against upstream's whole-column aggregates. Usage: test_bcolz_fixtures.py BUILD"""
import json
import math
import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402
from bz_expected import SPECIAL, big, same, sql_value  # noqa: E402

D = os.path.join(FIXTURES, "bcolz")
C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def check(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        e = json.load(f)
    path = os.path.join(D, name)
    if "upstream_error" in e:
        try:
            rows("SELECT count(*) FROM bcolz(?)", path)
            C.check(False, "%s: refused like upstream" % name)
        except Exception as err:  # noqa: BLE001
            C.check(str(err).startswith("bcolz: "), "%s: refused like upstream" % name, str(err))
        return
    t = "temp.%s" % name
    conn.execute("CREATE VIRTUAL TABLE %s USING bcolz(%s)" % (t, sql_quote(path)))
    cols = [r[0] for r in rows("SELECT name FROM pragma_table_xinfo(?) WHERE schema = 'temp'", name)]
    C.eq(cols, e["names"], "%s: columns in table order" % name)
    C.eq(rows("SELECT count(*) FROM %s" % t)[0][0], e["len"], "%s: count" % name)
    meta = e["columns"]
    ok = bad = 0
    quoted = ", ".join('"%s"' % c.replace('"', '""') for c in cols)
    for rowid, cells in e["rows"]:
        got = rows("SELECT %s FROM %s WHERE rowid = ?" % (quoted, t), rowid)[0]
        js = json.loads(rows("SELECT row FROM bcolz(?) WHERE rowid = ?", path, rowid)[0][0])
        for k, cell in enumerate(cells):
            want = sql_value(cell, meta[k]["dtype"], meta[k]["cell_shape"])
            good = same(got[k], want)
            if good and e["kind"] == "ctable":
                good = cols[k] in js
            ok, bad = (ok + 1, bad) if good else (ok, bad + 1)
            if not good and bad <= 3:
                C.check(False, "%s: row %d column %s" % (name, rowid, cols[k]), "got %r want %r" % (got[k], want))
    C.check(bad == 0, "%s: all %d listed cells (CREATE form) and row JSON" % (name, ok))
    # a scan in order gives the same cells as lookups (chunk path vs block path)
    if e["rows_mode"] == "all" and e["len"]:
        scan = rows("SELECT %s FROM %s" % (quoted, t))
        look = [rows("SELECT %s FROM %s WHERE rowid = ?" % (quoted, t), r)[0] for r in range(0, e["len"], max(1, e["len"] // 50))]
        C.check(all(same(a, b) if not isinstance(a, float) else (a == b or (a != a and b != b))
                    for x, y in zip([scan[r] for r in range(0, e["len"], max(1, e["len"] // 50))], look)
                    for a, b in zip(x, y)), "%s: scan and lookups agree" % name)
    # attrs
    got = {}
    for n, v, col in rows("SELECT name, value, \"column\" FROM bcolz_attrs(?)", path):
        got.setdefault(col, {})[n] = json.loads(v)
    want = {None: e["attrs"]} if e["attrs"] else {}
    if e["kind"] == "ctable":
        for c in meta:
            if c["attrs"]:
                want[c["name"]] = c["attrs"]
    C.eq(got, want, "%s: bcolz_attrs" % name)
    # stats
    st = {r[0]: r for r in rows("SELECT * FROM bcolz_stats(?)", path)}
    for c in meta:
        s = c.get("stats")
        r = st.get(c["name"] if e["kind"] == "ctable" else "value")
        if not s or r is None:
            continue
        good = r[2] == s["count"]
        if "nan_count" in s:
            good &= r[3] == s["nan_count"]
            for col, key in ((4, "nanmin"), (5, "nanmax"), (6, "nansum")):
                w = s[key]
                w = SPECIAL.get(w, w) if isinstance(w, str) else w
                good &= r[col] is None if isinstance(w, float) and math.isnan(w) else \
                    (r[col] == w or abs(r[col] - w) <= 1e-9 * max(1.0, abs(w)))
        elif "nat_count" in s:
            good &= r[3] == s["nat_count"]
        elif "sum" in s:
            w = s["sum"]
            w = int(w["$bigint"]) if isinstance(w, dict) else w
            good &= (int(r[6]) if r[6] is not None else None) == w and r[4] == big(s["min"]) and \
                r[5] == big(s["max"])
        C.check(good, "%s: bcolz_stats of %s" % (name, c["name"]), "got %r want %r" % (r, s))


for f in sorted(os.listdir(os.path.join(D, "expected"))):
    C.run(check, f[:-5], name="check %s" % f[:-5])
C.exit()
