"""bz_expected.py - the bcolz fixtures' typed JSON cells (expected/*.json,
written from upstream's bcolz) turned into the SQLite values our CREATE
form gives (sql_value, compared by same). Shared by test_bcolz_fixtures.py
and test_write_atlas_bcolz.py."""
import base64
import io
import json
import math

import numpy

SPECIAL = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def sql_value(cell, dtype, cell_shape):
    """Upstream's typed JSON cell -> the SQLite value our column gives."""
    if isinstance(cell, dict):
        if "$bigint" in cell:
            return str(int(cell["$bigint"]))
        if "$bytes_hex" in cell:
            b = bytes.fromhex(cell["$bytes_hex"])
            if dtype == "|O":  # a pickled Python bytes object: a BLOB
                return b
            try:
                return b.decode("utf-8")
            except UnicodeDecodeError:
                return b
        if "$datetime64" in cell:
            d = cell["$datetime64"]
            return None if d["iso"] == "NaT" else d["iso"]
        if "$timedelta64" in cell:
            d = cell["$timedelta64"]
            return None if d["nat"] else d["value"]
        if "$ndarray" in cell:
            a = cell["$ndarray"]
            return ("npy", a["shape"], base64.b64decode(a["data_b64"]))
        return ("json", untuple(cell))
    if isinstance(cell, bool):
        return int(cell)
    if isinstance(cell, str) and dtype[1] in "fc" and cell in SPECIAL:
        f = SPECIAL[cell]
        return None if math.isnan(f) else f
    if isinstance(cell, (list,)) or cell is None and dtype == "|O":
        return ("json", untuple(cell))
    return cell


def untuple(v):
    """Tuples ({"$tuple": [...]}) are JSON arrays in our values."""
    if isinstance(v, dict):
        if "$tuple" in v:
            return [untuple(x) for x in v["$tuple"]]
        return {k: untuple(x) for k, x in v.items()}
    if isinstance(v, list):
        return [untuple(x) for x in v]
    return v


def big(v):
    """{"$bigint": "..."} -> its decimal text (our TEXT for big integers)."""
    return str(int(v["$bigint"])) if isinstance(v, dict) and "$bigint" in v else v


def same(got, want):
    if isinstance(want, tuple) and want[0] == "npy":
        if not isinstance(got, bytes):
            return False
        a = numpy.load(io.BytesIO(got))
        return list(a.shape) == want[1] and numpy.ascontiguousarray(a).tobytes() == want[2]
    if isinstance(want, tuple) and want[0] == "json":
        try:
            return json.loads(got) == want[1] if isinstance(got, str) else got == want[1]
        except ValueError:
            return False
    if isinstance(want, float) and isinstance(got, float):
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return got == want and type(got) == type(want)
