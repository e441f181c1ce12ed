"""test_tfexample_fixture.py - the bundled tf.Example bag
(tests/fixtures/tfexample/examples.bagz, written by make_examples.py with
Google's protobuf runtime) reads as columns exactly as that runtime parses
each record, and its README use works: records=tfexample infers
caption, emb, label, score.
Usage: test_tfexample_fixture.py BUILD_DIR"""
import os
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect  # noqa: E402
from tfexample_records import Protos  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
BAG = os.path.join(ROOT, "tests", "fixtures", "tfexample", "examples.bagz")
C = Checker()


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    conn = connect(build)
    conn.execute("CREATE VIRTUAL TABLE temp.t USING bagz('%s', records=tfexample, bytes=text)" % BAG)
    cols = [r[0] for r in conn.execute("SELECT name FROM pragma_table_info('t')")]
    C.eq(cols, ["caption", "emb", "label", "score"], "inferred feature columns")
    rows = conn.execute("SELECT label, score, caption, emb, record FROM t ORDER BY rowid").fetchall()
    C.eq(len(rows), 500, "500 records")
    with tempfile.TemporaryDirectory() as tmp:
        mod = Protos(tmp).TFMAP
        bad = []
        for i, (label, score, caption, emb, record) in enumerate(rows):
            ex = mod.Example()
            ex.ParseFromString(record)
            f = ex.features.feature
            want_emb = list(f["emb"].float_list.value)
            got_emb = list(struct.unpack("<4f", emb[-16:])) if emb else None
            if (label != f["label"].int64_list.value[0] or
                    score != f["score"].float_list.value[0] or
                    caption != f["caption"].bytes_list.value[0].decode() or
                    got_emb != want_emb):
                bad.append(i)
        C.eq(bad, [], "every record's columns equal Google's runtime's parse")
    C.eq(conn.execute("SELECT label, count(*) FROM t GROUP BY label ORDER BY label LIMIT 2").fetchall(),
         [(0, 50), (1, 50)], "GROUP BY label")
    C.eq(conn.execute("SELECT npy_dtype(emb), npy_shape(emb) FROM t WHERE rowid = 7").fetchone(),
         ("<f4", "[4]"), "emb is a float32 .npy of 4")
    C.exit()


if __name__ == "__main__":
    main()
