"""test_datadings_fixtures.py - conformance of the datadings tables with
upstream.

Every expected/*.json in tests/fixtures/upstream/datadings was read back by
the real upstream datadings reader. This compares every sample (as the
`sample` JSON and, in the CREATE form, column by column), every key, the raw
bytes against the offsets, every find_index pair through WHERE key = ?,
every absent key (including Bloom false positives), and the md5 file through
datadings_verify. Usage: test_datadings_fixtures.py BUILD_DIR"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402
from dd_expected import (Unsupported, column_value, same_column, to_json,  # noqa: E402
                         top_fields)

D = os.path.join(FIXTURES, "datadings")
C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
PICKLE_ERR = "pickle decoder"
_n = [0]


def expected(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        return json.load(f)


def data_path(name):
    if name == "sharded":
        return os.path.join(D, "sharded", "part-*.msgpack")
    return os.path.join(D, name, name + ".msgpack")


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def check_samples(name, e):
    path = data_path(name)
    tvf = "datadings(%s)" % sql_quote(path)
    got = rows("SELECT rowid, key FROM %s" % tvf)
    C.eq(len(got), e["n"], "%s: count" % name)
    C.eq([r[1] for r in got], e["keys"], "%s: every key" % name)
    C.eq([r[0] for r in got], list(range(e["n"])), "%s: rowids" % name)
    if "offsets" in e:
        blob = b"".join(open(p, "rb").read() for p in sorted(glob.glob(path)))
        raws = [r[0] for r in rows("SELECT raw FROM %s" % tvf)]
        offs = e["offsets"]
        C.eq(raws, [blob[offs[i]:offs[i + 1]] for i in range(e["n"])], "%s: raw = offsets slices" % name)
    ok = bad = 0
    for i, want in enumerate(e["samples"]):
        try:
            w = to_json(want)
        except Unsupported:
            w = Unsupported
        try:
            (s,) = rows("SELECT sample FROM %s WHERE rowid = ?" % tvf, i)[0]
            g = json.loads(s)
        except Exception as x:  # noqa: BLE001 - a refused value is an error we check
            g = x
        if w is Unsupported:
            good = isinstance(g, Exception) and PICKLE_ERR in str(g) and ("sample %d" % i) in str(g)
        else:
            good = g == w
        if good:
            ok += 1
        else:
            bad += 1
            if bad <= 3:
                C.check(False, "%s: sample %d as JSON" % (name, i), "got %r, want %r" % (g, w))
    C.check(bad == 0 and ok == len(e["samples"]), "%s: all %d samples as JSON" % (name, ok))


def check_columns(name, e):
    _n[0] += 1
    t = "temp.dd%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING datadings(%s, infer=100000)" % (t, sql_quote(data_path(name))))
    cols = [r[1] for r in rows("PRAGMA temp.table_info(%s)" % t.split(".")[1])]
    samples = [top_fields(s) for s in e["samples"]]
    fields = []
    for s in samples:
        for k in s:
            if k != "key" and k not in fields:
                fields.append(k)
    C.eq(cols, ["key"] + fields, "%s create: columns in first-seen order" % name)
    ok = bad = 0
    for i, s in enumerate(samples):
        for f in fields:
            q = 'SELECT "%s" FROM %s WHERE rowid = ?' % (f.replace('"', '""'), t)
            present = f in s
            try:
                want = column_value(s[f]) if present else None
            except Unsupported:
                try:
                    rows(q, i)
                    good = False
                except Exception as x:  # noqa: BLE001
                    good = PICKLE_ERR in str(x)
                ok, bad = (ok + 1, bad) if good else (ok, bad + 1)
                continue
            got = rows(q, i)[0][0]
            if same_column(got, want):
                ok += 1
            else:
                bad += 1
                if bad <= 3:
                    C.check(False, "%s create: sample %d field %s" % (name, i, f),
                            "got %r, want %r" % (got, want))
    C.check(bad == 0, "%s create: all %d field values" % (name, ok))
    return t


def check_lookups(name, e):
    tvf = "datadings(%s)" % sql_quote(data_path(name))
    pairs = e.get("find_index", [])
    got = [(k, (rows("SELECT rowid FROM %s WHERE key = ?" % tvf, k) or [(None,)])[0][0]) for k, _ in pairs]
    C.eq(got, [tuple(p) for p in pairs], "%s: every find_index pair through key = ?" % name)
    absent = list(e.get("absent_keys", [])) + list((e.get("bloom") or {}).get("bloom_false_positives", []))
    hits = [k for k in absent if rows("SELECT rowid FROM %s WHERE key = ?" % tvf, k)]
    C.eq(hits, [], "%s: %d absent keys (incl. Bloom false positives) give no row" % (name, len(absent)))
    if pairs:
        ks = [k for k, _ in pairs[:5]]
        got = [r[0] for r in rows("SELECT rowid FROM %s WHERE key IN (%s) ORDER BY rowid"
                                  % (tvf, ",".join("?" * len(ks))), *ks)]
        C.eq(got, sorted(i for _, i in pairs[:5]), "%s: key IN (...)" % name)


def check_md5(name, e):
    if "md5_file" not in e:
        return
    got = rows("SELECT file, expected_md5, ok FROM datadings_verify(?)", data_path(name))
    C.eq(got, [(f, m, 1) for f, m in e["md5_file"]], "%s: datadings_verify" % name)


for name in ("basic", "hetero", "keys", "empty", "ndarrays", "legacy", "converted", "raw", "salt1"):
    e = expected(name)
    for fn in (check_samples, check_columns, check_lookups, check_md5):
        C.run(fn, name, e, name="%s %s" % (fn.__name__, name))

# mid: 20,000 samples, sampled values, sums, keys digest
m = expected("mid")
conn.execute("CREATE VIRTUAL TABLE temp.mid USING datadings(%s)" % sql_quote(data_path("mid")))
C.eq(rows("SELECT count(*), sum(n) FROM mid")[0], (m["n"], m["sums"]["sum_n"]), "mid: count and sum(n)")
C.eq([r[0] for r in rows("SELECT count(*) FROM mid GROUP BY c ORDER BY c")], m["sums"]["count_by_c"],
     "mid: count per c")
import hashlib  # noqa: E402
keys = [r[0] for r in rows("SELECT key FROM mid")]
C.eq(hashlib.md5("\n".join(keys).encode()).hexdigest(), m["keys_md5"], "mid: md5 of every key")
for idx, key, sample in m["sampled"]:
    got = rows("SELECT key, n, c FROM mid WHERE rowid = ?", idx)[0]
    if got != (key, sample["n"], sample["c"]):
        C.check(False, "mid: sample %d" % idx, "got %r want %r" % (got, (key, sample)))
        break
else:
    C.check(True, "mid: every 97th sample by rowid")
for idx, key, sample in m["sampled"][:50]:
    got = rows("SELECT rowid, n FROM mid WHERE key = ?", key)
    if got != [(idx, sample["n"])]:
        C.check(False, "mid: key lookup %s" % key, "got %r" % got)
        break
else:
    C.check(True, "mid: 50 key lookups")
C.run(check_lookups, "mid", m, name="check_lookups mid")
C.run(check_md5, "mid", m, name="check_md5 mid")

# sharded: a glob of 4 shards (one empty), concatenated in name order
s = expected("sharded")
C.run(check_samples, "sharded", s, name="check_samples sharded")
C.run(check_lookups, "sharded", s, name="check_lookups sharded")
C.eq(rows("SELECT count(*) FROM datadings(?) WHERE rowid BETWEEN 4 AND 6", data_path("sharded"))[0][0],
     3, "sharded: a rowid range across the empty shard")

C.exit()
