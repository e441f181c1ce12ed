#!/usr/bin/python3
"""test_npy_numpy.py - the npy_* SQL functions and the .npy writer against
numpy itself.

    /usr/bin/python3 tests/conformance/test_npy_numpy.py <build dir>

Part 1 saves arrays with np.save (many dtypes, byte orders, C/F order, 0-d,
empty, text, datetimes) and compares npy_shape/npy_dtype/npy_size/npy_json/
npy_get/npy_sum/min/max/mean with numpy's own answers.
Part 2 runs <build>/tools/npy_write_samples into a temporary directory and
checks that numpy.load reads every file our writer produced.

Prints one line per assertion, "PASS name" or "FAIL name: detail", and exits
non-zero when anything failed. Needs the system python3 (Debian's
python3-numpy) because it loads <build>/datasets.so.
"""
import base64
import io
import json
import math
import os
import sqlite3
import subprocess
import sys
import tempfile

import numpy as np

FAILURES = 0
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def check(name, ok, detail=""):
    """Print one assertion line and count failures."""
    global FAILURES
    if ok:
        print(f"PASS {name}")
    else:
        FAILURES += 1
        print(f"FAIL {name}: {detail}")


def npy_bytes(a):
    """The .npy file np.save writes for a."""
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def query(conn, sql, *args):
    """First column of the single row, or ('error', message)."""
    try:
        return conn.execute(sql, args).fetchone()[0]
    except sqlite3.Error as e:
        return ("error", str(e))


# ---------------------------------------------------------------- expected


def json_scalar(x, dtype):
    """What npy_json should print for one element x of tolist()."""
    k = dtype.kind
    if k == "f":
        return float(x) if math.isfinite(x) else None
    if k == "c":
        return [v if math.isfinite(v) else None for v in (x.real, x.imag)]
    if k == "S":  # bytes: base64 inside JSON (docs/INTERFACE.md, Values)
        return base64.b64encode(x).decode()
    if k == "V":
        return base64.b64encode(bytes(x)).decode()
    return x


def expected_json(a):
    """numpy's tolist(), mapped the way docs/INTERFACE.md says."""
    if a.dtype.kind == "M":
        # datetime_as_string misreads byte-swapped arrays: go native first
        text = np.datetime_as_string(a.astype(a.dtype.newbyteorder("=")))
        nat = np.isnat(a)
        flat = [None if n else str(t) for t, n in zip(text.ravel(), nat.ravel())]
        return np.array(flat, dtype=object).reshape(a.shape).tolist()
    if a.dtype.kind == "m":
        ticks = a.view("<i8") if a.dtype.byteorder != ">" else a.astype(a.dtype.newbyteorder("<")).view("<i8")
        flat = [None if t == INT64_MIN else int(t) for t in ticks.ravel()]
        return np.array(flat, dtype=object).reshape(a.shape).tolist()

    def walk(x, depth):
        if depth == a.ndim:
            return json_scalar(x, a.dtype)
        return [walk(y, depth + 1) for y in x]

    return walk(a.tolist(), 0)


def same(x, y):
    """Deep equality that also tells bool from int and int from float."""
    if type(x) is not type(y):
        return False
    if isinstance(x, list):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    return x == y


def expected_get(a, idx):
    """What npy_get should return for a[idx]."""
    x = a[idx]
    k = a.dtype.kind
    if k == "b":
        return int(bool(x))
    if k in "iu":
        v = int(x)
        return v if INT64_MIN <= v <= INT64_MAX else str(v)
    if k == "f":
        return None if math.isnan(x) else float(x)
    if k == "c":
        return json.dumps(json_scalar(complex(x), a.dtype), separators=(",", ":"))
    if k == "U":
        return str(x)
    if k == "S":
        return bytes(x)
    if k == "V":
        return bytes(x)
    if k == "M":
        return None if np.isnat(x) else str(np.datetime_as_string(x))
    if k == "m":
        return None if np.isnat(x) else int(x.astype("<i8"))
    raise AssertionError(k)


