"""test_python_package.py - the sqlite_datasets package as a new user meets
it (issue 22): connect() publishes a writer's rows without commit(),
transaction() and copy() commit or publish nothing, the docstrings'
examples run as written, to_numpy says what is not an .npy BLOB,
read_sql types an expression column whose first rows are NULL, and the
Dask fan-out reads fields whose names clash or hold commas, spaces and
quotes exactly as one connection does.
Usage: test_python_package.py BUILD_DIR"""
import math
import os
import shutil
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

C = Checker()


def rows_in(path, module="bagz", cols="record"):
    """The rows of a dataset read in a fresh plain connection."""
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(os.environ["SQLITE_DATASETS_EXTENSION"])
    try:
        return conn.execute("SELECT %s FROM %s(?) ORDER BY rowid" % (cols, module),
                            (path,)).fetchall()
    finally:
        conn.close()


def test_autocommit(sd, tmp):
    """A writer's INSERT on connect()'s connection is published when the
    statement ends: closing without commit() loses nothing."""
    out = os.path.join(tmp, "auto.bagz")
    conn = sd.connect()
    conn.execute("CREATE VIRTUAL TABLE temp.w USING bagz(?, 'mode=create')".replace("?", "'%s'" % out))
    conn.execute("INSERT INTO w(record) VALUES ('a'), ('b')")
    conn.close()
    C.check(os.path.exists(out), "connect: an INSERT without commit() is published",
            "no %s after close()" % out)
    if os.path.exists(out):
        C.eq(rows_in(out), [(b"a",), (b"b",)], "connect: the published rows")


def test_transaction(sd, tmp):
    """transaction(): COMMIT at the end of the block, ROLLBACK (nothing
    published) when it raises, refused inside an open transaction."""
    out = os.path.join(tmp, "txn.bagz")
    conn = sd.connect()
    conn.execute("CREATE VIRTUAL TABLE temp.w USING bagz('%s', 'mode=create')" % out)
    try:
        with sd.transaction(conn):
            conn.execute("INSERT INTO w(record) VALUES ('x')")
            raise KeyError("boom")
    except KeyError:
        pass
    C.check(not os.path.exists(out), "transaction: a block that raises publishes nothing")
    with sd.transaction(conn):
        conn.execute("INSERT INTO w(record) VALUES ('y')")
        conn.execute("INSERT INTO w(record) VALUES ('z')")
    C.eq(rows_in(out), [(b"y",), (b"z",)], "transaction: the block's rows published at its end")
    conn.execute("BEGIN")
    try:
        with sd.transaction(conn):
            pass
        C.check(False, "transaction: refused inside an open transaction", "no error")
    except sqlite3.OperationalError as e:
        C.check("already open" in str(e), "transaction: refused inside an open transaction", e)
    conn.execute("ROLLBACK")
    conn.close()


