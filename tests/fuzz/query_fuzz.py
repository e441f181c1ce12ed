"""query_fuzz.py - differential fuzzer of the SQLite layer (src/vtab/).

Opens one virtual table per format over a bundled fixture, copies its rows
into a native table in the same connection
    CREATE TABLE n_x AS SELECT rowid AS rid, <every column> FROM t_x
and runs random queries from a small grammar (rowid =, IN, ranges, key =/IN,
shard =/IN, LIMIT/OFFSET, ORDER BY rowid, count/sum, joins between the
virtual and the native table) against both; the results must be equal
(as sorted lists where SQL leaves the order open). A mismatch or an error
is a FAIL and is saved to tests/fuzz/regressions/queries/<name>.sql, and
every file already there is replayed first.
Usage: query_fuzz.py BUILD_DIR [SEED ...]   (FUZZ_QUERIES=N per format and
seed, default 300)."""
import os
import random
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "upstream")
REG = os.path.join(HERE, "regressions", "queries")

# name -> virtual table argument list (the fixture and its options)
TABLES = {
    "bagz": "bagz('%s/bagz/concat@4.bagz')" % FIX,
    "bagz_inter": "bagz('%s/bagz/inter@3.bagz', 'layout=interleaved')" % FIX,
    "datadings": "datadings('%s/datadings/sharded/part-*.msgpack')" % FIX,
    "atlas": "atlas('%s/atlas/per_shard_dict')" % FIX,
    "bcolz": "bcolz('%s/bcolz/ctable_appended')" % FIX,
}


def connect(build):
    """A fresh in-memory connection with the extension loaded."""
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(build, "datasets"))
    return conn


class Table:
    """One format's virtual table t_<name>, its native copy n_<name>, and
    what the query grammar needs to know about their rows."""

    def __init__(self, conn, name):
        self.name = name
        self.vt, self.nt = "t_" + name, "n_" + name
        conn.execute("CREATE VIRTUAL TABLE %s USING %s" % (self.vt, TABLES[name]))
        cols = [r[1] for r in conn.execute("PRAGMA table_xinfo(%s)" % self.vt)]
        self.cols = [c for c in cols if c not in ("path", "options")]
        conn.execute("CREATE TABLE %s AS SELECT rowid AS rid, %s FROM %s"
                     % (self.nt, ", ".join(q(c) for c in self.cols), self.vt))
        self.n = conn.execute("SELECT count(*) FROM %s" % self.nt).fetchone()[0]
        self.intcols = [c for c in self.cols if conn.execute(
            "SELECT count(*) FROM %s WHERE typeof(%s) NOT IN ('integer','null')"
            % (self.nt, q(c))).fetchone()[0] == 0]
        self.keys = ([r[0] for r in conn.execute("SELECT key FROM %s" % self.nt)]
                     if "key" in self.cols else [])
        self.shards = ([r[0] for r in conn.execute("SELECT DISTINCT shard FROM %s" % self.nt)]
                       if "shard" in self.cols else [])


def q(ident):
    """An identifier, quoted."""
    return '"' + ident.replace('"', '""') + '"'


def lit(v):
    """A Python value as an SQL literal."""
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


