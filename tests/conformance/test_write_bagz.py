"""test_write_bagz.py - writing bags with SQL: every upstream bagz fixture
is copied with INSERT ... SELECT through the CREATE form (and from the
table-valued form), then read back and compared with the fixture's
expected/*.json; uncompressed bags must be byte-identical to upstream's
files, zstd bags equal record for record. Also sharding, options, errors
(UPDATE/DELETE, NULL records, rowids) and mode=create / mode=replace.
Usage: test_write_bagz.py BUILD_DIR"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote, typed  # noqa: E402

B = os.path.join(FIXTURES, "bagz")
C = Checker()
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
conn = connect(BUILD)
TMP = tempfile.mkdtemp(prefix="ds_write_bagz_")
_n = [0]


def expected(name):
    with open(os.path.join(B, "expected", name + ".json")) as f:
        return json.load(f)


def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def table(spec, opts=""):
    """A new writer table on TMP/spec; returns its name."""
    _n[0] += 1
    t = "temp.w%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING bagz(%s%s)"
                 % (t, sql_quote(os.path.join(TMP, spec)), (", " + opts) if opts else ""))
    return t


def copy(src, src_opts, dst, dst_opts, form="create"):
    """INSERT every record of src into a new table on dst; commit."""
    t = table(dst, dst_opts)
    if form == "create":
        _n[0] += 1
        s = "temp.s%d" % _n[0]
        conn.execute("CREATE VIRTUAL TABLE %s USING bagz(%s%s)"
                     % (s, sql_quote(os.path.join(B, src)), (", " + src_opts) if src_opts else ""))
        conn.execute("INSERT INTO %s(record) SELECT record FROM %s" % (t, s))
    else:
        conn.execute("INSERT INTO %s(record) SELECT record FROM bagz(?, ?)" % t,
                     (os.path.join(B, src), src_opts.replace(" ", "")))
    conn.commit()
    return t


def same_bytes(a, b):
    with open(a, "rb") as f, open(b, "rb") as g:
        return f.read() == g.read()


def records(t):
    return [r[0] for r in rows("SELECT record FROM %s ORDER BY rowid" % t)]


# 1. single-file fixtures, through both forms
SINGLE = [  # expected name, file, reader options, writer options, byte-identical
    ("plain", "plain.bag", "", "", True),
    ("keys", "keys.bag", "", "", True),
    ("empty", "empty.bagz", "", "", True),
    ("allempty", "allempty.bagz", "", "", True),
    ("zstd", "zstd.bagz", "", "", False),
    ("level19", "level19.bagz", "", "level=19", False),
    ("crafted_nocontentsize", "crafted_nocontentsize.bagz", "", "", False),
    ("dict", "dict.bagz", "dictionary=" + os.path.join(B, "dict_raw.txt"),
     "level=3, dictionary=" + os.path.join(B, "dict_raw.txt"), False),
]
for form in ("create", "tvf"):
    for name, f, ro, wo, identical in SINGLE:
        e = expected(name)
        out = "%s-%s" % (form, f)
        t = copy(f, ro, out, "mode=create" + (", " + wo if wo else ""), form)
        want = [typed(r) for r in e["records"]]
        C.eq(records(t), want, "%s %s: records read back through the table" % (form, name))
        reread = "bagz(%s, %s)" % (sql_quote(os.path.join(TMP, out)), sql_quote(ro.replace(" ", "")))
        C.eq([r[0] for r in rows("SELECT record FROM " + reread)], want,
             "%s %s: records read back in a new table-valued call" % (form, name))
        C.eq(rows("SELECT count(*) FROM " + t)[0][0], e["count"], "%s %s: count" % (form, name))
        if identical:
            C.check(same_bytes(os.path.join(B, f), os.path.join(TMP, out)),
                    "%s %s: byte-identical to upstream's file" % (form, name))

# separate limits: both files byte-identical
t = copy("separate.bagz", "limits=separate, compression=none", "separate.bag", "mode=create, limits=separate")
C.check(same_bytes(os.path.join(B, "separate.bagz"), os.path.join(TMP, "separate.bag")) and
        same_bytes(os.path.join(B, "limits.separate.bagz"), os.path.join(TMP, "limits.separate.bag")),
        "separate: records and limits files byte-identical")
C.eq(records(t), [r[0] for r in rows("SELECT record FROM bagz(?, 'limits=separate,compression=none')",
                                      os.path.join(B, "separate.bagz"))], "separate: stored records")

# 2. sharded fixtures
e = expected("sepset")
t = copy("sepset@2.bagz", "limits=separate", "sepset@*.bagz", "mode=create, limits=separate, rows_per_shard=3")
C.eq(records(t), [typed(r) for r in e["records"]], "sepset: records")
C.eq(sorted(os.listdir(TMP)).count("limits.sepset-00001-of-00002.bagz"), 1, "sepset: per-shard limits files")
C.eq(rows("SELECT shard, count(*) FROM %s GROUP BY shard" % t), [(0, 3), (1, 2)], "sepset: shard sizes")
for name, spec, layout_opts in (("inter", "inter@3.bagz", ""), ("concat", "concat@4.bagz", "")):
    e = expected(name)
    want = [typed(r) for r in e["layouts"]["CONCATENATED"]["records"]]
    t = copy(spec, layout_opts, "c" + spec, "mode=create")
    C.eq(records(t), want, "%s: records in order" % name)
    sizes = [r[0] for r in rows("SELECT count(*) FROM %s GROUP BY shard ORDER BY shard" % t)]
    n = int(spec.split("@")[1].split(".")[0])
    C.eq(len(os.listdir(TMP)) >= n and sum(sizes) == len(want), True, "%s: %d shards" % (name, n))
    C.eq(max(sizes) - min(sizes) <= 1, True, "%s: name@N splits evenly: %r" % (name, sizes))
e = expected("mid")
t = copy("mid.bagz", "", "mid@*.bagz", "mode=create, rows_per_shard=20000, threads=2")
C.eq(rows("SELECT count(*), sum(length(record)) FROM " + t)[0], (e["count"], e["total_bytes"]),
     "mid: count and total bytes with threads=2 and 3 shards")
C.eq(rows("SELECT count(DISTINCT shard) FROM " + t)[0][0], 3, "mid: 3 shards")
C.eq([r[0] for r in rows("SELECT record FROM %s WHERE rowid IN (0, 101, 49999) ORDER BY rowid" % t)],
     [typed(x["record"]) for x in e["every_101st"][:2]] + [typed(e["last"]["record"])], "mid: records by rowid")

# 3. what a writer table refuses
t = table("refuse.bag", "mode=create")
C.raises(lambda: conn.execute("INSERT INTO %s(record) VALUES (NULL)" % t), "NULL record refused",
         "bagz", "row 0", "NULL")
C.raises(lambda: conn.execute("INSERT INTO %s(record) VALUES (42)" % t), "INTEGER record refused",
         "row 0", "INTEGER")
conn.execute("INSERT INTO %s(record) VALUES ('text'), (x'00ff')" % t)
C.raises(lambda: conn.execute("INSERT INTO %s(rowid, record) VALUES (7, x'01')" % t), "a rowid gap refused",
         "rowid", "7", "2")
conn.execute("INSERT INTO %s(rowid, record) VALUES (2, x'02')" % t)
conn.commit()
C.raises(lambda: conn.execute("UPDATE %s SET record = x'00' WHERE rowid = 0" % t), "UPDATE refused",
         "written once")
C.raises(lambda: conn.execute("DELETE FROM %s WHERE rowid = 0" % t), "DELETE refused", "written once")
conn.rollback()
C.eq(records(t), [b"text", b"\x00\xff", b"\x02"], "TEXT stored as its UTF-8 bytes; rowid = next index")
C.raises(lambda: table("plain.bag", "mode=create, rows_per_shard=5"), "rows_per_shard needs a shard spec",
         "rows_per_shard")
C.raises(lambda: table("bad.bag", "mode=sometimes"), "unknown mode", "mode")
C.raises(lambda: table("bad.bag", "mode=create, level=99"), "level out of range", "level")
C.raises(lambda: table("keys.bag", "mode=create, levl=3"), "unknown option named", "levl")

# 4. mode=create over an existing file: refused, the file untouched
src = os.path.join(TMP, "exists.bag")
shutil.copy(os.path.join(B, "plain.bag"), src)
C.raises(lambda: table("exists.bag", "mode=create"), "mode=create refuses an existing bag",
         "exists.bag", "already exists")
C.check(same_bytes(src, os.path.join(B, "plain.bag")), "mode=create: existing file untouched")
# a second writer on the same path is refused while the first exists
t = table("locked.bag", "mode=create")
C.raises(lambda: table("locked.bag", "mode=replace"), "two writers on one path refused", "another writer")
conn.execute("DROP TABLE %s" % t)

# 5. a second commit on the same table appends
t = table("twice.bag", "mode=create")
conn.execute("INSERT INTO %s(record) VALUES (x'01')" % t)
conn.commit()
conn.execute("INSERT INTO %s(record) VALUES (x'02')" % t)
conn.commit()
C.eq(records(t), [b"\x01", b"\x02"], "second commit appends")
C.eq([r[0] for r in rows("SELECT record FROM bagz(?)", os.path.join(TMP, "twice.bag"))], [b"\x01", b"\x02"],
     "second commit: files hold both")
C.eq([f for f in os.listdir(TMP) if ".ds-tmp." in f], [], "no temporaries left")

# 6. a writer table must be TEMP when the database is a file
import sqlite3  # noqa: E402

dbf = os.path.join(TMP, "schema.db")
c1 = sqlite3.connect(dbf)
c1.enable_load_extension(True)
c1.load_extension(os.path.join(BUILD, "datasets"))
C.raises(lambda: c1.execute("CREATE VIRTUAL TABLE kept USING bagz(%s, mode=create)"
                            % sql_quote(os.path.join(TMP, "kept.bag"))),
         "a writer table in a database file is refused", "must be TEMP")
c1.execute("CREATE VIRTUAL TABLE temp.kept USING bagz(%s, mode=create)" % sql_quote(os.path.join(TMP, "kept.bag")))
c1.execute("INSERT INTO kept(record) VALUES (x'01'), (x'02')")
c1.commit()
C.eq(c1.execute("SELECT count(*) FROM bagz(?)", (os.path.join(TMP, "kept.bag"),)).fetchone()[0], 2,
     "a TEMP writer table beside a database file writes")
c1.close()

conn.close()
shutil.rmtree(TMP)
C.exit()