def test_copy(sd, tmp):
    """copy(): every row published when it returns, the count returned;
    mode=create over an existing dataset refused with nothing changed."""
    src = os.path.join(FIXTURES, "bagz", "mid.bagz")
    want = rows_in(src)[::10]
    out = os.path.join(tmp, "val@*.bagz")
    n = sd.copy("SELECT record FROM bagz('%s') WHERE rowid %% 10 = 0" % src, out, "bagz",
                rows_per_shard=2000)
    C.eq(n, len(want), "copy: returns the rows written")
    C.eq(rows_in(out), want, "copy: the published rows equal the query's")
    shards = sorted(f for f in os.listdir(tmp) if f.startswith("val-"))
    C.eq(len(shards), (len(want) + 1999) // 2000, "copy: options reach the writer (rows_per_shard)")
    before = {f: open(os.path.join(tmp, f), "rb").read() for f in shards}
    try:
        sd.copy("SELECT 'new'", out, "bagz")
        C.check(False, "copy: mode=create over a dataset is refused", "no error")
    except sqlite3.Error as e:
        C.check("already exists" in str(e), "copy: mode=create over a dataset is refused", e)
    after = {f: open(os.path.join(tmp, f), "rb").read() for f in shards}
    C.check(before == after, "copy: a refused copy changes nothing")
    dd = os.path.join(tmp, "keys.msgpack")
    mid = os.path.join(FIXTURES, "datadings", "mid", "mid.msgpack")
    n = sd.copy("SELECT key, raw FROM datadings('%s') LIMIT 7" % mid, dd, "datadings")
    C.eq(rows_in(dd, "datadings", "key, sample"), rows_in(mid, "datadings", "key, sample")[:7],
         "copy: datadings written from key, raw")
    try:
        sd.copy("SELECT 1", os.path.join(tmp, "x.parquet"), "parquet")
        C.check(False, "copy: an unknown format is refused", "no error")
    except ValueError as e:
        C.check("bagz" in str(e), "copy: an unknown format is refused", e)


def docstring_examples(module):
    """The indented code blocks of a module's docstring, each as one text."""
    blocks, cur = [], []
    for line in (module.__doc__ or "").splitlines():
        if line.startswith("    "):
            cur.append(line[4:])
        elif cur:
            blocks.append("\n".join(cur))
            cur = []
    if cur:
        blocks.append("\n".join(cur))
    return blocks


def test_docstrings(tmp):
    """Every example in the package's docstrings runs as written, from a
    folder that sees the checkout's tests/ (outputs land there)."""
    import sqlite_datasets
    import sqlite_datasets.dask
    work = os.path.join(tmp, "doc")
    os.makedirs(work)
    os.symlink(os.path.join(ROOT, "tests"), os.path.join(work, "tests"))
    old = os.getcwd()
    os.chdir(work)
    try:
        for mod in (sqlite_datasets, sqlite_datasets.dask):
            blocks = docstring_examples(mod)
            C.check(blocks, "docstring %s has an example" % mod.__name__)
            for i, code in enumerate(blocks):
                try:
                    exec(compile(code, "<%s docstring %d>" % (mod.__name__, i), "exec"), {})
                    C.check(True, "docstring %s example %d runs" % (mod.__name__, i))
                except Exception as e:  # noqa: BLE001 - report any failure
                    C.check(False, "docstring %s example %d runs" % (mod.__name__, i),
                            "%s: %s" % (type(e).__name__, e))
    finally:
        os.chdir(old)


def test_to_numpy(sd):
    """to_numpy of something that is not an .npy BLOB says so."""
    try:
        sd.to_numpy(b"hello")
        C.check(False, "to_numpy: not an .npy BLOB", "no error")
    except ValueError as e:
        C.check("not an .npy BLOB" in str(e), "to_numpy: not an .npy BLOB", e)


def test_expression_dtype(tmp):
    """An expression column NULL in its first rows but float later is
    float64 in the Dask DataFrame's dtypes (it was object)."""
    from sqlite_datasets.dask import read_sql
    mid = os.path.join(FIXTURES, "bagz", "mid.bagz")
    df = read_sql("SELECT rowid AS r, CASE WHEN rowid > 3000 THEN rowid * 1.5 END AS x FROM ds", mid)
    C.eq(str(df.dtypes["x"]), "float64", "read_sql: late-valued expression column typed float64")
    got = df.compute()
    C.eq(str(got.dtypes["x"]), "float64", "read_sql: computed column float64")
    ok = all((math.isnan(x) if r <= 3000 else x == r * 1.5) for r, x in zip(got.r, got.x))
    C.check(ok, "read_sql: the expression's values")


ODD = ["a,b", "rowid", "Label", "label", "sp ace", 'say "hi"', "x INTEGER"]


def test_odd_field_names(sd, tmp):
    """Fields that clash (rowid, Label/label) or hold commas, spaces and
    quotes read through read_sql exactly as through one connection."""
    from sqlite_datasets.dask import read_sql
    import json
    path = os.path.join(tmp, "odd.msgpack")
    conn = sd.connect()
    conn.execute("CREATE VIRTUAL TABLE temp.w USING datadings('%s', 'mode=create')" % path)
    with sd.transaction(conn):
        for i in range(50):
            s = {"key": "k%02d" % i}
            s.update({f: i * (j + 1) for j, f in enumerate(ODD)})
            s["sp ace"] = "s%d" % i
            conn.execute("INSERT INTO w(key, sample) VALUES (?, ?)", ("k%02d" % i, json.dumps(s)))
    conn.execute("CREATE VIRTUAL TABLE temp.r USING datadings('%s')" % path)
    cur = conn.execute("SELECT * FROM r ORDER BY rowid")
    names = [d[0] for d in cur.description]
    one = [tuple(r) for r in cur.fetchall()]
    conn.close()
    df = read_sql("SELECT * FROM ds", path).compute()
    C.eq(list(df.columns), names, "read_sql: odd field names give the table's column names")
    got = [tuple(r) for r in df.itertuples(index=False)]
    C.eq(got, one, "read_sql: odd field names read the values one connection reads")
    C.check(all(v is not None for r in got for v in r), "read_sql: no NULL column for odd names")


def test_quoted_columns(sd, tmp):
    """columns= takes double-quoted names holding commas, spaces, quotes."""
    path = os.path.join(tmp, "odd.msgpack")
    conn = sd.connect()
    spec = '"a,b" INTEGER, "say ""hi""", "sp ace" TEXT'
    conn.execute("CREATE VIRTUAL TABLE temp.q USING datadings('%s', 'columns=%s')"
                 % (path, spec.replace("'", "''")))
    got = conn.execute('SELECT "a,b", "say ""hi""", "sp ace" FROM q WHERE key = \'k03\'').fetchall()
    C.eq(got, [(3, 18, "s3")], "columns=: quoted names read their fields")
    for bad, needle in (('"a,b INTEGER', "closing quote"), ('a INTEGER b', "not one of")):
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.bad USING datadings('%s', 'columns=%s')"
                         % (path, bad.replace("'", "''")))
            C.check(False, "columns=%s refused" % bad, "no error")
        except sqlite3.Error as e:
            C.check(needle in str(e), "columns=%s refused" % bad, e)
    conn.close()