def expected_reduce(a, op):
    """numpy's answer for npy_<op>, as SQLite returns it; ('error', prefix)
    when our function must fail."""
    k = a.dtype.kind
    if k in "bium":
        vals = [int(v) for v in (a.astype("<i8") if k == "m" else a).ravel().tolist()]
        if k == "m" and any(v == INT64_MIN for v in vals):
            return 0 if (op == "sum" and not vals) else None
        if op == "sum":
            s = sum(vals)
            if k == "u" and a.dtype.itemsize == 8:
                return ("error", "npy_sum: integer overflow") if s >= 2**64 else (s if s <= INT64_MAX else str(s))
            if not INT64_MIN <= s <= INT64_MAX:
                return ("error", "npy_sum: integer overflow")
            return s
        if not vals:
            return None
        if op == "mean":
            return ("approx", math.fsum(vals) / len(vals))
        v = min(vals) if op == "min" else max(vals)
        return v if v <= INT64_MAX else str(v)
    if k == "f":
        vals = [float(v) for v in a.ravel().tolist()]
        if op == "sum" and not vals:
            return 0.0
        if not vals or any(math.isnan(v) for v in vals):
            return None
        if op == "sum":
            if any(math.isinf(v) for v in vals):
                s = sum(vals)
                return None if math.isnan(s) else s
            return ("approx", math.fsum(vals))
        if op == "mean":
            if any(math.isinf(v) for v in vals):
                s = sum(vals)
                return None if math.isnan(s) else s
            return ("approx", math.fsum(vals) / len(vals))
        return min(vals) if op == "min" else max(vals)
    if k == "M" and op in ("min", "max"):
        if a.size == 0 or np.isnat(a).any():
            return None
        return str(np.datetime_as_string(a.min() if op == "min" else a.max()))
    return ("error", f"npy_{op}: dtype ")


def matches(got, want):
    """Compare one SQL answer with expected_* output."""
    if isinstance(want, tuple) and want[0] == "approx":
        return isinstance(got, float) and math.isclose(got, want[1], rel_tol=1e-12, abs_tol=1e-300)
    if isinstance(want, tuple) and want[0] == "error":
        return isinstance(got, tuple) and got[0] == "error" and got[1].startswith(want[1])
    if isinstance(want, float) and isinstance(got, float):
        return got == want or (math.isinf(got) and got == want)
    return type(got) is type(want) and got == want


# ---------------------------------------------------------------- arrays


