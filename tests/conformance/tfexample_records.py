"""tfexample_records.py - tf.train.Example records written by Google's
protobuf runtime (Debian's python3-protobuf), shared by
tests/conformance/test_tfexample.py and the seeds of tests/fuzz/run.sh.

protoc --python_out generates four modules at run time from
proto/example.proto (package renamed so they can live side by side):
  - example:          the file as it is (packed numbers);
  - example_unpacked: the same with [packed = false] (unpacked numbers);
  - example_extra:    the same with extra fields in every message (unknown
                      fields for the decoder, which must skip them);
  - example_tfmap:    Features written as TensorFlow declares it,
                      map<string, Feature>: the reference parser.
Run as a script, `tfexample_records.py OUTDIR` writes every case (packed,
unpacked, with unknown fields) under 64 KiB as OUTDIR/seed-tfex-<i>."""
import importlib
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO = open(os.path.join(ROOT, "proto", "example.proto")).read()

TFMAP_FEATURES = """message Features {
  map<string, Feature> feature = 1;
}
"""
EXTRA = {  # message -> unknown fields added (every wire type)
    "Example": "string note = 5; repeated fixed64 ids = 6; double w = 7;",
    "Features": "uint64 count = 9; fixed32 crc = 10;",
    "FeatureEntry": "sint64 z = 3; bytes blob = 4;",
    "Feature": "int32 tag = 7; float q = 8;",
    "BytesList": "string why = 2;",
    "FloatList": "repeated int32 other = 2;",
    "Int64List": "bytes junk = 3; fixed64 k = 4;",
}


def with_extra_fields(text):
    """The .proto text with the EXTRA fields added to its messages."""
    for msg, fields in EXTRA.items():
        head = "message %s {\n" % msg
        assert head in text, msg
        text = text.replace(head, head + "    " + fields + "\n", 1)
    return text


def tfmap_text(text):
    """The .proto text with Features declared as TensorFlow does."""
    start = text.index("message Features {")
    end = text.index("message Example {")
    return text[:start] + TFMAP_FEATURES + "\n" + text[end:]


class Protos:
    """The four Python modules, generated into folder tmp."""

    def __init__(self, tmp):
        self.tmp = tmp
        sys.path.insert(0, tmp)
        self.PB = self.module("example", PROTO)
        self.UNPACKED = self.module("example_unpacked",
                                    PROTO.replace("[packed = true]", "[packed = false]"))
        self.EXTRA = self.module("example_extra", with_extra_fields(PROTO))
        self.TFMAP = self.module("example_tfmap", tfmap_text(PROTO))

    def module(self, name, text):
        """Write name.proto, run protoc --python_out, import name_pb2."""
        text = text.replace("package tensorflow;", "package %s;" % name)
        with open(os.path.join(self.tmp, name + ".proto"), "w") as f:
            f.write(text)
        subprocess.run(["protoc", "--python_out=" + self.tmp, "--proto_path=" + self.tmp,
                        name + ".proto"], check=True)
        return importlib.import_module(name + "_pb2")



def make(mod, feats, extra=False):
    """A serialized Example of mod holding feats: (name, kind, values) with
    kind bytes/float/int64/none, in this order (names may repeat)."""
    ex = mod.Example()
    ex.features.SetInParent()
    for name, kind, values in feats:
        e = ex.features.feature.add()
        e.key = name.encode("utf-8") if isinstance(name, str) else name
        f = e.value
        if kind == "none":
            f.SetInParent()
        else:
            lst = getattr(f, kind + "_list")
            lst.SetInParent()
            lst.value.extend(values)
            if extra:
                if kind == "int64":
                    lst.junk = b"\x01\x02"
                    lst.k = 7
                elif kind == "float":
                    lst.other.extend([1, -2, 300])
                else:
                    lst.why = "unknown"
        if extra:
            e.z = -5
            e.blob = b"\xff" * 3
            f.tag = 12
            f.q = 1.5
    if extra:
        ex.note = "skip me"
        ex.ids.extend([1, 2, 3])
        ex.w = 2.5
        ex.features.count = 99
        ex.features.crc = 0xDEADBEEF
    return ex.SerializeToString()


INTS = [0, 1, -1, 127, 128, 2**31, -2**31 - 1, 2**53 + 1, 2**63 - 1, -2**63]
FLOATS = [0.0, -0.0, 0.1, 0.25, -3.5, 1e-45, 1.17549435e-38, 3.4028234663852886e38,
          16777217.0, 1 / 3]
SPECIAL = [float("nan"), float("inf"), float("-inf"), 1.0]
BIG = random.Random(1).randbytes(3 << 20)  # 3 MiB bytes value

CASES = [
    ("one of each kind", [("label", "int64", [3]), ("image/encoded", "bytes", [b"\x89PNG\x00"]),
                          ("score", "float", [0.25]), ("bbox", "float", [0.1, 0.2, 0.5, 0.9])]),
    ("empty features", []),
    ("empty lists", [("b", "bytes", []), ("f", "float", []), ("i", "int64", []),
                     ("unset", "none", [])]),
    ("int64 extremes", [("ints", "int64", INTS)]),
    ("float values", [("floats", "float", FLOATS)]),
    ("NaN and infinities", [("special", "float", SPECIAL)]),
    ("0-byte bytes values", [("empty", "bytes", [b"", b"", b"x", b""])]),
    ("3 MiB bytes value", [("big", "bytes", [BIG]), ("after", "int64", [1])]),
    ("many bytes values", [("many", "bytes", [bytes([i % 256]) * (i % 7) for i in range(1000)])]),
    ("long numeric lists", [("emb", "float", [i / 7 for i in range(4096)]),
                            ("ids", "int64", list(range(-2000, 2000)))]),
    ("names: unicode, empty, U+0000", [("é/名前", "int64", [1]), ("", "int64", [2]),
                                      ("a\x00b", "int64", [3]), ("a", "int64", [4])]),
    ("1000 features", [("f%d" % i, "int64", [i]) for i in range(1000)]),
]


def varint(n):
    """n as a protocol buffer varint."""
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def wrap(field, payload):
    """A length-delimited field."""
    return bytes([field << 3 | 2]) + varint(len(payload)) + payload


def entry_record(name, *features):
    """One map entry whose value field occurs once per serialized Feature."""
    e = wrap(1, name.encode()) + b"".join(wrap(2, f.SerializeToString()) for f in features)
    return wrap(1, wrap(1, e))


def all_records(protos):
    """Every case written three ways, and the merging cases."""
    out = []
    for _, feats in CASES:
        out.append(make(protos.PB, feats))
        out.append(make(protos.UNPACKED, feats))
        out.append(make(protos.EXTRA, feats, extra=True))
    pb = protos.PB
    out.append(make(pb, [("a", "int64", [1]), ("b", "bytes", [b"x"]), ("a", "float", [2.0])]))
    out.append(entry_record("m", pb.Feature(int64_list=pb.Int64List(value=[1, 2])),
                            pb.Feature(bytes_list=pb.BytesList(value=[b"q"]))))
    return out


if __name__ == "__main__":
    tmp = tempfile.mkdtemp(prefix="tfexample-seeds-")
    try:
        for i, rec in enumerate(all_records(Protos(tmp))):
            if len(rec) < 65536:
                with open(os.path.join(sys.argv[1], "seed-tfex-%d" % i), "wb") as f:
                    f.write(rec)
    finally:
        shutil.rmtree(tmp)
