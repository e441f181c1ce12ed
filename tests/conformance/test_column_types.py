"""test_column_types.py - types declared with columns= convert values as
SQLite's type affinity does (issue 12 item 7), in every module that takes
columns= (datadings, atlas, bagz records=tfexample).

Native SQLite is the reference: for each upstream fixture and each
declared type (INTEGER, INT, REAL, FLOAT, DOUBLE, TEXT, BLOB, NUMERIC,
none) the values of an untyped table (columns='a, b, ...': as stored) are
inserted into a native TEMP table declared with that type, and every cell
of the typed virtual table must equal the native one, type and value.
A JSON column gives each value's JSON text, compared with the field in the
sample / example JSON. The tf.Example records (numeric text among them,
read with bytes=text) are written by Google's protobuf runtime.
Usage: test_column_types.py BUILD_DIR."""
import json
import os
import re
import shutil
import sys
import tempfile

from dstest import FIXTURES, Checker, connect, write_tail_bag
from tfexample_records import Protos, make

BUILD = sys.argv[1]
C = Checker()
conn = connect(BUILD)
TYPES = ["INTEGER", "INT", "REAL", "FLOAT", "DOUBLE", "TEXT", "BLOB", "NUMERIC", ""]
n_tables = 0


def ident(name):
    return '"' + name.replace('"', '""') + '"'


def visible_columns(table, skip):
    """The declared (not HIDDEN) columns of a table, less `skip`."""
    return [r[1] for r in conn.execute("SELECT * FROM pragma_table_xinfo(?) WHERE schema = 'temp'",
                                       (table,)) if r[6] == 0 and r[1] not in skip]


def cells(sql):
    return conn.execute(sql).fetchall()


def compare(label, create, fields):
    """create(columns_spec) is a CREATE VIRTUAL TABLE statement for a table
    named {name}; every declared type must give what native SQLite stores."""
    global n_tables
    n_tables += 1
    raw = "raw%d" % n_tables
    conn.execute(create(", ".join(fields)).format(name="temp." + raw))
    cols = ", ".join(ident(f) for f in fields)
    for t in TYPES:
        n_tables += 1
        typed, native = "typed%d" % n_tables, "native%d" % n_tables
        spec = ", ".join((f + " " + t).strip() for f in fields)
        conn.execute(create(spec).format(name="temp." + typed))
        conn.execute("CREATE TEMP TABLE %s(%s)" % (native, ", ".join(
            (ident(f) + " " + t).strip() for f in fields)))
        conn.execute("INSERT INTO %s SELECT %s FROM %s ORDER BY rowid" % (native, cols, raw))
        got = cells("SELECT %s FROM %s ORDER BY rowid" % (cols, typed))
        want = cells("SELECT %s FROM %s ORDER BY rowid" % (cols, native))
        C.eq(len(got), len(want), "%s %s: rows" % (label, t or "(none)"))
        for j, f in enumerate(fields):
            bad = [(i, g[j], w[j]) for i, (g, w) in enumerate(zip(got, want))
                   if type(g[j]) is not type(w[j]) or g[j] != w[j]]
            C.check(not bad, "%s: %s %s as native SQLite" % (label, f, t or "(none)"),
                    "%d rows differ, first (row, got, native) %r" % (len(bad), bad[:1]))


def compare_json(label, create, fields, whole):
    """A JSON column gives each field's value as JSON text (SQL NULL for
    an absent field or nil): the field of the `whole` JSON column."""
    global n_tables
    n_tables += 1
    name = "json%d" % n_tables
    conn.execute(create(", ".join(f + " JSON" for f in fields)).format(name="temp." + name))
    rows = cells("SELECT %s, %s FROM %s ORDER BY rowid"
                 % (", ".join(ident(f) for f in fields), whole, name))
    for j, f in enumerate(fields):
        bad = []
        for i, r in enumerate(rows):
            whole_value = json.loads(r[-1])
            ref = whole_value.get(f) if isinstance(whole_value, dict) else None
            if r[j] is not None and not isinstance(r[j], str):
                bad.append((i, r[j], ref))  # not JSON text
            else:
                try:
                    got = None if r[j] is None else json.loads(r[j])
                except ValueError:
                    got = ("not JSON", r[j])
                if got != ref:
                    bad.append((i, r[j], ref))
        C.check(not bad, "%s: %s JSON is the field's JSON" % (label, f),
                "%d rows differ, first %r" % (len(bad), bad[:1]))
    conn.execute("DROP TABLE temp.%s" % name)


