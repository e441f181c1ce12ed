"""test_tfrecord_fixtures.py - the committed TFRecord fixtures
(tests/fixtures/tfrecord/, written by make_fixtures.py) are what their
expected/*.json say, read by an implementation other than ours: the framing
walked here in Python with python3-crc32c's CRC-32C (checked against RFC
3720 first) and TensorFlow's mask, gzip / zlib undone by Python's modules,
every intact record parsed by Google's protobuf runtime as a
tf.train.Example (proto/example.proto), the damaged files stopping at the
record and offset their JSON names, and the .idx sidecar equal to the
frames' offsets and sizes. The C reader is compared with the same JSON by
tests/unit/test_tfrecord.c. Usage: test_tfrecord_fixtures.py [BUILD_DIR]"""
import gzip
import json
import os
import struct
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker  # noqa: E402
from tfexample_records import Protos  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(ROOT, "tests", "fixtures", "tfrecord")
C = Checker()

try:
    import crc32c
except ImportError:  # tools/deps.sh test installs python3-crc32c
    crc32c = None


def masked(data):
    """TensorFlow's crc32c::Mask(crc32c::Value(data))."""
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frames(data):
    """(records, frames [(offset, size)], stop) where stop is None or
    (record, offset, what) for the first record that does not check out."""
    recs, fr, off = [], [], 0
    while off < len(data):
        i = len(recs)
        if len(data) - off < 12:
            return recs, fr, (i, off, "cut short")
        (n,) = struct.unpack("<Q", data[off:off + 8])
        (lc,) = struct.unpack("<I", data[off + 8:off + 12])
        if lc != masked(data[off:off + 8]):
            return recs, fr, (i, off, "length CRC mismatch")
        if len(data) - off - 12 < n + 4:
            return recs, fr, (i, off, "cut short")
        body = data[off + 12:off + 12 + n]
        (dc,) = struct.unpack("<I", data[off + 12 + n:off + 16 + n])
        if dc != masked(body):
            return recs, fr, (i, off, "data CRC mismatch")
        recs.append(body)
        fr.append((off, 16 + n))
        off += 16 + n
    return recs, fr, None


def plain_bytes(name, compression):
    """The file's framed bytes (decompressed as far as it goes when cut)."""
    with open(os.path.join(FIX, name), "rb") as f:
        raw = f.read()
    if compression == "none":
        return raw, False
    d = zlib.decompressobj(16 + zlib.MAX_WBITS if compression == "gzip" else zlib.MAX_WBITS)
    out, rest = b"", raw
    while rest:
        out += d.decompress(rest)
        if not d.eof:
            return out, True  # the stream is cut: what came out of it
        rest = d.unused_data  # another gzip member
        if rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    return out, False


def check_file(mod, name):
    with open(os.path.join(FIX, "expected", name + ".json")) as f:
        exp = json.load(f)
    data, stream_cut = plain_bytes(name, exp["compression"])
    recs, _, stop = frames(data)
    want = [bytes.fromhex(h) for h in exp["records"]]
    C.eq(recs, want, "%s: the records read equal expected" % name)
    err = exp["error"]
    if err is None:
        C.eq(stop, None, "%s: ends after its last record" % name)
        C.check(not stream_cut, "%s: its stream is whole" % name)
    else:
        got = (stop[0], stop[1]) if stop else (len(recs), len(data))
        C.eq(got, (err["record"], err["offset"]), "%s: stops at the expected record" % name)
        if stop:
            C.eq(stop[2], err["what"], "%s: for the expected reason" % name)
        else:
            C.check(stream_cut and err["what"] == "cut short",
                    "%s: the compressed stream is cut" % name)
    bad = []
    for i, r in enumerate(recs):
        ex = mod.Example()
        try:
            ex.ParseFromString(r)
        except Exception:  # noqa: BLE001 - any parse failure is a bad record
            bad.append(i)
    C.eq(bad, [], "%s: every record parses as a tf.train.Example" % name)


def main():
    if crc32c is None:
        C.check(False, "python3-crc32c is installed (tools/deps.sh test)")
        C.exit()
    C.eq(crc32c.crc32c(bytes(32)), 0x8A9136AA, "crc32c: RFC 3720 B.4, 32 zero bytes")
    C.eq(crc32c.crc32c(bytes(range(32))), 0x46DD794E, "crc32c: RFC 3720 B.4, 0..31")
    names = sorted(f[:-5] for f in os.listdir(os.path.join(FIX, "expected")))
    C.check(len(names) >= 9, "every fixture has its expected JSON", names)
    with tempfile.TemporaryDirectory() as tmp:
        mod = Protos(tmp).TFMAP
        for name in names:
            C.run(check_file, mod, name, name=name)
    # the sidecar: one "offset size" line per frame of examples.tfrecord
    with open(os.path.join(FIX, "examples.tfrecord"), "rb") as f:
        _, fr, _ = frames(f.read())
    with open(os.path.join(FIX, "examples.tfrecord.idx")) as f:
        lines = [tuple(int(x) for x in line.split()) for line in f if line.strip()]
    C.eq(lines, fr, "examples.tfrecord.idx: the frames' offsets and sizes")
    # gzip.decompress agrees with the member walk above
    with open(os.path.join(FIX, "examples.multi.tfrecord"), "rb") as f:
        multi = gzip.decompress(f.read())
    with open(os.path.join(FIX, "examples.tfrecord"), "rb") as f:
        C.eq(multi, f.read(), "examples.multi.tfrecord: both gzip members are the plain file")
    C.exit()


if __name__ == "__main__":
    main()