class Gen:
    """Random query templates: {T} is the table under test, {R} its qualified
    rowid, {RC} the bare rowid column; {B}/{BRC} the native copy (always
    n_<name>) and its rid, for joins."""

    def __init__(self, rng, tab):
        self.r, self.t = rng, tab

    def rowid_val(self):
        """A rowid, mostly in range, sometimes just outside or odd."""
        r, n = self.r, self.t.n
        x = r.random()
        if x < 0.8:
            return r.randrange(max(n, 1))
        return r.choice([-1, n, n + 1, -(2 ** 63), 2 ** 63 - 1, "NULL", "1.5", "'3'"])

    def atom(self, a="{T}", rid="{R}"):
        """One WHERE term."""
        r, t = self.r, self.t
        kinds = ["eq", "in", "range", "range", "between"]
        if t.keys:
            kinds += ["key", "keyin"]
        if t.shards:
            kinds += ["shard", "shardin"]
        if t.intcols:
            kinds += ["int"]
        k = r.choice(kinds)
        if k == "eq":
            return "%s = %s" % (rid, self.rowid_val())
        if k == "in":
            return "%s IN (%s)" % (rid, ", ".join(str(self.rowid_val())
                                                  for _ in range(r.randint(1, 6))))
        if k == "range":
            return "%s %s %s" % (rid, r.choice(["<", "<=", ">", ">="]), self.rowid_val())
        if k == "between":
            lo = self.rowid_val()
            return "%s BETWEEN %s AND %s" % (rid, lo, self.rowid_val())
        if k == "key":
            key = r.choice(t.keys) if r.random() < 0.85 else "no such key"
            return "%s.key = %s" % (a, lit(key))
        if k == "keyin":
            ks = [r.choice(t.keys) if r.random() < 0.85 else "nokey%d" % i
                  for i in range(r.randint(1, 5))]
            return "%s.key IN (%s)" % (a, ", ".join(lit(x) for x in ks))
        if k == "shard":
            return "%s.shard = %s" % (a, r.choice(t.shards + [-1, 99]))
        if k == "shardin":
            return "%s.shard IN (%s)" % (a, ", ".join(str(r.choice(t.shards + [7]))
                                                      for _ in range(r.randint(1, 3))))
        c = r.choice(t.intcols)
        return "%s.%s %s %d" % (a, q(c), r.choice(["=", "<", ">=", "!="]), r.randint(-2, 10))

    def where(self, a="{T}", rid="{R}"):
        """Zero to three terms joined by AND (sometimes OR)."""
        n = self.r.choice([0, 1, 1, 2, 2, 3])
        if n == 0:
            return ""
        terms = [self.atom(a, rid) for _ in range(n)]
        op = " OR " if self.r.random() < 0.15 else " AND "
        return " WHERE " + op.join(terms)

    def limit(self):
        """An optional LIMIT [OFFSET]."""
        r = self.r
        if r.random() < 0.5:
            return ""
        s = " LIMIT %d" % r.choice([0, 1, 2, 5, 17, self.t.n, -1])
        if r.random() < 0.5:
            s += " OFFSET %d" % r.choice([0, 1, 3, 10, self.t.n - 1, self.t.n + 5])
        return s

    def query(self):
        """(template, ordered): ordered is True when SQL fixes the row order."""
        r, t = self.r, self.t
        shape = r.random()
        if shape < 0.55:  # plain select
            cols = r.sample(t.cols, min(len(t.cols), r.randint(1, 3)))
            proj = ", ".join(["{R}"] + ["{T}.%s" % q(c) for c in cols])
            order = r.choice(["", " ORDER BY {R}", " ORDER BY {R} DESC"])
            lim = self.limit()
            if lim and not order:
                order = " ORDER BY {R}"
            return ("SELECT %s FROM {T}%s%s%s" % (proj, self.where(), order, lim), bool(order))
        if shape < 0.75:  # aggregate
            agg = ["count(*)", "min({R})", "max({R})", "sum({R})"]
            if t.intcols:
                agg.append("sum({T}.%s)" % q(r.choice(t.intcols)))
            return ("SELECT %s FROM {T}%s" % (", ".join(r.sample(agg, 2)), self.where()), True)
        # join of the table under test (alias a) with its native copy or itself (b)
        arid = "a.{RC}"
        on = [("b.{BRC} = a.{RC}", "a"), ("a.{RC} = b.{BRC}", "a")]
        if t.keys:
            on.append(("a.key = b.key", "a"))
        cond, _ = r.choice(on)
        first_native = r.random() < 0.5
        src = ("{B} AS b JOIN {T} AS a ON " if first_native else "{T} AS a JOIN {B} AS b ON ") + cond
        col = q(r.choice(t.cols))
        w = self.where("a", arid)
        order = r.choice(["", " ORDER BY %s" % arid, " ORDER BY b.{BRC} DESC"])
        lim = self.limit()
        if lim and not order:
            order = " ORDER BY b.{BRC}"
        sql = ("SELECT %s, b.{BRC}, a.%s FROM %s%s%s%s" % (arid, col, src, w, order, lim))
        if r.random() < 0.3:  # self-join: b is the table under test too
            sql = sql.replace("{B}", "{T}").replace("{BRC}", "{RC}")
        return sql, bool(order)


