"""at_expected.py - the atlas fixtures' typed JSON (expected/*.json, written
from upstream's reader) turned into what our `example` JSON holds (to_json,
normalize, compared by same), and the globals our decoder refuses
(refused_global). Shared by test_atlas_fixtures.py and
test_write_atlas_bcolz.py."""
import base64
import datetime
import json
import math
import re

import numpy


class Refused(Exception):
    """A value our decoder refuses on purpose: carries the global name."""


def nonfinite(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x


def special(v):
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.get(v)


def plain(x):
    """numpy tolist() output -> our JSON conventions."""
    if isinstance(x, numpy.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [plain(y) for y in x]
    if isinstance(x, complex):
        return [nonfinite(x.real), nonfinite(x.imag)]
    if isinstance(x, bytes):  # numpy S: bytes, base64 inside JSON
        return base64.b64encode(x.rstrip(b"\0")).decode()
    if isinstance(x, datetime.datetime):
        return x.isoformat()
    if isinstance(x, float):
        return nonfinite(x)
    return x


def repr_to_iso(obj, r):
    """datetime.datetime(2024, 2, 29, ...) -> isoformat() text."""
    args = [int(a) for a in re.findall(r"-?\d+", r)]
    cls = {"datetime.datetime": datetime.datetime, "datetime.date": datetime.date,
           "datetime.time": datetime.time}.get(obj)
    if cls is None:
        raise Refused(obj)
    return cls(*args).isoformat()


def to_json(v):
    """Upstream's typed JSON -> what our `example` JSON should parse to."""
    if isinstance(v, dict):
        if "$bigint" in v:
            return int(v["$bigint"])
        if "$bytes_hex" in v or "$bytearray_hex" in v:
            return base64.b64encode(bytes.fromhex(v.get("$bytes_hex", v.get("$bytearray_hex")))).decode()
        if "$tuple" in v:
            return [to_json(x) for x in v["$tuple"]]
        if "$set" in v or "$frozenset" in v:
            return ("set", sorted(json.dumps(to_json(x)) for x in v.get("$set", v.get("$frozenset"))))
        if "$dict" in v:
            return {k if isinstance(k, str) else json.dumps(to_json(k), separators=(",", ":")): to_json(x)
                    for k, x in v["$dict"]}
        if "$dict_subclass" in v:
            return to_json(v["items"])
        if "$complex" in v:
            return [nonfinite(to_float(x)) for x in v["$complex"]]
        if "$npscalar" in v:
            return to_json(v["$npscalar"]["value"])
        if "$ndarray" in v:
            a = v["$ndarray"]
            if "items" in a:
                return numpy.array([to_json(x) for x in a["items"]] + [None], dtype=object)[:-1] \
                    .reshape(a["shape"]).tolist()
            dt = numpy.dtype([(f[0], f[1]) for f in a["fields"]]) if "fields" in a else numpy.dtype(a["dtype"])
            arr = numpy.frombuffer(base64.b64decode(a["data_b64"]), dtype=dt).reshape(a["shape"])
            return plain(arr.tolist())
        if "$object" in v:
            return repr_to_iso(v["$object"], v.get("repr", ""))
        if "$unrepresentable" in v:
            raise Refused("cycle")
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_json(x) for x in v]
    if isinstance(v, str) and special(v) is not None:
        return None
    if isinstance(v, float):
        return nonfinite(v)
    return v


def to_float(x):
    f = special(x) if isinstance(x, str) else None
    return f if f is not None else float(x)


def normalize(x):
    """Sets compare unordered: our JSON arrays for sets are sorted here."""
    if isinstance(x, tuple) and x and x[0] == "set":
        return x
    if isinstance(x, list):
        return [normalize(y) for y in x]
    if isinstance(x, dict):
        return {k: normalize(y) for k, y in x.items()}
    return x


def same(got, want):
    if isinstance(want, tuple) and want[0] == "set":
        return isinstance(got, list) and sorted(json.dumps(g) for g in got) == want[1]
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and all(same(got[k], want[k]) for k in want)
    if isinstance(want, float) and isinstance(got, (int, float)):
        return float(got) == want
    return got == want and type(got) == type(want) or (isinstance(want, bool) is False and got == want and
                                                     not isinstance(got, bool))


def refused_global(v):
    """The global name an expected value holds that we must refuse, or None."""
    if isinstance(v, dict):
        if "$object" in v and v["$object"] not in ("datetime.datetime", "datetime.date", "datetime.time"):
            return v["$object"]
        if "$unrepresentable" in v:
            return "cycle"
        return next((g for g in map(refused_global, v.values()) if g), None)
    if isinstance(v, list):
        return next((g for g in map(refused_global, v) if g), None)
    return None