def test_non_utf8_paths(tmp):
    """A file name that is not UTF-8 (passed as bytes) reads, and an error
    naming one is OperationalError with the byte escaped, not
    UnicodeDecodeError."""
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(os.environ["SQLITE_DATASETS_EXTENSION"])
    name = os.fsencode(tmp) + b"/ca\xe9.bagz"
    try:
        conn.execute("SELECT count(*) FROM bagz(?)", (name,)).fetchall()
        C.check(False, "non-UTF-8 path: missing file is an error", "no error")
    except sqlite3.OperationalError as e:
        C.check("ca\\xE9.bagz" in str(e) and "cannot open" in str(e),
                "non-UTF-8 path: OperationalError naming the file, byte escaped", e)
    except Exception as e:  # noqa: BLE001 - the bug raised UnicodeDecodeError
        C.check(False, "non-UTF-8 path: OperationalError naming the file, byte escaped",
                "%s: %s" % (type(e).__name__, e))
    shutil.copy(os.path.join(FIXTURES, "bagz", "mid.bagz"), name)
    C.eq(conn.execute("SELECT count(*) FROM bagz(?)", (name,)).fetchall(), [(50000,)],
         "non-UTF-8 path: a bytes path reads")
    try:
        conn.execute("SELECT * FROM datadings(?)", (name,)).fetchall()
        C.check(False, "non-UTF-8 path: a format error names the file", "no error")
    except sqlite3.OperationalError as e:
        C.check("ca\\xE9.bagz" in str(e), "non-UTF-8 path: a format error names the file", e)
    except Exception as e:  # noqa: BLE001
        C.check(False, "non-UTF-8 path: a format error names the file",
                "%s: %s" % (type(e).__name__, e))
    conn.close()


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    os.environ["SQLITE_DATASETS_EXTENSION"] = os.path.join(build, "datasets.so")
    import sqlite_datasets as sd
    tmp = tempfile.mkdtemp(prefix="ds-pypkg-")
    try:
        C.run(test_autocommit, sd, tmp)
        C.run(test_transaction, sd, tmp)
        C.run(test_copy, sd, tmp)
        C.run(test_docstrings, tmp)
        C.run(test_to_numpy, sd)
        C.run(test_expression_dtype, tmp)
        C.run(test_odd_field_names, sd, tmp)
        C.run(test_quoted_columns, sd, tmp)
        C.run(test_non_utf8_paths, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
