"""test_bcolz_pushdown.py - comparisons pushed into bcolz scans return
exactly the rows SQLite's own evaluation returns.

For every upstream bcolz fixture and every column the CREATE form declares,
each comparison (=, <, <=, >, >=, BETWEEN, IS NULL, IS NOT NULL) against
values taken from the column itself (smallest, largest, middle, first,
plus NULL, a number as text, an integer on float columns, a string on
numeric columns) runs three ways:
  pushed     WHERE col op ?          (EXPLAIN QUERY PLAN must say "pushed:")
  unpushed   the same WHERE over (SELECT ... FROM t LIMIT -1): a subquery
                                     with a LIMIT is neither flattened nor
                                     given the WHERE, and its columns keep
                                     their affinity (the plan must not say
                                     "pushed:")
  native     the same query over CREATE TABLE AS SELECT of the fixture
and all three must give the same rowids in the same order. Then the same
for two pushed columns combined with AND, with rowid ranges, rowid IN
lists, ORDER BY rowid DESC and LIMIT/OFFSET, which take the other
scan paths. Usage: test_bcolz_pushdown.py BUILD_DIR"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dstest  # noqa: E402

D = os.path.join(dstest.FIXTURES, "bcolz")
c = dstest.Checker()
conn = dstest.connect(sys.argv[1])
OPS = ["=", "<", "<=", ">", ">="]


def rows(sql, params=()):
    return [r[0] for r in conn.execute(sql, params).fetchall()]


def plan(sql, params=()):
    return " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params))


def qname(n):
    return '"' + n.replace('"', '""') + '"'


def probe_values(col, decl):
    """Values to compare column col with: from the data, and edge cases."""
    vals = rows("SELECT %s FROM t WHERE %s IS NOT NULL ORDER BY 1" % (col, col))
    picks = []
    if vals:
        picks += [vals[len(vals) // 3], vals[0], vals[-1]]
    picks.append(None)
    if decl in ("INTEGER", "REAL"):
        picks += ["5", "abc", 0.5, 2**62, -2.5e300]
        if vals and isinstance(vals[len(vals) // 2], float):
            picks.append(int(vals[len(vals) // 2]) if abs(vals[len(vals) // 2]) < 1e18 else 7)
    else:
        picks += ["", 5, "\u0416"]
    out = []
    for p in picks:  # distinct, keeping order
        if not any(type(p) is type(q) and p == q for q in out):
            out.append(p)
    return out


def three_ways(name, where, params, expect_push=True, cols=None):
    """The pushed, unpushed and native forms must agree. cols: the columns
    where uses (default: its first word)."""
    q = "SELECT rowid FROM t WHERE %s ORDER BY rowid"
    qp = "SELECT r FROM (SELECT rowid AS r, %s FROM t LIMIT -1) WHERE %%s ORDER BY r" % (
        cols or where.split(" ")[0])
    got = rows(q % where, params)
    plain = rows(qp % where, params)
    native = rows("SELECT r FROM n WHERE %s ORDER BY r" % where, params)
    ok = c.check(got == plain == native, name,
                 "pushed %d rows %r, unpushed %d %r, native %d %r"
                 % (len(got), got[:5], len(plain), plain[:5], len(native), native[:5]))
    if expect_push:
        c.check("pushed:" in plan(q % where, params), name + " plan pushed", plan(q % where, params))
        c.check("pushed:" not in plan(qp % where, params), name + " plan unpushed",
                plan(qp % where, params))
    return ok


def check_fixture(fx):
    path = os.path.join(D, fx)
    conn.execute("DROP TABLE IF EXISTS temp.t")
    conn.execute("DROP TABLE IF EXISTS temp.n")
    conn.execute("CREATE VIRTUAL TABLE temp.t USING bcolz('%s')" % path.replace("'", "''"))
    cols = [(r[1], r[2]) for r in conn.execute("PRAGMA table_info(t)")]
    names = ", ".join(qname(n) for n, _ in cols)
    decls = ", ".join("%s %s" % (qname(n), d) for n, d in cols)
    conn.execute("CREATE TEMP TABLE n(r INTEGER PRIMARY KEY, %s)" % decls)
    conn.execute("INSERT INTO n SELECT rowid, %s FROM t" % names)
    pushable = []
    for name, decl in cols:
        if decl not in ("INTEGER", "REAL", "TEXT"):
            continue
        col = qname(name)
        # datetime64 columns are TEXT but not pushed
        pushed = "pushed:" in plan("SELECT rowid FROM t WHERE %s IS NULL" % col)
        vals = probe_values(col, decl)
        for i, v in enumerate(vals):
            # the column's own values with every operator, edge cases with two
            for op in OPS if i < 3 else ["=", ">"]:
                three_ways("%s %s %s %r" % (fx, name, op, v), "%s %s ?" % (col, op), (v,),
                           pushed)
        lo, hi = (vals[0], vals[1]) if len(vals) > 2 else (vals[0], vals[0])
        if lo is not None and hi is not None:
            three_ways("%s %s BETWEEN %r AND %r" % (fx, name, lo, hi),
                       "%s BETWEEN ? AND ?" % col, (lo, hi), pushed)
            three_ways("%s %s BETWEEN %r AND %r" % (fx, name, hi, lo),
                       "%s BETWEEN ? AND ?" % col, (hi, lo), pushed)
        three_ways("%s %s IS NULL" % (fx, name), "%s IS NULL" % col, (), pushed)
        three_ways("%s %s IS NOT NULL" % (fx, name), "%s IS NOT NULL" % col, (), pushed)
        if pushed:
            pushable.append((col, vals[0] if vals[0] is not None else vals[-1]))
    if len(pushable) >= 2:
        (a, va), (b, vb) = pushable[0], pushable[-1]
        three_ways("%s %s>=%r AND %s>=%r" % (fx, a, va, b, vb), "%s >= ? AND %s >= ?" % (a, b),
                   (va, vb), cols="%s, %s" % (a, b))
    if pushable:
        col, v = pushable[0]
        n = rows("SELECT count(*) FROM t")[0]
        cases = [
            ("rowid range", "%s >= ? AND rowid BETWEEN ? AND ?" % col, (v, n // 3, n - n // 4)),
            ("rowid IN", "%s >= ? AND rowid IN (0, 1, 5, ?, ?)" % col, (v, n // 2, n - 1)),
        ]
        for label, w, params in cases:
            q = "SELECT rowid FROM t WHERE %s ORDER BY rowid" % w
            got = rows(q, params)
            native = rows(q.replace("rowid", "r").replace("FROM t", "FROM n"), params)
            c.check(got == native, "%s %s %s" % (fx, col, label), "%r vs %r" % (got[:5], native[:5]))
            c.check("pushed:" in plan(q, params), "%s %s %s plan" % (fx, col, label))
        for tail in ("ORDER BY rowid DESC", "LIMIT 7", "LIMIT 5 OFFSET 3",
                     "ORDER BY rowid DESC LIMIT 4 OFFSET 2"):
            q = "SELECT rowid FROM t WHERE %s >= ? " + tail
            got = rows(q % col, (v,))
            plain = rows(("SELECT r FROM (SELECT rowid AS r, %s FROM t LIMIT -1) WHERE %s >= ? "
                          + tail.replace("rowid", "r")) % (col, col), (v,))
            native = rows(("SELECT r FROM n WHERE %s >= ? " + tail.replace("rowid", "r")) % col,
                          (v,))
            c.check(got == plain == native, "%s %s >= %r %s" % (fx, col, v, tail),
                    "pushed %r, unpushed %r, native %r" % (got[:8], plain[:8], native[:8]))


for fx in sorted(os.listdir(D)):
    if os.path.isdir(os.path.join(D, fx)) and fx != "expected" and \
            os.path.exists(os.path.join(D, "expected", fx + ".json")):
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.probe USING bcolz('%s')"
                         % os.path.join(D, fx).replace("'", "''"))
            conn.execute("DROP TABLE temp.probe")
        except Exception:
            continue  # fixtures the CREATE form refuses (tested elsewhere)
        check_fixture(fx)
c.exit()
