"""check_pickles.py - the CPython half of test_pickle_write.c: reads the
cases file the C test wrote and prints "OK <name>" or "BAD <name>: ..." per
line.
  V <name> <hex> <python literal>  pickle.loads(hex) must equal the literal
                                   (same types; arrays: dtype, shape, bytes)
  B <name> <orig hex> <ours hex>   pickle.loads(ours) must equal upstream's
                                   block as our decoder maps it: tuples and
                                   sets as lists, bytearray as bytes, numpy
                                   scalars as Python numbers, big-endian and
                                   Fortran arrays as native C-order arrays.
Usage: check_pickles.py CASES_FILE"""
import datetime
import math
import pickle
import sys

import numpy as np


def same(got, want):
    """Strict equality of what CPython loaded with what we expect."""
    if isinstance(want, np.ndarray):
        if not isinstance(got, np.ndarray) or got.shape != want.shape:
            return False
        if want.dtype.hasobject:
            return False
        native = want.dtype.newbyteorder("=") if want.dtype.byteorder == ">" else want.dtype
        return got.dtype == native and \
            np.ascontiguousarray(want.astype(native)).tobytes() == np.ascontiguousarray(got).tobytes()
    if isinstance(want, float):
        return isinstance(got, float) and (got == want and math.copysign(1, got) == math.copysign(1, want)
                                           or math.isnan(got) and math.isnan(want))
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and \
            all(same(got[k], want[k]) for k in want)
    return type(got) is type(want) and got == want


def ours(x):
    """An upstream value as our decoder and encoder carry it."""
    if isinstance(x, np.ndarray):
        if x.dtype.hasobject:
            return [ours(y) for y in x.ravel()]
        return x
    if isinstance(x, np.generic):
        if isinstance(x, np.datetime64):
            return None if np.isnat(x) else str(x)
        return x.item()
    if isinstance(x, (list, tuple)):
        return [ours(y) for y in x]
    if isinstance(x, (set, frozenset)):
        return ("set", [ours(y) for y in x])
    if isinstance(x, dict):
        return {ours(k) if not isinstance(k, tuple) else k: ours(v) for k, v in x.items()}
    if isinstance(x, bytearray):
        return bytes(x)
    if isinstance(x, (datetime.datetime, datetime.date, datetime.time)):
        return x.isoformat()
    if isinstance(x, datetime.timedelta):
        return x.total_seconds()
    return x


def same_block(got, want):
    """same(), but a set may come back as a list in any order."""
    if isinstance(want, tuple) and want and want[0] == "set":
        return isinstance(got, list) and sorted(map(repr, got)) == sorted(repr(w) for w in want[1]) \
            if all(not isinstance(w, (list, dict, np.ndarray)) for w in want[1]) else len(got) == len(want[1])
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(map(same_block, got, want))
    if isinstance(want, dict):
        return isinstance(got, dict) and list(got) == list(want) and \
            all(same_block(got[k], want[k]) for k in want)
    return same(got, want)


def main():
    bad = 0
    with open(sys.argv[1]) as f:
        for line in f:
            kind, name, a, rest = line.rstrip("\n").split(" ", 3)
            try:
                if kind == "V":
                    got = pickle.loads(bytes.fromhex(a))
                    want = eval(rest, {"np": np})  # noqa: S307 - literals written by the test
                    ok = same(got, want)
                else:
                    want = ours(pickle.loads(bytes.fromhex(a)))
                    got = pickle.loads(bytes.fromhex(rest))
                    ok = same_block(got, want)
                detail = "" if ok else "got %r, want %r" % (got, want)
            except Exception as e:  # noqa: BLE001 - any failure is reported
                ok, detail = False, "%s: %s" % (type(e).__name__, e)
            print("OK " + name if ok else "BAD %s: %s" % (name, detail[:600]))
            bad += not ok
    sys.exit(1 if bad else 0)


main()
