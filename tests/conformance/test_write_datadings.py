"""test_write_datadings.py - writing datadings datasets with SQL.

Every upstream datadings fixture is copied with INSERT ... SELECT:
  * by `key, raw` (from the table-valued form): the six files must be
    byte-identical to upstream's for the fixtures its current writer made;
  * by `key, sample` (JSON) and through typed columns (from a CREATE-form
    table, INSERT INTO out SELECT * FROM src): the copy must read back equal
    to the source, column by column and as `sample` JSON, and its keys and
    count equal expected/*.json.
Then refusals (duplicate and reserved keys, raw that is not a map with that
key, UPDATE/DELETE) naming the row. Usage: test_write_datadings.py BUILD_DIR"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402
from dd_expected import Unsupported, column_value, same_column, to_json, top_fields  # noqa: E402

D = os.path.join(FIXTURES, "datadings")
C = Checker()
conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
TMP = tempfile.mkdtemp(prefix="ds_write_dd_")
SUFFIXES = ["", ".offsets", ".keys", ".key_hashes", ".filter", ".md5"]
_n = [0]


def expected(name):
    with open(os.path.join(D, "expected", name + ".json")) as f:
        return json.load(f)


def src_path(name):
    return os.path.join(D, name, name + ".msgpack")


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def name_t():
    _n[0] += 1
    return "temp.t%d" % _n[0]


def writer(path, opts=""):
    t = name_t()
    conn.execute("CREATE VIRTUAL TABLE %s USING datadings(%s, mode=create%s)"
                 % (t, sql_quote(path), (", " + opts) if opts else ""))
    return t


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def tvf(path):
    return "datadings(%s)" % sql_quote(path)


UPSTREAM_WRITTEN = ["basic", "hetero", "keys", "empty", "ndarrays", "mid"]


def same_as_expected(label, path, e):
    """Every sample of the dataset at path, as `sample` JSON, equals the
    fixture's expected/*.json (upstream's reader); mid lists every 97th."""
    got = [json.loads(r[0]) if r[0] is not None else None
           for r in rows("SELECT sample FROM %s ORDER BY rowid" % tvf(path))]
    want = e.get("samples")
    if want is None:  # mid: [index, key, sample] of every 97th sample
        pairs = [(i, s) for i, _, s in e["sampled"]]
    else:
        pairs = list(enumerate(want))
    bad = []
    for i, w in pairs:
        try:
            w = to_json(w)
        except Unsupported:
            continue
        if got[i] != w:
            bad.append(i)
    C.check(not bad and len(got) == e["n"], "%s: %d samples equal expected/*.json" % (label, len(pairs)),
            "samples %r differ" % bad[:5])


def columns_as_expected(label, t, e):
    """Every field column of table t equals the expected sample's field."""
    cols = [r[1] for r in rows("PRAGMA temp.table_info(%s)" % t.split(".")[1]) if r[1] != "key"]
    ok = bad = 0
    for i, s in enumerate(e["samples"]):
        fields = top_fields(s)
        got = rows("SELECT %s FROM %s WHERE rowid = ?" % (", ".join('"%s"' % c for c in cols), t), i)[0] \
            if cols else ()
        for c, g in zip(cols, got):
            try:
                want = column_value(fields[c]) if c in fields else None
            except Unsupported:
                continue
            if same_column(g, want):
                ok += 1
            else:
                bad += 1
                if bad <= 3:
                    C.check(False, "%s: sample %d field %s" % (label, i, c), "got %r, want %r" % (g, want))
    C.check(bad == 0, "%s: all %d field values equal expected/*.json" % (label, ok))

# 1. by key + raw: byte for byte
for name in UPSTREAM_WRITTEN + ["salt1", "legacy", "converted"]:
    os.makedirs(os.path.join(TMP, "raw"), exist_ok=True)
    out = os.path.join(TMP, "raw", name + ".msgpack")  # same name: the .md5 lists it
    t = writer(out)
    conn.execute("INSERT INTO %s(key, raw) SELECT key, raw FROM %s" % (t, tvf(src_path(name))))
    conn.commit()
    e = expected(name)
    C.eq(rows("SELECT count(*) FROM %s" % t)[0][0], e["n"], "%s raw copy: count read back" % name)
    if "keys" in e:
        C.eq([r[0] for r in rows("SELECT key FROM %s" % t)], e["keys"], "%s raw copy: keys read back" % name)
    C.eq(rows("SELECT raw FROM %s" % tvf(out)), rows("SELECT raw FROM %s" % tvf(src_path(name))),
         "%s raw copy: every sample's bytes" % name)
    if name in UPSTREAM_WRITTEN:
        bad = [s for s in SUFFIXES if not same_bytes(src_path(name) + s, out + s)]
        C.eq(bad, [], "%s raw copy: all six files byte-identical to upstream's" % name)
    C.eq([r[3] for r in rows("SELECT * FROM datadings_verify(?)", out)], [1] * 5,
         "%s raw copy: datadings_verify" % name)
    same_as_expected("%s raw copy" % name, out, e)

