#!/usr/bin/python3
"""gen_pickles.py - write the pickle fixtures of tests/unit/test_pickle.c.

Run with Debian's /usr/bin/python3 (3.11, python3-numpy 1.24):
    /usr/bin/python3 tests/unit/gen_pickles.py tests/fixtures/pickle

For every case below and every protocol it is pickled with, writes
<case>_p<N>.pkl (pickle.dumps(obj, protocol=N)) and an entry of
expected.json: {"file", "protocol", "value"} where value is the typed JSON
of the ORIGINAL object (the pickles are never loaded here: some are
hostile), in the conventions of shared/fixtures/atlas/MANIFEST.md plus the
mapping the C decoder promises:
  datetime/date/time -> ISO text; timedelta -> float seconds; an aware
  datetime -> {"$object": <tzinfo class>}; OrderedDict -> a plain dict;
  numpy arrays -> "<" dtypes (numpy's unpickler swaps big-endian data);
  numpy dtype objects -> their .npy description text;
  any global off the allow-list -> {"$object": "module.name"} naming the
  global the pickle references.
numpy 2 names (numpy._core.*) and the numpy >= 2.3 protocol-5 'K' order are
produced with stand-in modules, as the atlas numpy2_* fixtures were.
"""
import base64
import collections
import datetime
import decimal
import json
import math
import os
import pickle
import sys
import types

import numpy as np


def fake_module(name):
    """A stand-in module registered in sys.modules (and its parents)."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        if sub not in sys.modules:
            sys.modules[sub] = types.ModuleType(sub)
    return sys.modules[name]


def fake_function(module, name):
    """A function that pickles as the global module.name."""
    def f(*args):
        raise RuntimeError("never called")
    f.__module__ = module
    f.__qualname__ = f.__name__ = name
    setattr(fake_module(module), name, f)
    return f


# numpy 2 globals
NP2_RECONSTRUCT = fake_function("numpy._core.multiarray", "_reconstruct")
NP2_SCALAR = fake_function("numpy._core.multiarray", "scalar")
NP2_FROMBUFFER = fake_function("numpy._core.numeric", "_frombuffer")


class Np2Array:
    """Pickles like numpy >= 2.3 pickles `a` (protocol 5 buffer path, or
    _reconstruct under numpy._core names)."""

    def __init__(self, a, order=None, axes=None):
        self.a, self.order, self.axes = a, order, axes

    def __reduce_ex__(self, proto):
        a = self.a
        if self.order == "K":
            base = a.transpose(np.argsort(self.axes))
            assert base.flags.c_contiguous
            return (NP2_FROMBUFFER, (pickle.PickleBuffer(base) if proto >= 5 else base.tobytes(),
                                     a.dtype, base.shape, "K", tuple(self.axes)))
        if self.order in ("C", "F"):
            buf = a.tobytes(order=self.order)
            return (NP2_FROMBUFFER, (bytearray(buf), a.dtype, a.shape, self.order))
        return (NP2_RECONSTRUCT, (np.ndarray, (0,), b"b"),
                (1, a.shape, a.dtype, False, a.tobytes()))


class Np2Scalar:
    """Pickles like a numpy 2 scalar."""

    def __init__(self, s):
        self.s = s

    def __reduce__(self):
        return (NP2_SCALAR, (self.s.dtype, self.s.tobytes()))


FIXTURE_MOD = fake_module("fixture_classes")


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


Point.__module__ = "fixture_classes"
FIXTURE_MOD.Point = Point


class KwPoint:
    """Pickled with NEWOBJ_EX (keyword arguments to __new__)."""

    def __new__(cls, *args, **kw):
        return object.__new__(cls)

    def __init__(self, x=0):
        self.x = x

    def __getnewargs_ex__(self):
        return ((1,), {"x": self.x})


KwPoint.__module__ = "fixture_classes"
FIXTURE_MOD.KwPoint = KwPoint


class MyList(list):
    pass


class MyDict(dict):
    pass


MyList.__module__ = MyDict.__module__ = "fixture_classes"
FIXTURE_MOD.MyList, FIXTURE_MOD.MyDict = MyList, MyDict


class Hostile:
    """__reduce__ naming a dangerous callable; pickling never runs it."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