# ---------------------------------------------------------------- datadings
def datadings_create(path):
    return lambda spec: "CREATE VIRTUAL TABLE {name} USING datadings(%r, columns=%r)" % (path, spec)


for fx in ("hetero", "basic", "keys"):
    path = os.path.join(FIXTURES, "datadings", fx, fx + ".msgpack")
    conn.execute("CREATE VIRTUAL TABLE temp.inf_%s USING datadings(%r, infer=all)" % (fx, path))
    fields = [f for f in visible_columns("inf_" + fx, ("key",)) if re.match(r"^\w+$", f)]
    compare("datadings " + fx, datadings_create(path), fields)
    compare_json("datadings " + fx, datadings_create(path), fields, "sample")

# ---------------------------------------------------------------- atlas
def atlas_create(path):
    return lambda spec: "CREATE VIRTUAL TABLE {name} USING atlas(%r, columns=%r)" % (path, spec)


for fx in ("types", "none"):
    path = os.path.join(FIXTURES, "atlas", fx)
    conn.execute("CREATE VIRTUAL TABLE temp.inf_%s USING atlas(%r, infer=all)" % (fx, path))
    fields = [f for f in visible_columns("inf_" + fx, ()) if re.match(r"^\w+$", f)]
    compare("atlas " + fx, atlas_create(path), fields)
    compare_json("atlas " + fx, atlas_create(path), fields, "example")

# ---------------------------------------------------------------- bagz records=tfexample
T = tempfile.mkdtemp(prefix="column-types-")
try:
    P = Protos(T)
    pb = P.PB
    records = [
        make(pb, [("n", "bytes", [b"12"]), ("i", "int64", [7]), ("f", "float", [2.5])]),
        make(pb, [("n", "bytes", [b"abc"]), ("i", "int64", [-3]), ("f", "float", [3.0])]),
        make(pb, [("n", "bytes", [b" 3.0e+5 "]), ("i", "int64", [2**62]), ("f", "float", [1e30])]),
        make(pb, [("n", "bytes", [b"0x10"]), ("i", "int64", [1, 2]), ("f", "float", [0.1, 0.2])]),
        make(pb, [("n", "bytes", [b"-0.5"]), ("f", "float", [float("inf")])]),
        make(pb, [("n", "bytes", [b"9223372036854775808"]), ("i", "int64", [0])]),
        make(pb, [("n", "bytes", [b"1e400", b"x"]), ("f", "float", [float("nan")])]),
        make(pb, [("n", "bytes", [b"\xff\x00"])]),
        make(pb, []),
    ]
    bag = write_tail_bag(os.path.join(T, "ex.bag"), records)
    for opt in ("", ", bytes=text"):
        compare("bagz tfexample" + opt, lambda spec, o=opt: (
            "CREATE VIRTUAL TABLE {name} USING bagz(%r, records=tfexample, columns=%r%s)"
            % (bag, spec, o)), ["n", "i", "f"])

    # what the issue asked for, spelled out
    conn.execute("CREATE VIRTUAL TABLE temp.bt USING bagz(%r, records=tfexample, bytes=text, "
                 "columns='n INTEGER, i TEXT, f TEXT, j JSON')" % bag)
    got = cells("SELECT n, typeof(n), i, typeof(i), f FROM bt WHERE rowid IN (0, 1, 2)")
    C.eq(got, [(12, "integer", "7", "text", "2.5"), ("abc", "text", "-3", "text", "3.0"),
               (300000, "integer", str(2**62), "text", "1.00000001504747e+30")],
         "an INTEGER column gives '12' as 12 and leaves 'abc'; TEXT gives numbers as text")
    conn.execute("CREATE VIRTUAL TABLE temp.bj USING bagz(%r, records=tfexample, bytes=text, "
                 "columns='n JSON, i JSON')" % bag)
    C.eq(cells("SELECT n, i, json_type(n) FROM bj WHERE rowid IN (0, 3)"),
         [('"12"', "7", "text"), ('"0x10"', "[1,2]", "text")],
         "a JSON column gives a value's JSON text")
finally:
    shutil.rmtree(T)

conn.execute("CREATE VIRTUAL TABLE temp.ht USING datadings(%r, columns='val TEXT')"
             % os.path.join(FIXTURES, "datadings", "hetero", "hetero.msgpack"))
C.eq(cells("SELECT val, typeof(val) FROM ht WHERE rowid IN (0, 2, 4, 7)"),
     [("0", "text"), ("2.5", "text"), (None, "null"), (b"\x07\x07\x07", "blob")],
     "datadings: a TEXT column of a field holding 0 gives '0'; NULL and BLOB stay")
C.exit()
