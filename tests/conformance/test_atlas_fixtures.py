"""test_atlas_fixtures.py - conformance of the atlas table with upstream.

Every expected/*.json in tests/fixtures/upstream/atlas was read back by the
real upstream torch-atlas-ds reader (which runs pickle.loads). This compares
every example (mid: every 97th, plus aggregates) as the `example` JSON and,
in the CREATE form, column by column, plus shard and shard_index; objects
outside the decoder's allow-list must fail cleanly (or become placeholders
with unsupported=placeholder) while the rest of the dataset still reads.
Usage: test_atlas_fixtures.py BUILD_DIR"""
import json
import math
import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402
from at_expected import normalize, refused_global, same, special, to_json  # noqa: E402

D = os.path.join(FIXTURES, "atlas")
C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
_n = [0]


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def check_dataset(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        e = json.load(f)
    path = os.path.join(D, e["path"])
    tvf = "atlas(%s)" % sql_quote(path)
    C.eq(rows("SELECT count(*) FROM %s" % tvf)[0][0], e["length"], "%s: count" % name)
    exs = e["examples"] if "examples" in e else e["examples_sampled"]
    ok = bad = 0
    for x in exs:
        i, want = x["i"], x["value"]
        q = "SELECT example, shard, shard_index FROM %s WHERE rowid = ?" % tvf
        g = refused_global(want)
        if g:
            try:
                rows(q, i)
                good = False
            except Exception as err:  # noqa: BLE001 - the refusal is what we check
                msg = str(err)
                good = msg.startswith("atlas: ") and (g in msg if g != "cycle" else "recursive" in msg)
            ok, bad = (ok + 1, bad) if good else (ok, bad + 1)
            if not good and bad <= 3:
                C.check(False, "%s: example %d refused" % (name, i), "want an error naming %s" % g)
            continue
        ex, shard, sidx = rows(q, i)[0]
        first = sum(e["shard_sizes_reader"][:x["shard"]])
        good = same(json.loads(ex), normalize(to_json(want))) and shard == x["shard"] and sidx == i - first
        if good:
            ok += 1
        else:
            bad += 1
            if bad <= 3:
                C.check(False, "%s: example %d" % (name, i),
                        "got %s (shard %r, index %r), want %r" % (ex[:300], shard, sidx, to_json(want)))
    C.check(bad == 0 and ok == len(exs), "%s: all %d examples (JSON, shard, shard_index)" % (name, ok))
    return e, exs


def check_columns(name, e, exs):
    _n[0] += 1
    t = "temp.at%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING atlas(%s, infer=100000)" % (t, sql_quote(os.path.join(D, e["path"]))))
    cols = [r[0] for r in rows("SELECT name FROM pragma_table_xinfo(?) WHERE schema = 'temp' AND hidden = 0",
                               t.split(".")[1])]
    vals = [x["value"] for x in exs]
    if vals and all(isinstance(v, dict) and not any(k.startswith("$") for k in v) for v in vals):
        fields = []
        for v in vals:
            fields += [k for k in v if k not in fields]
        C.eq(cols, fields, "%s create: one column per key" % name)
    elif vals and all(isinstance(v, (list, dict)) and (isinstance(v, list) or "$tuple" in v) for v in vals):
        n = max(len(v if isinstance(v, list) else v["$tuple"]) for v in vals)
        C.eq(cols, ["c%d" % k for k in range(n)], "%s create: positional columns" % name)
        return
    else:
        C.eq(cols, ["value"], "%s create: one value column" % name)
        return
    ok = bad = 0
    for x in exs:
        if refused_global(x["value"]):
            continue
        got = rows("SELECT %s FROM %s WHERE rowid = ?" % (", ".join('"%s"' % c for c in cols), t), x["i"])[0]
        for c, gv in zip(cols, got):
            w = x["value"].get(c)
            if isinstance(w, str) and special(w) is not None:
                w = None if math.isnan(special(w)) else special(w)
            if isinstance(w, bool):
                w = int(w)
            good = (gv == w) if not isinstance(w, (dict, list)) else gv is not None
            ok, bad = (ok + 1, bad) if good else (ok, bad + 1)
            if not good and bad <= 3:
                C.check(False, "%s create: example %d column %s" % (name, x["i"], c), "got %r want %r" % (gv, w))
    C.check(bad == 0, "%s create: all %d column values" % (name, ok))


for name in sorted(f[:-5] for f in os.listdir(os.path.join(D, "expected"))):
    e, exs = check_dataset(name)
    check_columns(name, e, exs)

# mid: aggregates over all 20,000 examples, and shard = pushdown
conn.execute("CREATE VIRTUAL TABLE temp.mid USING atlas(%s)" % sql_quote(os.path.join(D, "mid")))
with open(os.path.join(D, "expected", "mid.json")) as f:
    agg = json.load(f)["aggregates"]
got = rows("SELECT count(*), sum(id), sum(label), min(score), max(score), count(DISTINCT text) FROM mid")[0]
C.eq(got, (agg["count"], agg["sum_id"], agg["sum_label"], agg["min_score"], agg["max_score"], agg["distinct_text"]),
     "mid: aggregates over every example")
C.eq(rows("SELECT count(*) FROM mid WHERE ok")[0][0], agg["count_ok_true"], "mid: count of ok")
C.check(abs(rows("SELECT sum(score) FROM mid")[0][0] - agg["sum_score_fsum"]) < 1e-6, "mid: sum(score)")
C.eq(rows("SELECT count(*), min(rowid), max(rowid) FROM mid WHERE shard = 1")[0], (8192, 8192, 16383),
     "mid: shard = 1 is rows 8192..16383")
C.eq(rows("SELECT shard, shard_index FROM mid WHERE rowid = 19999")[0], (2, 3615), "mid: last row's shard")

# exotic with placeholders: the refused objects become {"$unsupported": ...}
ex = "atlas(%s, 'unsupported=placeholder')" % sql_quote(os.path.join(D, "exotic"))
got = json.loads(rows("SELECT example FROM %s WHERE rowid = 6" % ex)[0][0])
C.eq(got, {"$unsupported": "atlas_fixture_classes.Point"}, "exotic: placeholder for a user class")
C.eq(rows("SELECT count(*) FROM %s" % ex)[0][0], 19, "exotic: every example readable with placeholders")
try:
    rows("SELECT example FROM %s WHERE rowid = 15" % ex)
    C.check(False, "exotic: a cycle is an error even with placeholders")
except Exception as err:  # noqa: BLE001
    C.check("recursive" in str(err), "exotic: a cycle is an error even with placeholders", str(err))

C.exit()