def render(tmpl, tab, native):
    """The template as SQL for the virtual table, or for the native copy."""
    T = tab.nt if native else tab.vt
    R = "rid" if native else "rowid"
    return (tmpl.replace("{BRC}", "rid").replace("{B}", tab.nt)
            .replace("{RC}", R).replace("{R}", T + "." + R).replace("{T}", T))


def sortkey(row):
    """A total order over rows of mixed types."""
    return repr(row)


def run_pair(conn, sql, ref, ordered):
    """None when both queries give the same rows, else a description."""
    try:
        want = conn.execute(ref).fetchall()
    except sqlite3.Error as e:
        want = "error: %s" % e
    try:
        got = conn.execute(sql).fetchall()
    except sqlite3.Error as e:
        got = "error: %s" % e
    if isinstance(got, str) or isinstance(want, str):
        if isinstance(got, str) and isinstance(want, str):
            return None  # both reject the query (e.g. a type error)
        return "got %.300r, want %.300r" % (got, want)
    if not ordered:
        got, want = sorted(got, key=sortkey), sorted(want, key=sortkey)
    if got != want:
        return "got %.300r, want %.300r" % (got, want)
    return None


def save(name, header, sql, ref, detail):
    """Write a failing query as tests/fuzz/regressions/queries/<name>.sql."""
    os.makedirs(REG, exist_ok=True)
    path = os.path.join(REG, name + ".sql")
    with open(path, "w") as f:
        f.write("-- query fuzz regression: %s\n-- %s\n%s;\n-- reference\n%s;\n"
                % (header, detail.replace("\n", " ")[:400], sql, ref))
    return path


def replay(conn, tables, report):
    """Run every saved regression; returns the number that failed."""
    failed = 0
    if not os.path.isdir(REG):
        return 0
    for fn in sorted(os.listdir(REG)):
        if not fn.endswith(".sql"):
            continue
        text = open(os.path.join(REG, fn)).read()
        m = re.search(r"format=(\w+).*ordered=(\d)", text)
        body = "\n".join(l for l in text.splitlines()
                         if not l.startswith("-- ") or l == "-- reference")
        sql, ref = body.split("-- reference")
        if not m or m.group(1) not in tables:
            report(False, "query_fuzz/regression/" + fn, "bad header")
            failed += 1
            continue
        d = run_pair(conn, sql.strip().rstrip(";"), ref.strip().rstrip(";"), m.group(2) == "1")
        report(d is None, "query_fuzz/regression/" + fn, d)
        failed += d is not None
    return failed


def fuzz(conn, tab, seed, count, report):
    """count random queries on one table; returns (queries run, failures)."""
    rng = random.Random("%s/%d" % (tab.name, seed))
    gen = Gen(rng, tab)
    bad = 0
    for i in range(count):
        tmpl, ordered = gen.query()
        sql, ref = render(tmpl, tab, False), render(tmpl, tab, True)
        d = run_pair(conn, sql, ref, ordered)
        if d is not None:
            bad += 1
            name = "%s-seed%d-q%d" % (tab.name, seed, i)
            header = "format=%s seed=%d query=%d ordered=%d" % (tab.name, seed, i, ordered)
            path = save(name, header, sql, ref, d)
            report(False, "query_fuzz/%s" % name, "%s\n  %s\n  saved to %s" % (sql, d, path))
            if bad >= 5:
                break  # enough to look at
    return i + 1, bad


def main(build, seeds, count, report):
    """Replay, then fuzz every format with every seed; returns failures."""
    conn = connect(build)
    tables = {n: Table(conn, n) for n in TABLES}
    failed = replay(conn, tables, report)
    for name, tab in tables.items():
        for seed in seeds:
            n, bad = fuzz(conn, tab, seed, count, report)
            failed += bad
            report(bad == 0, "query_fuzz/%s seed %d: %d queries against %d rows"
                   % (name, seed, n, tab.n), "%d mismatches" % bad)
    return failed


def _report(ok, name, detail=""):
    print(("PASS " + name) if ok else ("FAIL %s: %s" % (name, detail)))


if __name__ == "__main__":
    seeds = [int(s) for s in sys.argv[2:]] or [1]
    count = int(os.environ.get("FUZZ_QUERIES", "300"))
    sys.exit(1 if main(sys.argv[1], seeds, count, _report) else 0)