# the sharded set, shard by shard
for s in range(4):
    src = os.path.join(D, "sharded", "part-%05d.msgpack" % s)
    out = os.path.join(TMP, "part-%05d.msgpack" % s)
    t = writer(out)
    conn.execute("INSERT INTO %s(key, raw) SELECT key, raw FROM %s" % (t, tvf(src)))
    conn.commit()
    C.eq([x for x in SUFFIXES if not same_bytes(src + x, out + x)], [], "sharded part %d byte-identical" % s)
C.eq(rows("SELECT key FROM %s" % tvf(os.path.join(TMP, "part-*.msgpack"))),
     [(k,) for k in expected("sharded")["keys"]], "sharded copy: keys through the glob")

# raw that breaks the sample rules (upstream's RawWriter accepted it) is refused
t = writer(os.path.join(TMP, "raw.msgpack"))
C.raises(lambda: conn.execute("INSERT INTO %s(key, raw) SELECT key, raw FROM %s" % (t, tvf(src_path("raw")))),
         "raw fixture: a sample without its key refused, naming the row", "datadings", "sample 1")
conn.rollback()
conn.execute("DROP TABLE %s" % t)
# ... and copied as upstream's RawWriter wrote it with writer=raw: the raw
# bytes as given (no key field, another key, an array, an int-keyed map)
os.makedirs(os.path.join(TMP, "rawwriter"), exist_ok=True)
out = os.path.join(TMP, "rawwriter", "raw.msgpack")  # same name: the .md5 lists it
t = writer(out, "writer=raw")
conn.execute("INSERT INTO %s(key, raw) SELECT key, raw FROM %s" % (t, tvf(src_path("raw"))))
conn.commit()
C.eq([x for x in SUFFIXES if not same_bytes(src_path("raw") + x, out + x)], [],
     "raw fixture with writer=raw: all six files byte-identical to upstream's")
C.eq(rows("SELECT key, raw FROM %s" % t), rows("SELECT key, raw FROM %s" % tvf(src_path("raw"))),
     "raw fixture with writer=raw: keys and bytes read back")
C.eq([r[0] for r in rows("SELECT key FROM %s" % t)], expected("raw")["keys"],
     "raw fixture with writer=raw: keys equal expected/raw.json")
C.raises(lambda: conn.execute("CREATE VIRTUAL TABLE temp.rd USING datadings(%s, writer=raw)"
                              % sql_quote(out)),
         "writer= is an option of writer tables only", "unknown option", "writer")


# 2. by key + sample JSON, and through typed columns
def read_all(t, cols):
    return rows("SELECT %s FROM %s ORDER BY rowid" % (", ".join(cols), t))