# ------------------------------------------------------------ typed JSON

def tfloat(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def tarray(a):
    """$ndarray of the array numpy's unpickler gives back."""
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    c = np.ascontiguousarray(a)
    if a.dtype.hasobject:
        return {"$ndarray": {"dtype": "|O", "shape": list(a.shape),
                             "items": [tjson(x) for x in c.ravel().tolist()]}}
    out = {"dtype": a.dtype.str, "shape": list(a.shape),
           "data_b64": base64.b64encode(c.tobytes()).decode()}
    if a.dtype.names:
        from numpy.lib.format import dtype_to_descr
        out["descr"] = repr(dtype_to_descr(a.dtype))
    return {"$ndarray": out}


def tjson(o):
    """Typed JSON of a Python value (see the module comment)."""
    if o is None or isinstance(o, (bool, str)):
        return o
    if isinstance(o, np.ndarray):
        return tarray(o)
    if isinstance(o, np.generic):
        v = o.item()
        if isinstance(o, np.datetime64):
            v = None if np.isnat(o) else str(o)
        elif isinstance(o, np.timedelta64):
            v = None if np.isnat(o) else int(o.astype(np.int64))
        elif isinstance(o, np.bytes_):
            v = bytes(o)
        return {"$npscalar": {"dtype": o.dtype.str, "value": tjson(v)}}
    if isinstance(o, Np2Array):
        return tarray(o.a)
    if isinstance(o, Np2Scalar):
        return tjson(o.s)
    if isinstance(o, np.dtype):
        from numpy.lib.format import dtype_to_descr
        if o.subdtype is not None:
            base, shape = o.subdtype
            b = dtype_to_descr(base)
            return "(%s, %r)" % (repr(b) if isinstance(b, str) else repr(b), shape)
        d = dtype_to_descr(o)
        return d if isinstance(d, str) else repr(d)
    if isinstance(o, int):
        return o if -2**63 <= o < 2**63 else {"$bigint": str(o)}
    if isinstance(o, float):
        return tfloat(o)
    if isinstance(o, complex):
        return {"$complex": [tfloat(o.real), tfloat(o.imag)]}
    if isinstance(o, bytearray):
        return {"$bytearray_hex": o.hex()}
    if isinstance(o, bytes):
        return {"$bytes_hex": o.hex()}
    if isinstance(o, (MyList, MyDict, Point, KwPoint)):
        return {"$object": "fixture_classes." + type(o).__name__}
    if isinstance(o, Hostile):
        return {"$object": o.fn.__module__ + "." + o.fn.__qualname__}
    if isinstance(o, decimal.Decimal):
        return {"$object": "decimal.Decimal"}
    if isinstance(o, list):
        return [tjson(x) for x in o]
    if isinstance(o, tuple):
        return {"$tuple": [tjson(x) for x in o]}
    if isinstance(o, frozenset):
        return {"$frozenset": sorted((tjson(x) for x in o), key=repr)}
    if isinstance(o, set):
        return {"$set": sorted((tjson(x) for x in o), key=repr)}
    if isinstance(o, dict):
        if all(isinstance(k, str) for k in o):
            return {k: tjson(v) for k, v in o.items()}
        return {"$dict": [[tjson(k), tjson(v)] for k, v in o.items()]}
    if isinstance(o, datetime.timedelta):
        return o.total_seconds()
    if isinstance(o, (datetime.datetime, datetime.time)) and o.tzinfo is not None:
        return {"$object": type(o.tzinfo).__module__ + "." + type(o.tzinfo).__qualname__}
    if isinstance(o, (datetime.datetime, datetime.date, datetime.time)):
        return o.isoformat()
    raise TypeError("no typed JSON for %r" % (o,))


# ------------------------------------------------------------ cases

ALL = (2, 3, 4, 5)


def cases():
    """(name, object, protocols)."""
    ints = [0, 7, 255, 256, 65535, 65536, -1, -255, -256, -2**31, 2**31 - 1, 2**31,
            -2**31 - 1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 2**64 - 1, 2**64 + 5,
            -(2**80) - 7, 2**2100 + 1, -(2**2100)]
    yield "ints", ints, ALL
    yield "floats", [1.5, -0.1, 0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324,
                     1.7976931348623157e308, math.pi, 3.0], ALL
    yield "atoms", [True, False, None, "", "abc", "caf\u00e9", "\u4e2d\u6587",
                    "\U0001f600", "a\x00b\x01\n", "x" * 300, b"", b"abc", b"\x00\xff" * 150,
                    bytearray(b""), bytearray(b"xy"), complex(1, -2), complex(0.5, math.inf)], ALL
    yield "containers", {"t0": (), "t1": (1,), "t2": (1, "a"), "t3": (1, 2, 3),
                         "t5": (1, 2, 3, 4, (5,)), "l0": [], "l1": [1],
                         "nested": [[1, [2, [3, {"k": [4]}]]], {"a": {"b": {}}}],
                         "d0": {}, "d1": {"one": 1}, "intkeys": {1: "a", -2: "b", 2**70: "c"},
                         "tuplekeys": {(0, 1): 0.5, (1, 0): 0.25}, "mixed": {None: 1, 1.5: 2, b"x": 3},
                         "set": {1, 2, 3}, "fset": frozenset(["a", "b"]), "eset": set(),
                         "efset": frozenset()}, ALL
    yield "long_list", [list(range(1200)), list(range(-5, 1000))], ALL
    yield "big_dict", {"k%04d" % i: i for i in range(1001)}, ALL
    shared = [1, 2, 3]
    vocab = ["w%03d" % i for i in range(300)]
    yield "shared", {"a": shared, "b": shared, "c": [shared, shared], "vocab": vocab,
                     "last": vocab[-1], "first": vocab[0]}, ALL
    arr = np.arange(6, dtype=np.int16)
    yield "shared_array", [arr, {"again": arr}], ALL
    yield "arrays", {
        "u8": np.arange(48, dtype=np.uint8).reshape(4, 4, 3),
        "i16": np.array([-1, 2, -3], dtype=np.int16),
        "i64": np.array([-2**63, 2**63 - 1], dtype=np.int64),
        "f16": np.array([1.5, -2.0, np.inf], dtype=np.float16),
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f64": np.array([np.nan, np.inf, -0.0, 1e300]),
        "bool": np.array([True, False, True]),
        "c64": np.array([1 + 2j, -3j], dtype=np.complex64),
        "c128": np.array([1 + 2j, -0.5j]),
        "zero_d": np.array(3.25), "zero_d_i": np.array(-7, dtype=np.int32),
        "fortran": np.asfortranarray(np.arange(24, dtype=np.float32).reshape(4, 6)),
        "fortran3": np.asfortranarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4)),
        "slice": np.arange(20, dtype=np.int32)[::3],
        "transposed": np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 0, 1),
        "empty": np.zeros((0,), dtype=np.float64), "empty2": np.zeros((2, 0), dtype=np.int8),
        "be_i4": np.arange(3, dtype=">i4"), "be_f8": np.array([1.5, -2.0], dtype=">f8"),
        "be_c16": np.array([1 + 2j], dtype=">c16"), "be_U3": np.array(["ab", "xyz"], dtype=">U3"),
        "be_f4_fortran": np.asfortranarray(np.arange(6, dtype=">f4").reshape(2, 3)),
        "U5": np.array(["cat", "horse", ""], dtype="<U5"),
        "S2": np.array([b"ab", b"c"], dtype="S2"),
        "struct": np.array([(1.5, 2), (3.0, 4)], dtype=[("x", "<f4"), ("y", "u1")]),
        "struct_pad": np.zeros(2, dtype=np.dtype({"names": ["a", "b"], "formats": ["<i2", "<f8"],
                                                  "offsets": [0, 8], "itemsize": 24})),
        "struct_nested": np.zeros(2, dtype=[("p", [("x", "<i4"), ("y", ">i2")]), ("m", "<f4", (2, 3))]),
        "objects": np.array([1, "two", None, [3]], dtype=object),
        "objects2d": np.array([[1, 2], [3, "x"]], dtype=object),
        "dt64": np.array(["2024-01-01T00:00:00", "NaT"], dtype="M8[s]"),
        "dt64_10ms": np.array([0, 5], dtype="M8[10ms]"),
        "td64": np.array([1, -2], dtype="m8[D]"),
        "dt64_generic": np.array(["NaT"], dtype="M8"),
    }, ALL
    ro = np.arange(5, dtype=np.uint8)
    ro.flags.writeable = False
    yield "readonly", [ro, np.arange(4, dtype=np.float32)], (4, 5)
    yield "scalars", [np.float32(1.5), np.float64(-0.25), np.float16(0.5), np.int64(-3),
                      np.int32(7), np.uint8(255), np.bool_(True), np.bool_(False),
                      np.uint64(2**64 - 1), np.int8(-128), np.complex64(1 - 1j),
                      np.complex128(0.5 + 2j), np.str_("npstr"), np.bytes_(b"ab"),
                      np.datetime64("2021-03-04T05:06:07", "s"), np.datetime64("NaT", "s"),
                      np.timedelta64(90, "m"), np.array([1, 2], dtype=">i2")[0]], ALL
    yield "dtypes", [np.dtype("f4"), np.dtype(">i8"), np.dtype("U7"), np.dtype("M8[ns]"),
                     np.dtype([("x", "<f4"), ("y", "u1")]), np.dtype(("<f4", (2,))),
                     np.dtype(([("a", "<i4")], (2, 3)))], ALL
    yield "numpy2", [Np2Array(np.arange(6, dtype=np.int16).reshape(2, 3)),
                     Np2Array(np.arange(24, dtype=np.float32).reshape(4, 6), order="C"),
                     Np2Array(np.asfortranarray(np.arange(24, dtype=np.float32).reshape(4, 6)), order="F"),
                     Np2Array(np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(1, 0, 2), "K", (1, 0, 2)),
                     Np2Array(np.arange(24, dtype=np.int32).reshape(2, 3, 4).transpose(2, 0, 1), "K", (2, 0, 1)),
                     Np2Array(np.arange(4, dtype=">u2"), order="C"),
                     Np2Scalar(np.float32(2.5)), Np2Scalar(np.int16(-5))], (4, 5)
    yield "objects", [collections.OrderedDict([("b", 1), ("a", 2)]),
                      datetime.datetime(2024, 2, 29, 13, 45, 30, 123456),
                      datetime.datetime(1999, 12, 31, 23, 59, 59),
                      datetime.date(2024, 1, 2), datetime.time(1, 2, 3), datetime.time(23, 0, 0, 5),
                      datetime.timedelta(days=1, seconds=5, microseconds=7),
                      datetime.timedelta(days=-3, hours=2),
                      datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
                      decimal.Decimal("1.25"), Point(1, 2), MyList([1, 2]), MyDict(a=1),
                      "after the objects"], ALL
    yield "newobj_ex", [KwPoint(5), "tail"], (4, 5)
    import posix
    yield "hostile_system", [Hostile(posix.system, ("touch /tmp/pickle-pwned",)), "ok"], ALL
    yield "hostile_eval", [Hostile(eval, ("__import__('os').system('true')",)), 1], ALL
    yield "hostile_getattr", [Hostile(getattr, ("abc", "upper")), 2], ALL
    import subprocess
    yield "hostile_subprocess", [Hostile(subprocess.check_output, (["true"],))], (4,)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    entries = []
    for name, obj, protos in cases():
        for p in protos:
            f = "%s_p%d.pkl" % (name, p)
            with open(os.path.join(out, f), "wb") as fh:
                fh.write(pickle.dumps(obj, protocol=p))
            entries.append({"file": f, "protocol": p, "value": tjson(obj)})
    with open(os.path.join(out, "expected.json"), "w") as fh:
        json.dump({"generator": "tests/unit/gen_pickles.py",
                   "python": sys.version.split()[0], "numpy": np.__version__,
                   "cases": entries}, fh, indent=1, allow_nan=False)
        fh.write("\n")
    print("%d pickles written to %s" % (len(entries), out))


if __name__ == "__main__":
    main()