def sample_arrays():
    """(name, array) pairs covering the dtypes and layouts numpy writes."""
    rng = np.random.default_rng(1234)
    out = [
        ("f4_2x3", (rng.standard_normal((2, 3)) * 10).astype("<f4")),
        ("f8_special", np.array([1.5, np.nan, np.inf, -np.inf, -0.0, 1e-310, 1e300])),
        ("f8_finite", np.array([0.1, 0.2, 0.3, 1e16, 1.0, -1e16])),
        ("f8_inf", np.array([1.0, np.inf, 2.0])),
        ("f2", np.array([1.0, -2.5, 65504.0, 6e-8, 0.333, -0.0], dtype="<f2")),
        ("f8_be", np.array([[1.25, -3.5], [1e100, 2.0**-1074]], dtype=">f8")),
        ("f4_be", np.array([0.1, 3.0], dtype=">f4")),
        ("i1", np.array([-128, 127, 0, -1], dtype="i1")),
        ("i2_3d", np.arange(-12, 12, dtype="<i2").reshape(2, 3, 4)),
        ("i4_be", np.array([[1, -2], [300000, -400000]], dtype=">i4")),
        ("i8_extremes", np.array([INT64_MIN, INT64_MAX], dtype="<i8")),
        ("i8_small", np.array([5, -7, 11, 0], dtype="<i8")),
        ("u1", np.arange(250, 256, dtype="u1")),
        ("u2_be", np.array([1, 258, 65535], dtype=">u2")),
        ("u4", np.array([0, 4294967295], dtype="<u4")),
        ("u8_big", np.array([2**64 - 1, 1], dtype="<u8")),
        ("u8_mid", np.array([2**63, 1], dtype="<u8")),
        ("u8_small", np.array([3, 9], dtype=">u8")),
        ("bool", np.array([[True, False], [True, True]])),
        ("c8", np.array([1 + 2j, -0.5 - 1j], dtype="<c8")),
        ("c16_be", np.array([complex(1.5, float("nan")), 3j], dtype=">c16")),
        ("f8_fortran_3d", np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4))),
        ("i4_fortran", np.asfortranarray(np.arange(12, dtype="<i4").reshape(3, 4))),
        ("u1_fortran_be_noop", np.asfortranarray(np.arange(6, dtype=">u1").reshape(2, 3))),
        ("i4_fortran_be", np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3))),
        ("scalar_f8", np.array(2.75)),
        ("scalar_i4", np.array(-9, dtype="<i4")),
        ("scalar_U", np.array("héllo")),
        ("empty_1d", np.zeros(0, dtype="<f8")),
        ("empty_2x0", np.zeros((2, 0), dtype="<i4")),
        ("empty_0x3", np.zeros((0, 3), dtype="<u2")),
        ("U5", np.array(["ab", "héllo", "😀x", "", "a\x00b"], dtype="<U5")),
        ("U3_be", np.array(["xyz", "é"], dtype=">U3")),
        ("S5", np.array([b"ab", b"\xff\xfe", b"a\x00b", b"h\xc3\xa9", b""], dtype="S5")),
        ("V3", np.array([b"\x01\x02\x03", b"\x00\x00\x05"], dtype="V3")),
        ("M8_D", np.array(["2021-03-04", "NaT", "1969-12-31", "-0200-01-01", "12000-05-06"], dtype="M8[D]")),
        ("M8_D_nonat", np.array(["2021-03-04", "1969-12-31", "1600-02-29"], dtype="M8[D]")),
        ("M8_s", np.array(["2021-03-04T05:06:07", "1960-01-01T00:00:01"], dtype="M8[s]")),
        ("M8_ms", np.array(["2021-03-04T05:06:07.123", "1969-12-31T23:59:59.999"], dtype="M8[ms]")),
        ("M8_us_be", np.array(["2021-03-04T05:06:07.123456"], dtype=">M8[us]")),
        ("M8_ns", np.array(["2021-03-04T05:06:07.123456789", "NaT"], dtype="M8[ns]")),
        ("M8_Y", np.array(["2021", "1492"], dtype="M8[Y]")),
        ("M8_M", np.array(["2021-03", "1969-01"], dtype="M8[M]")),
        ("M8_W", np.array(["2021-03-04", "1969-12-20"], dtype="M8[W]")),
        ("M8_h", np.array(["2021-03-04T05", "1969-12-31T23"], dtype="M8[h]")),
        ("M8_m", np.array(["2021-03-04T05:06"], dtype="M8[m]")),
        ("M8_10s", np.array([0, 7, -3], dtype="M8[10s]")),
        ("M8_ps", np.array([123456789, -1], dtype="M8[ps]")),
        ("m8_ns", np.array([5, -3, 1000], dtype="m8[ns]")),
        ("m8_s_nat", np.array([5, "NaT"], dtype="m8[s]")),
        ("big_f4", rng.standard_normal((300, 50)).astype("<f4")),
        ("big_i2", rng.integers(-30000, 30000, size=(64, 64)).astype("<i2")),
    ]
    return out


# ---------------------------------------------------------------- part 1