for name in UPSTREAM_WRITTEN + ["legacy"]:
    e = expected(name)
    src = name_t()
    conn.execute("CREATE VIRTUAL TABLE %s USING datadings(%s, infer=100000)" % (src, sql_quote(src_path(name))))
    cols = [r[1] for r in rows("PRAGMA temp.table_info(%s)" % src.split(".")[1])]
    refused = None
    # JSON: the copy's sample JSON equals the source's
    out = os.path.join(TMP, "json-%s.msgpack" % name)
    t = writer(out)
    try:
        conn.execute("INSERT INTO %s(key, sample) SELECT key, sample FROM %s" % (t, tvf(src_path(name))))
        conn.commit()
        C.eq(read_all(tvf(out), ["key", "sample"]), read_all(tvf(src_path(name)), ["key", "sample"]),
             "%s sample copy: key and sample JSON read back equal" % name)
        C.eq(rows("SELECT count(*) FROM %s" % tvf(out))[0][0], e["n"], "%s sample copy: count" % name)
        same_as_expected("%s sample copy" % name, out, e)
    except Exception as x:  # noqa: BLE001
        C.check(False, "%s sample copy" % name, x)
        conn.rollback()
    # typed columns: same columns, same values
    spec = ", ".join("%s %s" % (r[1], r[2]) for r in
                     rows("PRAGMA temp.table_info(%s)" % src.split(".")[1]) if r[1] != "key")
    out = os.path.join(TMP, "cols-%s.msgpack" % name)
    t = writer(out, "columns=%s" % sql_quote(spec) if spec else "")
    quoted = ", ".join('"%s"' % c.replace('"', '""') for c in cols)
    try:
        conn.execute("INSERT INTO %s(%s) SELECT %s FROM %s" % (t, quoted, quoted, src))
        conn.commit()
        reread = name_t()
        conn.execute("CREATE VIRTUAL TABLE %s USING datadings(%s, columns=%s)"
                     % (reread, sql_quote(out), sql_quote(spec)) if spec else
                     "CREATE VIRTUAL TABLE %s USING datadings(%s)" % (reread, sql_quote(out)))
        C.eq(read_all(reread, quoted.split(", ")), read_all(src, quoted.split(", ")),
             "%s column copy: every column reads back equal" % name)
        C.eq(read_all(t, quoted.split(", ")), read_all(src, quoted.split(", ")),
             "%s column copy: the writer table reads what it wrote" % name)
        if "samples" in e:
            columns_as_expected("%s column copy" % name, reread, e)
    except Exception as x:  # noqa: BLE001
        refused = str(x)
        conn.rollback()
    C.check(refused is None, "%s column copy" % name, refused)
    if name == "ndarrays" and refused is None:
        # structured arrays are written as msgpack-numpy writes them: their
        # samples are byte for byte upstream's (issue 22: they were refused)
        same = rows("SELECT s.key, s.raw = o.raw FROM %s s JOIN %s o USING (key) "
                    "WHERE s.key LIKE 'nd-struct%%'" % (tvf(src_path(name)), tvf(out)))
        C.eq(sorted(same), [("nd-struct", 1), ("nd-struct_nested", 1), ("nd-struct_subarray", 1)],
             "ndarrays column copy: structured arrays byte for byte upstream's")

# 3. refusals name the row
t = writer(os.path.join(TMP, "refuse.msgpack"), "columns='label INTEGER, tags JSON, image BLOB'")
conn.execute("INSERT INTO %s(key, label, tags) VALUES ('a', 1, '[1, 2]')" % t)
conn.commit()
C.raises(lambda: conn.execute("INSERT INTO %s(key, label) VALUES ('b', 2), ('a', 3)" % t),
         "duplicate key refused naming the row", "sample 2", "\"a\"", "already sample 0")
C.raises(lambda: conn.execute("INSERT INTO %s(key, tags) VALUES ('c', '[1, ')" % t),
         "bad JSON refused naming the row", "sample 1", "tags")
C.raises(lambda: conn.execute("INSERT INTO %s(key, label) VALUES (NULL, 1)" % t), "NULL key refused", "key")
C.raises(lambda: conn.execute("UPDATE %s SET label = 5" % t), "UPDATE refused", "written once")
C.raises(lambda: conn.execute("DELETE FROM %s" % t), "DELETE refused", "written once")
conn.commit()
C.eq(rows("SELECT key, label, tags FROM %s" % t), [("a", 1, "[1,2]")], "failed statements left nothing")
C.raises(lambda: writer(os.path.join(TMP, "r2.msgpack"), "columns='nd INTEGER'"), "reserved column refused", "nd")
t = writer(os.path.join(TMP, "sample.msgpack"))
C.raises(lambda: conn.execute("INSERT INTO %s(key, sample) VALUES ('k', '{\"complex\": 1}')" % t),
         "reserved field in sample refused", "sample 0", "complex", "reserved")
C.raises(lambda: conn.execute("INSERT INTO %s(key, raw) VALUES ('k', x'81a36b6579a16a')" % t),
         "raw whose key differs refused", "sample 0", "differs")
conn.execute("INSERT INTO %s(sample) VALUES ('{\"key\": \"own\", \"v\": 1}')" % t)
conn.commit()
C.eq(rows("SELECT key, sample FROM %s" % t), [("own", '{"key":"own","v":1}')], "key taken from the sample JSON")

conn.close()
shutil.rmtree(TMP)
C.exit()
