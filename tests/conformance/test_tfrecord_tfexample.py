"""test_tfrecord_tfexample.py - records=tfexample over TFRecord files
(vtab/tfexample_columns.h, the same code and options as bagz) and the
conversions both ways, over tests/fixtures/tfrecord/ (records written by
python3-protobuf, make_fixtures.py):
- tfrecord -> bagz with INSERT ... SELECT: the bag's records equal the
  fixture's expected records; bagz -> tfrecord (an upstream bag of four
  shards, expected/concat.json) uncompressed and gzip: the records equal;
- records=tfexample on the TFRecord file gives the same columns and rows as
  on the bag converted from it, and each feature equals tfexample_json of
  the record; infer=, columns=, bytes=text are taken; records=tfexample is
  refused in the table-valued form as for bagz;
- a records=tfexample writer (columns=) writes the same record bytes as the
  bagz writer given the same rows;
- dataset(...) forwards to tfrecord, dataset_info has its rows (rows,
  shards, compression, the damaged record of a cut file), dataset_shards
  lists a comma list's files.
Usage: test_tfrecord_tfexample.py BUILD_DIR"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect, error_of, sql_quote  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "tfrecord")
BAGS = os.path.join(ROOT, "tests", "fixtures", "upstream", "bagz")
C = Checker()


def expected(name):
    with open(os.path.join(FIX, "expected", name + ".json")) as f:
        e = json.load(f)
    e["records"] = [bytes.fromhex(h) for h in e["records"]]
    return e


def concat_records():
    with open(os.path.join(BAGS, "expected", "concat.json")) as f:
        e = json.load(f)
    return [bytes.fromhex(r["$bytes_hex"]) for shard in e["per_shard_records"] for r in shard]


def check_convert(conn, tmp):
    recs = expected("examples.tfrecord")["records"]
    src = os.path.join(FIX, "examples.gzip.tfrecord")
    bag = os.path.join(tmp, "from-tfrecord@*.bagz")
    conn.execute("CREATE VIRTUAL TABLE temp.ob USING bagz(%s, mode=create, rows_per_shard=5)"
                 % sql_quote(bag))
    conn.execute("INSERT INTO ob(record) SELECT record FROM tfrecord(%s)" % sql_quote(src))
    conn.commit()
    got = [r[0] for r in conn.execute("SELECT record FROM bagz(%s) ORDER BY rowid"
                                      % sql_quote(bag))]
    C.eq(got, recs, "tfrecord (gzip) -> bagz: records equal")
    want = concat_records()
    for comp in ("none", "gzip"):
        out = os.path.join(tmp, "from-bagz-%s.tfrecord" % comp)
        conn.execute("CREATE VIRTUAL TABLE temp.ot USING tfrecord(%s, mode=create, "
                     "compression=%s)" % (sql_quote(out), comp))
        conn.execute("INSERT INTO ot(record) SELECT record FROM bagz(%s)"
                     % sql_quote(os.path.join(BAGS, "concat@4.bagz")))
        conn.commit()
        got = [r[0] for r in conn.execute("SELECT record FROM tfrecord(%s) ORDER BY rowid"
                                          % sql_quote(out))]
        C.eq(got, want, "bagz (4 shards) -> tfrecord compression=%s: records equal" % comp)
        conn.execute("DROP TABLE temp.ot")
    conn.execute("DROP TABLE temp.ob")
    return bag


def rows(conn, table):
    cols = [r[1] for r in conn.execute("PRAGMA table_info(%s)" % table)]
    return cols, conn.execute("SELECT * FROM %s ORDER BY rowid" % table).fetchall()


def check_columns(conn, bag):
    src = os.path.join(FIX, "examples.tfrecord")
    for opts in ("", ", infer=3", ", bytes=text",
                 ", columns='label INTEGER, caption BLOB, score REAL'"):
        conn.execute("CREATE VIRTUAL TABLE temp.ft USING tfrecord(%s, records=tfexample%s)"
                     % (sql_quote(src), opts))
        conn.execute("CREATE VIRTUAL TABLE temp.fb USING bagz(%s, records=tfexample%s)"
                     % (sql_quote(bag), opts))
        ct, rt = rows(conn, "ft")
        cb, rb = rows(conn, "fb")
        C.eq(ct, cb, "records=tfexample%s: the same columns as bagz" % opts)
        C.eq(rt, rb, "records=tfexample%s: the same rows as bagz" % opts)
        C.check(len(rt) == 12, "records=tfexample%s: 12 rows" % opts, len(rt))
        conn.execute("DROP TABLE temp.ft")
        conn.execute("DROP TABLE temp.fb")
    # each feature equals tfexample_json of its record
    conn.execute("CREATE VIRTUAL TABLE temp.ft USING tfrecord(%s, records=tfexample, "
                 "bytes=text)" % sql_quote(src))
    feats = conn.execute("SELECT label, score, caption, tfexample_json(record) FROM ft "
                         "ORDER BY rowid").fetchall()
    ok = 0
    for label, score, caption, js in feats:
        j = json.loads(js)
        want = (j["label"][0] if "label" in j else None, j["score"][0] if "score" in j else None)
        ok += (label, score) == want and (caption is None) == ("caption" not in j)
    C.eq(ok, 12, "label, score and caption agree with tfexample_json")
    C.eq(conn.execute("SELECT label, count(*) FROM ft GROUP BY label ORDER BY label").fetchall(),
         conn.execute("SELECT json_extract(tfexample_json(record), '$.label[0]') AS l, count(*) "
                      "FROM tfrecord(%s) GROUP BY l ORDER BY l" % sql_quote(src)).fetchall(),
         "GROUP BY label equals the same over tfexample_json")
    conn.execute("DROP TABLE temp.ft")
    err = error_of(conn, "SELECT * FROM tfrecord(%s, 'records=tfexample')" % sql_quote(src))
    berr = error_of(conn, "SELECT * FROM bagz(%s, 'records=tfexample')" % sql_quote(bag))
    C.check(err is not None and berr is not None and
            err.replace("tfrecord", "M").split(":")[-1] == berr.replace("bagz", "M").split(":")[-1],
            "records=tfexample refused in the table-valued form as for bagz", (err, berr))


def check_writer_columns(conn, tmp):
    src = os.path.join(FIX, "examples.tfrecord")
    outs = {}
    for mod, name in (("tfrecord", "w.tfrecord"), ("bagz", "w.bag")):
        out = os.path.join(tmp, name)
        conn.execute("CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=create, records=tfexample, "
                     "columns='label INTEGER, score REAL, caption BLOB')" % (mod, sql_quote(out)))
        conn.execute("CREATE VIRTUAL TABLE temp.r USING tfrecord(%s, records=tfexample)"
                     % sql_quote(src))
        conn.execute("INSERT INTO w(label, score, caption) SELECT label, score, caption FROM r "
                     "ORDER BY rowid")
        conn.commit()
        conn.execute("DROP TABLE temp.w")
        conn.execute("DROP TABLE temp.r")
        outs[mod] = [r[0] for r in conn.execute("SELECT record FROM %s(%s) ORDER BY rowid"
                                                % (mod, sql_quote(out)))]
    C.eq(outs["tfrecord"], outs["bagz"], "records=tfexample writers: tfrecord's records equal "
         "bagz's")
    C.eq(len(outs["tfrecord"]), 12, "records=tfexample writer: 12 records")
    conn.execute("CREATE VIRTUAL TABLE temp.back USING tfrecord(%s, records=tfexample)"
                 % sql_quote(os.path.join(tmp, "w.tfrecord")))
    conn.execute("CREATE VIRTUAL TABLE temp.orig USING tfrecord(%s, records=tfexample)"
                 % sql_quote(src))
    C.eq(conn.execute("SELECT label, score, caption FROM back ORDER BY rowid").fetchall(),
         conn.execute("SELECT label, score, caption FROM orig ORDER BY rowid").fetchall(),
         "records=tfexample writer: the features read back")
    conn.execute("DROP TABLE temp.back")
    conn.execute("DROP TABLE temp.orig")


def check_dataset(conn):
    e = expected("examples.tfrecord")
    src = os.path.join(FIX, "examples.zlib.tfrecord")
    conn.execute("CREATE VIRTUAL TABLE temp.d USING dataset(%s)" % sql_quote(src))
    C.eq([r[0] for r in conn.execute("SELECT record FROM d ORDER BY rowid")], e["records"],
         "dataset() over a zlib TFRecord file: the records")
    conn.execute("DROP TABLE temp.d")
    info = dict(conn.execute("SELECT property, value FROM dataset_info(%s)" % sql_quote(src)))
    C.eq((info.get("format"), info.get("rows"), info.get("shards"), info.get("compression")),
         ("tfrecord", len(e["records"]), 1, "zlib"), "dataset_info: format, rows, shards, "
         "compression")
    cut = expected("cut.tfrecord")
    path = os.path.join(FIX, "cut.tfrecord")
    # rows: the intact records (the damaged one fails: README "tfrecord")
    info = dict(conn.execute("SELECT property, value FROM dataset_info(%s)" % sql_quote(path)))
    want = "%s: record %d at offset %d" % (path, cut["error"]["record"], cut["error"]["offset"])
    C.check(info.get("rows") == len(cut["records"]) and want in (info.get("damaged") or ""),
            "dataset_info of a cut file: the intact rows and the damaged record", info)
    spec = ",".join(os.path.join(FIX, n) for n in ("examples.tfrecord", "cut.tfrecord"))
    got = conn.execute("SELECT shard, path, rows FROM dataset_shards(%s) ORDER BY shard"
                       % sql_quote(spec)).fetchall()
    C.eq(got, [(0, os.path.join(FIX, "examples.tfrecord"), 12),
               (1, path, len(cut["records"]) + 1)],
         "dataset_shards: one row per file (a cut file's damaged record is its last row)")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    conn = connect(build)
    with tempfile.TemporaryDirectory() as tmp:
        bag = C.run(check_convert, conn, tmp, name="convert")
        if bag:
            C.run(check_columns, conn, bag, name="columns")
        C.run(check_writer_columns, conn, tmp, name="writer columns")
    C.run(check_dataset, conn, name="dataset")
    C.exit()


if __name__ == "__main__":
    main()