def check_array(conn, name, a):
    """Every SQL function on one np.save blob."""
    b = npy_bytes(a)
    got = query(conn, "SELECT npy_shape(?)", b)
    check(f"{name} npy_shape", isinstance(got, str) and json.loads(got) == list(a.shape), f"{got!r} vs {a.shape}")
    got = query(conn, "SELECT npy_dtype(?)", b)
    check(f"{name} npy_dtype", got == a.dtype.str, f"{got!r} vs {a.dtype.str!r}")
    got = query(conn, "SELECT npy_size(?)", b)
    check(f"{name} npy_size", got == a.size, f"{got!r} vs {a.size}")
    got = query(conn, "SELECT npy_json(?)", b)
    want = expected_json(a)
    ok = isinstance(got, str) and same(json.loads(got), want)
    check(f"{name} npy_json", ok, f"{got!r:.300} vs {want!r:.300}")
    if a.size:
        flat = [0, a.size - 1, a.size // 2]
        for f in flat:
            idx = np.unravel_index(f, a.shape) if a.ndim else ()
            sql = "SELECT npy_get(?" + "".join(", ?" for _ in idx) + ")"
            got = query(conn, sql, b, *[int(i) for i in idx])
            want = expected_get(a, tuple(idx))
            check(f"{name} npy_get{tuple(int(i) for i in idx)}", matches(got, want), f"{got!r} vs {want!r}")
    for op in ("sum", "min", "max", "mean"):
        got = query(conn, f"SELECT npy_{op}(?)", b)
        want = expected_reduce(a, op)
        check(f"{name} npy_{op}", matches(got, want), f"{got!r} vs {want!r}")


def check_structured(conn):
    """Structured arrays: dtype is the descr list; data is refused clearly."""
    a = np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8", (2,))])
    b = npy_bytes(a)
    got = query(conn, "SELECT npy_dtype(?)", b)
    check("structured npy_dtype", got == repr(a.dtype.descr), f"{got!r}")
    got = query(conn, "SELECT npy_size(?)", b)
    check("structured npy_size", got == 1, f"{got!r}")
    def plain(x):  # tolist() of a structured array: tuples (and subarrays) as lists
        if isinstance(x, np.ndarray):
            x = x.tolist()
        return [plain(y) for y in x] if isinstance(x, (list, tuple)) else x
    cases = [
        a,
        np.array([[(1, (2.0, 3.0), b"x"), (-4, (5.5, -0.0), b"yz")]],
                 dtype=[("i", ">i2"), ("p", [("x", "<f4"), ("y", "<f8")]), ("s", "S2")]),
        np.zeros(3, dtype=[("u", "|u1", (2, 2)), ("c", "<c8"), ("t", "<m8[s]")]),
    ]
    for k, arr in enumerate(cases):
        got = query(conn, "SELECT npy_json(?)", npy_bytes(arr))
        want = plain(arr.tolist())
        want = json.loads(json.dumps(want, default=lambda o: [o.real, o.imag] if isinstance(o, complex)
                                     else base64.b64encode(o).decode() if isinstance(o, bytes)
                                     else int(o.total_seconds())))
        check(f"structured npy_json {k} equals tolist()", isinstance(got, str) and json.loads(got) == want,
              f"{got!r} vs {want!r}")


def check_errors(conn):
    """Garbage, truncated and non-BLOB arguments fail with the function name."""
    good = npy_bytes(np.arange(10, dtype="<f8"))
    cases = {
        "garbage": (b"not an npy file at all", "not a .npy file (bad magic)"),
        "truncated data": (good[:-1], "truncated .npy: the data needs 80 bytes"),
        "truncated header": (good[:100], "truncated .npy: the header needs 128 bytes, the blob has 100"),
        "bad version": (good[:6] + b"\x09" + good[7:], "unsupported .npy format version 9.0"),
    }
    for fn in ("shape", "dtype", "size", "json", "get", "sum", "min", "max", "mean"):
        extra = ", 0" if fn == "get" else ""
        for what, (blob, msg) in cases.items():
            got = query(conn, f"SELECT npy_{fn}(?{extra})", blob)
            want = f"npy_{fn}: {msg}"
            check(f"npy_{fn} {what}", isinstance(got, tuple) and got[1].startswith(want), f"{got!r} vs {want!r}")
        got = query(conn, f"SELECT npy_{fn}(NULL{extra})")
        check(f"npy_{fn} NULL", got is None, f"{got!r}")
    got = query(conn, "SELECT npy_get(?, -1)", good)
    check("npy_get negative index", got == ("error", "npy_get: index 1 is negative (-1); negative indices are not allowed"), f"{got!r}")
    got = query(conn, "SELECT npy_get(?, 10)", good)
    check("npy_get out of range", got == ("error", "npy_get: index 10 is out of bounds for axis 0 with size 10"), f"{got!r}")
    big = npy_bytes(np.array([INT64_MAX, 1], dtype="<i8"))
    got = query(conn, "SELECT npy_sum(?)", big)
    check("npy_sum overflow", got == ("error", "npy_sum: integer overflow"), f"{got!r}")


def check_subtype(conn):
    """JSON results carry SQLite's JSON subtype."""
    b = npy_bytes(np.arange(6, dtype="<i4").reshape(2, 3))
    got = query(conn, "SELECT json_array(npy_shape(?1), npy_json(?1))", b)
    check("json subtype", got == "[[2,3],[[0,1,2],[3,4,5]]]", f"{got!r}")
    got = query(conn, "SELECT npy_json(?1) -> '$[1][2]'", b)
    check("json arrow", got == "5", f"{got!r}")


# ---------------------------------------------------------------- part 2


def writer_samples():
    """The arrays tests/tools/npy_write_samples.c writes, by file name."""
    descr = [(f"f{i}", "|u1") for i in range(5000)]
    long_rec = np.zeros(1, dtype=descr)
    for i in range(5000):
        long_rec[f"f{i}"] = i % 251
    return {
        "f4_2x3": np.arange(6, dtype="<f4").reshape(2, 3) * np.float32(1.5),
        "i8_be": np.array([-1, 0, 1, INT64_MAX, INT64_MIN], dtype=">i8"),
        "u1_fortran": np.asfortranarray(np.arange(6, dtype="|u1").reshape(2, 3)),
        "f8_scalar": np.array(3.25),
        "i4_empty": np.zeros((0, 3), dtype="<i4"),
        "u3_text": np.array(["ab", "xyz", "é"], dtype="<U3"),
        "s4_bytes": np.array([b"ab", b"\xff\x00\x01"], dtype="S4"),
        "b1_bool": np.array([True, False, True]),
        "dt_seconds": np.array([0, 1614834367, "NaT"], dtype="M8[s]"),
        "c16_be": np.array([1.5 - 2j], dtype=">c16"),
        "f2_half": np.array([1.0, -2.5, 65504.0], dtype="<f2"),
        "struct_rec": np.array([(1, 2.5)], dtype=[("a", "<i4"), ("b", "<f8")]),
        "f8_3d_fortran": np.asfortranarray(np.arange(24, dtype="<f8").reshape(2, 3, 4)),
        "v2_long": long_rec,
    }


def check_writer(conn, build):
    """numpy.load reads every file our header writer produced."""
    tool = os.path.join(build, "tools", "npy_write_samples")
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([tool, d], capture_output=True, text=True)
        check("writer tool runs", r.returncode == 0, r.stderr.strip())
        byte_exact = hasattr(np.lib.format, "GROWTH_AXIS_MAX_DIGITS")
        for name, want in writer_samples().items():
            path = os.path.join(d, name + ".npy")
            try:
                got = np.load(path, max_header_size=10**6)
            except Exception as e:  # noqa: BLE001 - report any load failure
                check(f"writer {name} loads", False, repr(e))
                continue
            check(f"writer {name} loads", True)
            check(f"writer {name} dtype", got.dtype == want.dtype and got.dtype.str == want.dtype.str,
                  f"{got.dtype.str} vs {want.dtype.str}")
            check(f"writer {name} shape", got.shape == want.shape, f"{got.shape} vs {want.shape}")
            if want.dtype.kind == "M":
                equal = np.array_equal(got, want, equal_nan=False) or (
                    np.array_equal(np.isnat(got), np.isnat(want)) and
                    np.array_equal(got[~np.isnat(got)], want[~np.isnat(want)]))
            else:
                equal = got.tobytes() == want.tobytes() if want.dtype.names else np.array_equal(got, want)
            check(f"writer {name} values", equal, f"{got!r:.200} vs {want!r:.200}")
            if want.ndim > 1:
                check(f"writer {name} order", got.flags.f_contiguous == want.flags.f_contiguous
                      and got.flags.c_contiguous == want.flags.c_contiguous)
            with open(path, "rb") as f:
                data = f.read()
            hl = data[8] | data[9] << 8 if data[6] == 1 else int.from_bytes(data[8:12], "little")
            start = 10 if data[6] == 1 else 12
            check(f"writer {name} aligned", (start + hl) % 64 == 0 and data[start + hl - 1:start + hl] == b"\n")
            if byte_exact and name != "v2_long":
                check(f"writer {name} same bytes as np.save", data == npy_bytes(want))
            if name == "v2_long":
                check("writer v2_long is format 2.0", data[6:8] == b"\x02\x00", repr(data[6:8]))
            elif not want.dtype.names:
                got_json = query(conn, "SELECT npy_json(?)", data)
                check(f"writer {name} npy_json", isinstance(got_json, str) and same(json.loads(got_json), expected_json(want)),
                      f"{got_json!r:.200}")


def main():
    if len(sys.argv) != 2:
        print("usage: test_npy_numpy.py <build dir>", file=sys.stderr)
        return 2
    build = sys.argv[1]
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(build, "datasets"))
    for name, a in sample_arrays():
        check_array(conn, name, a)
    check_structured(conn)
    check_errors(conn)
    check_subtype(conn)
    check_writer(conn, build)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
