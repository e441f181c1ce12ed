"""dd_expected.py - the datadings fixtures' typed JSON (expected/*.json,
written from upstream's reader) turned into what our tables return: the
`sample` JSON (to_json), a field column's SQLite value (column_value,
compared by same_column), and a sample's str-keyed top-level fields
(top_fields). Shared by test_datadings_fixtures.py and
test_write_datadings.py."""
import base64
import io
import json
import math

import numpy


class Unsupported(Exception):
    """A value our decoder refuses on purpose (object arrays for now)."""


def nonfinite(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def ndarray_json(a):
    """What our JSON holds for an ndarray: tolist() with our scalar rules."""
    if "items" in a:  # decoded by the pickle decoder into a list
        return [to_json(x) for x in a["items"]]
    dt = numpy.dtype(descr_dtype(a["descr"]) if "descr" in a else a["dtype"])
    arr = numpy.frombuffer(base64.b64decode(a["data_b64"]), dtype=dt).reshape(a["shape"])
    return scalar_json(arr.tolist())


def descr_dtype(descr):
    """msgpack-numpy's descr list (as on disk) -> a numpy dtype spec."""
    out = []
    for f in descr:
        t = descr_dtype(f[1]) if isinstance(f[1], list) else f[1]
        out.append((f[0], t, tuple(f[2])) if len(f) > 2 else (f[0], t))
    return out


def scalar_json(x):
    if isinstance(x, numpy.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [scalar_json(y) for y in x]
    if isinstance(x, complex):
        return [nonfinite(x.real), nonfinite(x.imag)]
    if isinstance(x, bytes):  # numpy S: bytes, base64 inside JSON
        return base64.b64encode(x.rstrip(b"\0")).decode()
    if isinstance(x, float):
        return nonfinite(x)
    return x


def special_float(v):
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.get(v)


def to_json(v):
    """The fixtures' typed JSON -> what our `sample` JSON should parse to."""
    if isinstance(v, dict):
        if "$int" in v:
            return int(v["$int"])
        if "$bytes_b64" in v:
            return v["$bytes_b64"]
        if "$complex" in v:
            return [nonfinite(to_float(x)) for x in v["$complex"]]
        if "$npscalar" in v:
            return to_json(v["$npscalar"]["value"])
        if "$ndarray" in v:
            return ndarray_json(v["$ndarray"])
        if "$map" in v:
            return {k if isinstance(k, str) else json.dumps(to_json(k), separators=(",", ":")):
                    to_json(x) for k, x in v["$map"]}
        # a str "key" field is always text (fixture keys has the key "NaN")
        return {k: x if k == "key" and isinstance(x, str) else to_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_json(x) for x in v]
    if isinstance(v, str) and special_float(v) is not None:
        return None
    if isinstance(v, float):
        return nonfinite(v)
    return v


def to_float(x):
    f = special_float(x) if isinstance(x, str) else None
    return f if f is not None else float(x)


def column_value(v):
    """The fixtures' typed JSON -> the SQLite value of a field column; for
    ndarrays a ("npy", dtype, shape, bytes) tuple to compare after np.load."""
    if isinstance(v, bool):
        return int(v)
    if v is None or isinstance(v, int):
        return v
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, str):
        f = special_float(v)
        if f is not None:
            return None if math.isnan(f) else f
        return v
    if isinstance(v, dict):
        if "$int" in v:
            n = int(v["$int"])
            return n if -2**63 <= n < 2**63 else str(n)
        if "$bytes_b64" in v:
            return base64.b64decode(v["$bytes_b64"])
        if "$npscalar" in v:
            return column_value(v["$npscalar"]["value"])
        if "$ndarray" in v:
            a = v["$ndarray"]
            if "items" in a:
                return ("json", [to_json(x) for x in a["items"]])
            return ("npy", a["dtype"], a["shape"], base64.b64decode(a["data_b64"]), a.get("descr"))
    return ("json", to_json(v))


def same_column(got, want):
    if isinstance(want, tuple) and want[0] == "json":
        try:
            return isinstance(got, str) and json.loads(got) == want[1]
        except ValueError:
            return False
    if isinstance(want, tuple) and want[0] == "npy":
        if not isinstance(got, bytes):
            return False
        arr = numpy.load(io.BytesIO(got))
        if want[4] is not None:  # structured: compare layout and bytes
            return list(arr.shape) == want[2] and arr.tobytes() == want[3] and \
                arr.dtype.itemsize == int(want[1][2:])
        return arr.dtype.str == want[1] and list(arr.shape) == want[2] and \
            numpy.ascontiguousarray(arr).tobytes() == want[3]
    if isinstance(want, float) and isinstance(got, float):
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return type(got) == type(want) and got == want


def top_fields(s):
    """The str-keyed top-level fields of a sample (in file order)."""
    if isinstance(s, dict) and "$map" in s:
        return {k: v for k, v in s["$map"] if isinstance(k, str)}
    if isinstance(s, dict) and not any(k in s for k in ("$ndarray", "$npscalar", "$complex", "$int", "$bytes_b64")):
        return s
    return {}
