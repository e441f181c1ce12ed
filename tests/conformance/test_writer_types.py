"""test_writer_types.py - a writer's declared column type is a promise to
the reader (issue 22): the datadings, atlas and tf.Example writers store a
value as a native SQLite table of that declared type would (numeric text
to a number, a whole REAL to INTEGER, a number to its text in a TEXT
column) and refuse what no conversion fits, naming the dataset, row and
column; the value read back has the declared type.
Usage: test_writer_types.py BUILD_DIR"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect, error_of  # noqa: E402

C = Checker()

GOOD = [  # (label INTEGER, v REAL, t TEXT) given -> as stored
    (("12", " 3.5 ", 5), (12, 3.5, "5")),
    ((7.0, 2, 1.25), (7, 2.0, "1.25")),
    ((-3, "1e2", "x"), (-3, 100.0, "x")),
]
BAD = [  # (column, value, what the error says)
    ("label", "'abc'", "'abc' is not an integer"),
    ("label", "1.5", "1.5 is not an integer"),
    ("label", "x'00'", "a BLOB is not an integer"),
    ("v", "'zz'", "'zz' is not a REAL"),
    ("t", "x'01'", "a BLOB is not TEXT"),
]




def lit(v):
    return "'%s'" % v if isinstance(v, str) else repr(v)


def main():
    conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
    conn.isolation_level = None
    tmp = tempfile.mkdtemp(prefix="ds-wtypes-")
    try:
        # datadings and atlas: columns label INTEGER, v REAL, t TEXT
        for module, name, keycol in (("datadings", "d.msgpack", True), ("atlas", "a_dir", False)):
            path = os.path.join(tmp, name)
            conn.execute("CREATE VIRTUAL TABLE temp.w USING %s('%s', mode=create, "
                         "columns='label INTEGER, v REAL, t TEXT')" % (module, path))
            conn.execute("BEGIN")
            for k, (given, _) in enumerate(GOOD):
                cols = ("key, " if keycol else "") + "label, v, t"
                vals = (("'k%d', " % k) if keycol else "") + ", ".join(lit(x) for x in given)
                conn.execute("INSERT INTO w(%s) VALUES (%s)" % (cols, vals))
            for col, value, says in BAD:
                cols = ("key, " if keycol else "") + col
                vals = ("'bad', " if keycol else "") + value
                e = error_of(conn, "INSERT INTO w(%s) VALUES (%s)" % (cols, vals))
                C.check(e is not None and path in e and col in e and says in e
                        and ("sample 3" in e or "example 3" in e),
                        "%s: %s = %s refused naming the dataset, row and column" % (module, col, value), e)
            conn.execute("COMMIT")
            conn.execute("DROP TABLE temp.w")
            if module == "datadings":
                got = [json.loads(s) for (s,) in conn.execute(
                    "SELECT sample FROM datadings('%s') ORDER BY rowid" % path)]
                got = [(g["label"], g["v"], g["t"]) for g in got]
            else:
                got = [tuple(json.loads(e)[k] for k in ("label", "v", "t")) for (e,) in conn.execute(
                    "SELECT example FROM atlas('%s') ORDER BY rowid" % path)]
            want = [w for _, w in GOOD]
            C.eq(got, want, "%s: values stored as their declared types" % module)
            C.check(all(type(a) is type(b) for g, w in zip(got, want) for a, b in zip(g, w)),
                    "%s: stored types are the declared ones (int, float, str)" % module, got)
        # tf.Example: an INTEGER feature
        bag = os.path.join(tmp, "ex.bagz")
        conn.execute("CREATE VIRTUAL TABLE temp.x USING bagz('%s', mode=create, records=tfexample, "
                     "columns='label INTEGER, score REAL')" % bag)
        conn.execute("INSERT INTO x(label, score) VALUES ('7', '0.5')")
        e = error_of(conn, "INSERT INTO x(label) VALUES ('seven')")
        C.check(e is not None and bag in e and "label" in e and "'seven' is not an integer" in e,
                "tfexample: 'seven' refused for an INTEGER feature", e)
        conn.execute("DROP TABLE temp.x")
        C.eq([json.loads(j) for (j,) in conn.execute(
            "SELECT tfexample_json(record) FROM bagz('%s')" % bag)],
             [{"label": [7], "score": [0.5]}], "tfexample: '7' and '0.5' stored as int64 and float")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
