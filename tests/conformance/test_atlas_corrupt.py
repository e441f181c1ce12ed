"""test_atlas_corrupt.py - corrupt, misused and hostile atlas inputs fail cleanly.

Every dataset here lives in a temporary folder: copies of the upstream
fixtures (tests/fixtures/upstream/atlas) damaged with Python, or small
strategy-0 datasets written by the helpers below (meta.json, index.npy with
numpy, data.bin = pickled lists of examples). Each damaged case must give an
sqlite3.Error whose message starts with "atlas: " and names the file or
shard directory, the block and, for a problem inside one example, the
example's global index -- in the table-valued form and the CREATE VIRTUAL
TABLE form -- never a crash or a wrong row. With one bad block, count(*)
and the rowid/shard/shard_index columns still work (they decode nothing),
every row of the other blocks reads exactly as expected/<case>.json says,
and a full scan fails instead of skipping the block.

Hostile pickles (posix.system, os.system, builtins.eval/exec/__import__/
getattr chains, subprocess.call, NEWOBJ of subprocess.Popen, a global whose
strings come from the memo, INST/OBJ/PERSID/EXT opcodes) are first run
through Python's own pickle.loads in a child process with a control marker
file, which proves each of them really executes code when unpickled; then
the same pickles (with another marker) are queried through SQL: each fails
with an error naming the global and the example (or the opcode), or gives
{"$unsupported": "module.name"} with unsupported=placeholder, and no marker
file ever appears. Resource attacks (100,000-deep nesting, LONG4 / BINUNICODE8
/ BINBYTES8 lengths near 2^31..2^64, memo indices out of range, self-
referencing containers, a shared-reference bomb) are clean errors, checked
for time and peak memory in a child process. A dataset of more than
2^63-1 examples must be refused rather than shown with wrapped rowids.
Usage: test_atlas_corrupt.py BUILD_DIR"""
import base64
import json
import os
import pickle
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time

import numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

D = os.path.join(FIXTURES, "atlas")


def hostile_child(build, paths):
    """Run `SELECT example` over each dataset in this (child) process and
    print the results, the time of each, and the peak memory as JSON."""
    import resource
    c = connect(build)
    c.execute("SELECT count(*), max(length(example)) FROM atlas(?)", (os.path.join(D, "none"),)).fetchall()
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = []
    for p in paths:
        t0 = time.process_time()  # CPU time: a loaded machine does not inflate it
        try:
            r = c.execute("SELECT rowid, example FROM atlas(?)", (p,)).fetchall()
            out.append({"path": p, "rows": r})
        except sqlite3.Error as e:
            out.append({"path": p, "error": str(e)})
        out[-1]["seconds"] = time.process_time() - t0
    print(json.dumps({"results": out, "base_kb": base,
                      "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[2] == "--hostile-child":
    hostile_child(sys.argv[1], sys.argv[3:])
    sys.exit(0)


BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
conn = connect(BUILD)
TMP = tempfile.TemporaryDirectory(prefix="atlas-corrupt-")
T = TMP.name
_n = [0]


# ------------------------------------------------------------ files

def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def copy_case(case, name):
    """Copy fixture `case` to T/name, writable."""
    dst = os.path.join(T, name)
    shutil.copytree(os.path.join(D, case), dst, copy_function=shutil.copyfile)
    for dp, _, _ in os.walk(dst):
        os.chmod(dp, 0o755)
    return dst


def index_dtype(size):
    """The dtype the upstream writer picks for a data.bin of `size` bytes."""
    for lim, dt in ((255, "|u1"), (65535, "<u2"), (2 ** 32 - 1, "<u4")):
        if size <= lim:
            return dt
    return "<u8"


def save_index(shard, offsets, dtype=None):
    numpy.save(os.path.join(shard, "index.npy"),
               numpy.array(offsets, dtype=dtype or index_dtype(offsets[-1])))


def load_index(shard):
    return [int(x) for x in numpy.load(os.path.join(shard, "index.npy"))]


def read_blocks(shard):
    idx = load_index(shard)
    data = read(os.path.join(shard, "data.bin"))
    return [data[idx[i]:idx[i + 1]] for i in range(len(idx) - 1)]


def write_blocks(shard, blocks):
    """data.bin = the blocks, index.npy = their offsets."""
    offs = [0]
    for b in blocks:
        offs.append(offs[-1] + len(b))
    write(os.path.join(shard, "data.bin"), b"".join(blocks))
    save_index(shard, offs)


def replace_block(shard, b, data):
    blocks = read_blocks(shard)
    blocks[b] = data
    write_blocks(shard, blocks)


def edit_json(path, **changes):
    with open(path) as f:
        m = json.load(f)
    m.update(changes)
    write(path, json.dumps(m, indent=4).encode())


def shard_meta(n, block_size, strategy=0):
    return {"version": 1, "block_size": block_size, "stored_examples": n,
            "compression_strategy": strategy, "compression_level": 0,
            "compression_dict_size": 0.0}


def make_shard(d, blocks, n, block_size):
    """A strategy-0 shard directory d from raw block pickles."""
    os.makedirs(d, exist_ok=True)
    write(os.path.join(d, "meta.json"), json.dumps(shard_meta(n, block_size), indent=4).encode())
    write_blocks(d, blocks)
    return d


def make_root(d, shards):
    """A strategy-0 dataset root from [(blocks, n, block_size)] per shard."""
    os.makedirs(d, exist_ok=True)
    for k, (blocks, n, bs) in enumerate(shards):
        make_shard(os.path.join(d, str(k)), blocks, n, bs)
    write(os.path.join(d, "meta.json"), json.dumps(
        {"version": 1, "shard_sizes": [s[1] for s in shards], "compression_strategy": 0},
        indent=4).encode())
    return d


def zstd_raw_frame(data, dict_id=0):
    """One zstd frame holding `data` in raw (stored) blocks, with the
    content size and, when dict_id, a Dictionary_ID -- what libzstd
    decodes without needing a compressor here."""
    fhd = 0x80 | 0x20 | (3 if dict_id else 0)  # FCS 4 bytes, single segment
    out = b"\x28\xb5\x2f\xfd" + bytes([fhd])
    if dict_id:
        out += struct.pack("<I", dict_id)
    out += struct.pack("<I", len(data))
    chunks = [data[i:i + 131072] for i in range(0, len(data), 131072)] or [b""]
    for k, ch in enumerate(chunks):
        out += struct.pack("<I", len(ch) << 3 | (k == len(chunks) - 1))[:3] + ch
    return out


def dict_id_of(path):
    return struct.unpack("<I", read(path)[4:8])[0]


# -------------------------------------------------- expected values

_exp = {}


def expected(case):
    if case not in _exp:
        with open(os.path.join(D, "expected", case + ".json")) as f:
            _exp[case] = json.load(f)
    return _exp[case]


def to_json(v):
    """Typed expected JSON -> what our `example` JSON parses to."""
    if isinstance(v, dict):
        if "$bytes_hex" in v:
            return base64.b64encode(bytes.fromhex(v["$bytes_hex"])).decode()
        if "$tuple" in v:
            return [to_json(x) for x in v["$tuple"]]
        if any(k.startswith("$") for k in v):
            raise ValueError("typed value not handled here: %r" % (v,))
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_json(x) for x in v]
    return v


def to_py(v):
    """Typed expected JSON -> the Python value upstream pickled."""
    if isinstance(v, dict):
        if "$bytes_hex" in v:
            return bytes.fromhex(v["$bytes_hex"])
        if "$tuple" in v:
            return tuple(to_py(x) for x in v["$tuple"])
        return {k: to_py(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_py(x) for x in v]
    return v


def exp_values(case):
    """{global index: example JSON value} of a fixture."""
    return {x["i"]: to_json(x["value"]) for x in expected(case)["examples"]}


def exp_block(case, shard, block):
    """The examples of one block, as upstream gave them back (Python values)."""
    return [to_py(x["value"]) for x in expected(case)["examples"]
            if x["shard"] == shard and x["block"] == block]


def exp_positions(case):
    """[(rowid, shard, shard_index)] of a fixture."""
    e = expected(case)
    first = [sum(e["shard_sizes_reader"][:k]) for k in range(len(e["shard_sizes_reader"]))]
    return [(x["i"], x["shard"], x["i"] - first[x["shard"]]) for x in e["examples"]]


def rows_of(case, shard, block):
    return [x["i"] for x in expected(case)["examples"] if x["shard"] == shard and x["block"] == block]


# ----------------------------------------------------------------- SQL

def rows(sql, *params):
    return conn.execute(sql, params).fetchall()


def tvf(path, opts=None):
    if opts is None:
        return "atlas(%s)" % sql_quote(path)
    return "atlas(%s, %s)" % (sql_quote(path), sql_quote(opts))


def create(path, *opts):
    """CREATE VIRTUAL TABLE over path; returns the table name."""
    _n[0] += 1
    name = "temp.c%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE %s USING atlas(%s)"
                 % (name, ", ".join([sql_quote(path)] + list(opts))))
    return name


def columns_of(table):
    return [r[0] for r in rows("SELECT name FROM pragma_table_xinfo(?) WHERE schema = 'temp' "
                                "AND hidden = 0", table.split(".")[1])]


def error_of(fn):
    """The sqlite3.Error text fn() raises, or None (and the result) if none."""
    try:
        return None, fn()
    except sqlite3.Error as e:
        return str(e), None


def expect_error(fn, label, *needles, prefix="atlas: "):
    """fn() must raise sqlite3.Error starting with prefix and containing
    every needle."""
    msg, got = error_of(fn)
    if msg is None:
        return C.check(False, label, "no error, got %r" % (str(got)[:300],))
    ok = msg.startswith(prefix)
    missing = [n for n in needles if n not in msg]
    return C.check(ok and not missing, label,
                   "error %r: %s" % (msg, "lacks %r" % missing if missing else
                                     "no %r prefix" % prefix))


def open_error_both(path, label, *needles):
    """An open-time error: in the table-valued form for any query (even
    count(*)), and in the CREATE form at CREATE time."""
    expect_error(lambda: rows("SELECT count(*) FROM %s" % tvf(path)), label + " (tvf count)",
                 *needles)
    expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 0" % tvf(path)),
                 label + " (tvf row 0)", *needles)
    expect_error(lambda: create(path), label + " (create)", *needles)


def examples_json(table, ids, col="example"):
    """{rowid: parsed JSON of col} for the given rowids (one query)."""
    if not ids:
        return {}
    got = rows("SELECT rowid, %s FROM %s WHERE rowid IN (%s)"
               % (col, table, ", ".join(str(i) for i in ids)))
    return {r: json.loads(x) for r, x in got}


def check_bad_block(path, case, bad, label, *needles, create_form=True):
    """Rows `bad` (one damaged block) fail with needles; everything else of
    fixture `case` reads as expected, in both forms."""
    want = exp_values(case)
    n = expected(case)["length"]
    good = [i for i in sorted(want) if i not in bad and i < n]
    forms = [("tvf", tvf(path))]
    if create_form and good:
        t = create(path)
        forms.append(("create", t))
        keys = []
        for i in good:
            keys += [k for k in want[i] if k not in keys]
        C.eq(columns_of(t), keys, "%s: CREATE infers the columns from the good blocks" % label)
    for form, t in forms:
        lab = "%s (%s)" % (label, form)
        C.eq(rows("SELECT count(*) FROM %s" % t), [(n,)], lab + ": count(*) still works")
        C.eq(rows("SELECT rowid, shard, shard_index FROM %s" % t),
             [p for p in exp_positions(case) if p[0] < n],
             lab + ": rowid, shard, shard_index of every row (nothing decoded)")
        for g in sorted({min(bad), max(bad)}):
            expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = ?" % t, g),
                         lab + ": row %d fails" % g, *needles)
        if form == "create":
            expect_error(lambda: rows("SELECT id FROM %s WHERE rowid = ?" % t, min(bad)),
                         lab + ": a data column of row %d fails" % min(bad), *needles)
        expect_error(lambda: rows("SELECT rowid, example FROM %s" % t),
                     lab + ": a full scan fails, never skips the block", *needles)
        got = examples_json(t, good)
        wrong = [i for i in good if got.get(i) != want[i]]
        C.check(not wrong and len(got) == len(good),
                lab + ": the %d rows of the other blocks read as upstream" % len(good),
                "wrong rows %r (first: got %r want %r)" % (
                    wrong[:10], got.get(wrong[0]) if wrong else None,
                    want[wrong[0]] if wrong else None))
        if form == "create" and good:
            ids = rows("SELECT rowid, id FROM %s WHERE rowid IN (%s)"
                       % (t, ", ".join(map(str, good))))
            C.eq(ids, [(i, want[i]["id"]) for i in good], lab + ": the id column of the good rows")


# ================================================ controls (intact copies)

for case in ("none", "standard", "shared_dict", "per_shard_dict", "single_shard"):
    p = copy_case(case, "ok-" + case)
    want = exp_values(case)
    got = examples_json(tvf(p), sorted(want))
    C.check(got == want and len(got) == expected(case)["length"],
            "control: intact copy of %s reads every example as upstream" % case,
            [i for i in want if got.get(i) != want[i]][:5])

# a zstd frame written here (raw blocks) decodes like the upstream block, so
# the damaged frames below differ only by what is damaged
p = copy_case("standard", "rawframe")
sh = os.path.join(p, "0")
replace_block(sh, 1, zstd_raw_frame(pickle.dumps(exp_block("standard", 0, 1), protocol=4)))
got = examples_json(tvf(p), rows_of("standard", 0, 1))
C.check(got == {i: exp_values("standard")[i] for i in rows_of("standard", 0, 1)},
        "control: a hand-made raw zstd frame of the re-pickled block 1 reads as upstream", got)
p = copy_case("per_shard_dict", "rawframe-dict")
sh = os.path.join(p, "0")
replace_block(sh, 2, zstd_raw_frame(pickle.dumps(exp_block("per_shard_dict", 0, 2), protocol=4),
                                    dict_id_of(os.path.join(sh, "zstd_dict.bin"))))
got = examples_json(tvf(p), rows_of("per_shard_dict", 0, 2))
C.check(got == {i: exp_values("per_shard_dict")[i] for i in rows_of("per_shard_dict", 0, 2)},
        "control: a raw frame naming the shard's dictionary ID reads as upstream", got)

# ==================================================== data.bin and index.npy

NONE0 = os.path.join(D, "none", "0")
NONE0_IDX = load_index(NONE0)  # [0, 422, 841, 1070]
C.eq(NONE0_IDX, [0, 422, 841, 1070], "none/0 fixture: index as documented")



def cut_short(path, label, bad, *needles):
    """A data.bin cut short (issue 11 item 10) opens: count(*) comes from
    meta.json, every example in an intact block reads as in the fixture,
    the ones in blocks past the cut fail naming the file and the offset."""
    intact = os.path.join(D, "none")
    for form, t in (("tvf", tvf(path)), ("create", create(path))):
        C.eq(rows("SELECT count(*) FROM %s" % t), [(58,)], "%s (%s): count(*)" % (label, form))
        good = [g for g in range(58) if g not in bad]
        got = [rows("SELECT example FROM %s WHERE rowid = ?" % t, g) for g in good]
        want = [rows("SELECT example FROM %s WHERE rowid = ?" % tvf(intact), g) for g in good]
        C.eq(got, want, "%s (%s): the %d examples in intact blocks read" % (label, form, len(good)))
        for g in (min(bad), max(bad)):
            expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = ?" % t, g),
                         "%s (%s): example %d fails" % (label, form, g), *needles)


p = copy_case("none", "trunc")
write(os.path.join(p, "0", "data.bin"), read(os.path.join(NONE0, "data.bin"))[:1000])
cut_short(p, "data.bin cut to 1000 bytes", range(16, 20), os.path.join(p, "0", "data.bin"),
          "block 2: 229 bytes at offset 841 run past the end of the file (1000 bytes)")
p = copy_case("none", "trunc0")
write(os.path.join(p, "1", "data.bin"), b"")
cut_short(p, "data.bin emptied", range(20, 40), os.path.join(p, "1", "data.bin"),
          "run past the end of the file (0 bytes)")
p = copy_case("none", "nodata")
os.unlink(os.path.join(p, "2", "data.bin"))
open_error_both(p, "data.bin missing", os.path.join(p, "2", "data.bin"), "missing",
                "18 examples")
p = copy_case("none", "extra")
write(os.path.join(p, "0", "data.bin"), read(os.path.join(NONE0, "data.bin")) + b"\0" * 5)
open_error_both(p, "5 bytes appended to data.bin", os.path.join(p, "0", "index.npy"),
                "is 1070", "has 1075 bytes")

# index past the end of an intact data.bin (upstream silently returns data)
p = copy_case("none", "past")
save_index(os.path.join(p, "0"), NONE0_IDX[:-1] + [1080], "<u2")
# (the same as a data.bin cut short: the blocks before read, the last fails)
cut_short(p, "last index entry 10 bytes past data.bin", range(16, 20),
          os.path.join(p, "0", "data.bin"), "block 2: 239 bytes at offset 841",
          "run past the end of the file (1070 bytes)")
p = copy_case("standard", "past-std")
idx = load_index(os.path.join(p, "3"))
save_index(os.path.join(p, "3"), idx[:-1] + [idx[-1] + 1], "|u1")
for form, t in (("tvf", tvf(p)), ("create", create(p))):
    C.eq(rows("SELECT count(*) FROM %s" % t), [(50,)],
         "standard/3: last index entry 1 byte past data.bin: count(*) (%s)" % form)
    C.eq(rows("SELECT example FROM %s WHERE rowid = 47" % t),
         rows("SELECT example FROM %s WHERE rowid = 47" % tvf(os.path.join(D, "standard"))),
         "standard/3: last index entry 1 byte past data.bin: shard 2 reads (%s)" % form)
    expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 49" % t),
                 "standard/3: last index entry 1 byte past data.bin: its last block fails (%s)"
                 % form, os.path.join(p, "3", "data.bin"),
                 "run past the end of the file (%d bytes)" % idx[-1])

# non-monotonic, not starting at 0, wrong length, wrong dtype, not an npy
p = copy_case("none", "nonmono")
save_index(os.path.join(p, "0"), [0, 900, 841, 1070], "<u2")
open_error_both(p, "non-monotonic index", os.path.join(p, "0", "index.npy"),
                "entry 2 is 841, less than entry 1 (900)")
p = copy_case("none", "first7")
save_index(os.path.join(p, "1"), [7] + load_index(os.path.join(D, "none", "1"))[1:], "<u2")
open_error_both(p, "index entry 0 is 7", os.path.join(p, "1", "index.npy"), "entry 0 is 7")
p = copy_case("none", "shortidx")
save_index(os.path.join(p, "0"), [0, 422, 1070], "<u2")
open_error_both(p, "index with 3 entries for 3 blocks", os.path.join(p, "0", "index.npy"),
                "3 entries", "20 examples in blocks of 8", "4 entries")
p = copy_case("none", "floatidx")
save_index(os.path.join(p, "0"), NONE0_IDX, "<f8")
open_error_both(p, "float index", os.path.join(p, "0", "index.npy"), "<f8", "unsigned")
p = copy_case("none", "signedidx")
save_index(os.path.join(p, "0"), NONE0_IDX, "<i8")
open_error_both(p, "signed index", os.path.join(p, "0", "index.npy"), "<i8", "unsigned")
p = copy_case("none", "2didx")
numpy.save(os.path.join(p, "0", "index.npy"), numpy.array([NONE0_IDX, NONE0_IDX], dtype="<u2"))
open_error_both(p, "2-D index", os.path.join(p, "0", "index.npy"), "2 dimension")
p = copy_case("none", "badnpy")
write(os.path.join(p, "0", "index.npy"), b"NUMPY!" + read(os.path.join(NONE0, "index.npy"))[6:])
open_error_both(p, "index.npy with a bad magic", os.path.join(p, "0", "index.npy"))
p = copy_case("none", "cutnpy")
write(os.path.join(p, "0", "index.npy"), read(os.path.join(NONE0, "index.npy"))[:131])
open_error_both(p, "index.npy cut inside its data", os.path.join(p, "0", "index.npy"))
p = copy_case("none", "noidx")
os.unlink(os.path.join(p, "1", "index.npy"))
open_error_both(p, "index.npy missing", os.path.join(p, "1"))
# big-endian offsets are honoured (a control: same values, other byte order)
p = copy_case("none", "bigendian")
save_index(os.path.join(p, "0"), NONE0_IDX, ">u4")
got = examples_json(tvf(p), list(range(20)))
C.check(got == {i: exp_values("none")[i] for i in range(20)},
        "control: a big-endian >u4 index reads shard 0 as upstream")

# an empty block (two equal offsets), and an offset inside a block
p = copy_case("none", "emptyblk")
save_index(os.path.join(p, "0"), [0, 422, 422, 1070], "<u2")
check_bad_block(p, "none", set(range(8, 20)), "a 0-byte block 1 (block 2 = old blocks 1+2)",
                os.path.join(p, "0"), "block ")
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 8" % tvf(p)),
             "0-byte block: the message says so", os.path.join(p, "0", "data.bin"),
             "block 1 is empty")
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 16" % tvf(p)),
             "0-byte block: the next block holds 8 examples where 4 belong",
             os.path.join(p, "0"), "block 2:", "holds 8 examples but meta.json says 4")
p = copy_case("none", "midblk")
save_index(os.path.join(p, "0"), [0, 400, 841, 1070], "<u2")
check_bad_block(p, "none", set(range(0, 16)), "index entry 1 moved into block 0",
                os.path.join(p, "0"), "block ")
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 0" % tvf(p)),
             "offset inside a block: block 0 is a cut pickle", os.path.join(p, "0"), "block 0:",
             "truncated")
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 8" % tvf(p)),
             "offset inside a block: block 1 starts mid-pickle", os.path.join(p, "0"), "block 1:")

# data.bin truncated and the index cut to match: only the last block fails
p = copy_case("standard", "trunc-fixed")
sh = os.path.join(p, "1")
idx = load_index(sh)
write(os.path.join(sh, "data.bin"), read(os.path.join(sh, "data.bin"))[:idx[-1] - 30])
save_index(sh, idx[:-1] + [idx[-1] - 30], "<u2")
check_bad_block(p, "standard", set(rows_of("standard", 1, 3)),
                "standard/1: last frame cut by 30 bytes (index agrees)",
                os.path.join(sh, "data.bin"), "block 3 (")
p = copy_case("none", "trunc-fixed-raw")
sh = os.path.join(p, "2")
idx = load_index(sh)
write(os.path.join(sh, "data.bin"), read(os.path.join(sh, "data.bin"))[:idx[-1] - 30])
save_index(sh, idx[:-1] + [idx[-1] - 30], "<u2")
check_bad_block(p, "none", set(range(56, 58)), "none/2: last pickle cut by 30 bytes (index agrees)",
                os.path.join(sh), "block 2:", "truncated")

# ========================================================= meta.json

p = copy_case("none", "morex")
edit_json(os.path.join(p, "0", "meta.json"), stored_examples=30)
edit_json(os.path.join(p, "meta.json"), shard_sizes=[30, 20, 18])
open_error_both(p, "meta.json: 30 examples where the blocks hold 20",
                os.path.join(p, "0", "index.npy"), "4 entries",
                os.path.join(p, "0", "meta.json") + " says 30 examples", "5 entries")
# 22 examples still need 3 blocks: the last block holds 4 where 6 are claimed
p = copy_case("none", "more2")
edit_json(os.path.join(p, "0", "meta.json"), stored_examples=22)
edit_json(os.path.join(p, "meta.json"), shard_sizes=[22, 20, 18])
NONE_V = exp_values("none")
for form, t in (("tvf", tvf(p)), ("create", create(p))):
    lab = "meta.json: 22 examples where the last block holds 4, not 6 (%s)" % form
    C.eq(rows("SELECT count(*) FROM %s" % t), [(60,)], lab + ": count(*) 60")
    for g in (16, 21):
        expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = ?" % t, g), lab + ": row %d fails" % g,
                     os.path.join(p, "0") + ": block 2:", "holds 4 examples but meta.json says 6")
    expect_error(lambda: rows("SELECT example FROM %s" % t), lab + ": a scan fails",
                 "holds 4 examples but meta.json says 6")
    got = examples_json(t, list(range(16)) + list(range(22, 60)))
    C.check(got == dict([(i, NONE_V[i]) for i in range(16)] + [(i, NONE_V[i - 2]) for i in range(22, 60)]),
            lab + ": the other rows read (shards 1, 2 shifted by 2)", got.get(22))
    C.eq(rows("SELECT rowid, shard, shard_index FROM %s WHERE rowid IN (21, 22)" % t),
         [(21, 0, 21), (22, 1, 0)], lab + ": rows shift as the meta says")
p = copy_case("none", "fewer")
edit_json(os.path.join(p, "0", "meta.json"), stored_examples=18)
edit_json(os.path.join(p, "meta.json"), shard_sizes=[18, 20, 18])
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 16" % tvf(p)),
             "meta.json: 18 examples (last block holds 4, not 2)", os.path.join(p, "0") + ": block 2:",
             "holds 4 examples but meta.json says 2")
C.eq(rows("SELECT count(*) FROM %s" % tvf(p)), [(56,)], "meta.json 18 examples: count(*) 56")
p = copy_case("none", "sizes")
edit_json(os.path.join(p, "meta.json"), shard_sizes=[20, 21, 18])
open_error_both(p, "root shard_sizes disagrees with a shard", os.path.join(p, "meta.json"),
                "shard_sizes[1] is 21", os.path.join(p, "1", "meta.json"))
p = copy_case("none", "sizes2")
edit_json(os.path.join(p, "meta.json"), shard_sizes=[20, 20])
open_error_both(p, "root shard_sizes lists 2 of 3 shards", os.path.join(p, "meta.json"),
                "lists 2 shards", "3 shard directories")
p = copy_case("none", "lostshard")
shutil.rmtree(os.path.join(p, "1"))
open_error_both(p, "a shard directory removed (upstream shifts indices)", os.path.join(p, "meta.json"),
                "lists 3 shards", "2 shard directories")

for label, where, text, needles in (
        ("root meta.json not JSON", "meta.json", b'{"version": 1, "shard_sizes": [20',
         ("invalid JSON",)),
        ("shard meta.json not JSON", "1/meta.json", b'{"version": 1, "block_size": 8,', ("invalid JSON",)),
        ("shard meta.json empty", "2/meta.json", b"", ("invalid JSON",)),
        ("shard meta.json an array", "0/meta.json", b"[1, 2]", ("not a JSON object",)),
        ("root meta.json an array", "meta.json", b"[]", ("not a JSON object",))):
    p = copy_case("none", "badjson%d" % _n[0])
    _n[0] += 1
    write(os.path.join(p, where), text)
    open_error_both(p, label, os.path.join(p, where), *needles)
for label, where, change, needles in (
        ("version 2", "0/meta.json", {"version": 2}, ("version 2",)),
        ("root version 3", "meta.json", {"version": 3}, ("version 3",)),
        ("block_size 0", "1/meta.json", {"block_size": 0}, ('"block_size"', "0")),
        ("block_size a string", "1/meta.json", {"block_size": "8"}, ('"block_size" is not an integer',)),
        ("stored_examples -1", "2/meta.json", {"stored_examples": -1}, ('"stored_examples"', "-1")),
        ("stored_examples 2^64", "2/meta.json", {"stored_examples": 2 ** 64}, ("18446744073709551616",)),
        ("compression_strategy 7", "0/meta.json", {"compression_strategy": 7},
         ('"compression_strategy"', "7")),
        ("compression_strategy null", "0/meta.json", {"compression_strategy": None},
         ('"compression_strategy"',)),
        ("shard_sizes a number", "meta.json", {"shard_sizes": 58}, ('"shard_sizes"',)),
        ("shard_sizes with a negative", "meta.json", {"shard_sizes": [20, -20, 18]},
         ("shard_sizes[1]",))):
    p = copy_case("none", "badmeta%d" % _n[0])
    _n[0] += 1
    edit_json(os.path.join(p, where), **change)
    open_error_both(p, "meta.json: " + label, os.path.join(p, where), *needles)
for key, where in (("block_size", "0/meta.json"), ("stored_examples", "1/meta.json"),
                   ("compression_strategy", "2/meta.json"), ("version", "meta.json"),
                   ("shard_sizes", "meta.json")):
    p = copy_case("none", "nokey-" + key)
    with open(os.path.join(p, where)) as f:
        m = json.load(f)
    del m[key]
    write(os.path.join(p, where), json.dumps(m).encode())
    open_error_both(p, "meta.json without %s" % key, os.path.join(p, where), '"%s" is missing' % key)
p = copy_case("none", "nometa")
os.unlink(os.path.join(p, "meta.json"))
open_error_both(p, "root without meta.json", p, "no meta.json")
p = copy_case("none", "noshardmeta")
os.unlink(os.path.join(p, "1", "meta.json"))
open_error_both(p, "shard without meta.json", os.path.join(p, "1", "meta.json"))
p = copy_case("single_shard", "nometa-bare")
os.unlink(os.path.join(p, "meta.json"))
open_error_both(p, "bare shard without meta.json", os.path.join(p, "meta.json"))

# ========================================================= shard directories

p = copy_case("none", "stray")
os.mkdir(os.path.join(p, "backup"))
open_error_both(p, "a stray non-numeric shard directory", os.path.join(p, "backup"),
                "not a shard directory")
p = copy_case("none", "stray2")
shutil.copytree(os.path.join(p, "1"), os.path.join(p, "1a"))
open_error_both(p, "a copy of a shard named 1a", os.path.join(p, "1a"), "not a shard directory")
p = copy_case("none", "dup")
shutil.copytree(os.path.join(p, "1"), os.path.join(p, "01"))
open_error_both(p, "shard directories 01 and 1", p, "'01'", "'1'", "same number")
p = copy_case("none", "hidden")
os.mkdir(os.path.join(p, ".ipynb_checkpoints"))
write(os.path.join(p, "NOTES.txt"), b"not a shard")
got = examples_json(tvf(p), list(range(58)))
C.check(got == exp_values("none"), "control: a hidden directory and a stray file are ignored")
C.eq(rows("SELECT count(*) FROM %s" % tvf(p)), [(58,)], "control: hidden directory: count")
open_error_both(os.path.join(T, "no-such-dir"), "a path that does not exist",
                os.path.join(T, "no-such-dir"))
open_error_both(os.path.join(p, "NOTES.txt"), "a plain file as the path", os.path.join(p, "NOTES.txt"))
p = os.path.join(T, "emptydir")
os.mkdir(p)
open_error_both(p, "an empty directory", p, "no meta.json")

# ============================================================== blocks

# none/ (strategy 0): a block that is not a list, a list too short or too long
p = copy_case("none", "notlist")
replace_block(os.path.join(p, "0"), 1, pickle.dumps(tuple(exp_block("none", 0, 1)), protocol=4))
check_bad_block(p, "none", set(range(8, 16)), "none/0 block 1 pickles a tuple",
                os.path.join(p, "0") + ": block 1:", "not a list")
p = copy_case("none", "dictblk")
replace_block(os.path.join(p, "1"), 0, pickle.dumps(exp_block("none", 1, 0)[0], protocol=4))
check_bad_block(p, "none", set(range(20, 28)), "none/1 block 0 pickles one example (a dict)",
                os.path.join(p, "1") + ": block 0:", "not a list")
p = copy_case("none", "short")
replace_block(os.path.join(p, "1"), 1, pickle.dumps(exp_block("none", 1, 1)[:7], protocol=4))
check_bad_block(p, "none", set(range(28, 36)), "none/1 block 1 holds 7 of 8 examples",
                os.path.join(p, "1") + ": block 1:", "holds 7 examples but meta.json says 8")
p = copy_case("none", "long")
blk = exp_block("none", 2, 2)
replace_block(os.path.join(p, "2"), 2, pickle.dumps(blk + blk[:1], protocol=4))
check_bad_block(p, "none", set(range(56, 58)), "none/2 last block holds 3 of 2 examples",
                os.path.join(p, "2") + ": block 2:", "holds 3 examples but meta.json says 2")
p = copy_case("none", "p2")
replace_block(os.path.join(p, "0"), 0, pickle.dumps(exp_block("none", 0, 0), protocol=2))
got = examples_json(tvf(p), list(range(8)))
C.check(got == {i: exp_values("none")[i] for i in range(8)},
        "control: the block re-pickled with protocol 2 reads as upstream")
p = copy_case("none", "garbage-raw")
replace_block(os.path.join(p, "0"), 2, b"\x00" * 229)
check_bad_block(p, "none", set(range(16, 20)), "none/0 block 2 zeroed",
                os.path.join(p, "0") + ": block 2:", "opcode 0x00")

# standard/ (strategy 1): a garbage frame, a frame of a wrong-length list
p = copy_case("standard", "badframe")
sh = os.path.join(p, "0")
b = read_blocks(sh)[1]
replace_block(sh, 1, b"\x28\xb5\x2f\xfd" + b"\xff" * (len(b) - 4))
check_bad_block(p, "standard", set(rows_of("standard", 0, 1)), "standard/0 block 1: garbage frame",
                os.path.join(sh, "data.bin") + ": block 1 (258 bytes at offset 245)")
p = copy_case("standard", "nomagic")
sh = os.path.join(p, "2")
b = read_blocks(sh)[0]
replace_block(sh, 0, b"\x00\x01\x02\x03" + b[4:])
check_bad_block(p, "standard", set(rows_of("standard", 2, 0)), "standard/2 block 0: bad zstd magic",
                os.path.join(sh, "data.bin") + ": block 0 (", "not a zstd frame")
p = copy_case("standard", "trailing")
sh = os.path.join(p, "1")
replace_block(sh, 2, read_blocks(sh)[2] + b"\x28\xb5\x2f\xfd\0\0")
check_bad_block(p, "standard", set(rows_of("standard", 1, 2)), "standard/1 block 2: bytes after the frame",
                os.path.join(sh, "data.bin") + ": block 2 (")
p = copy_case("standard", "twoframes")
sh = os.path.join(p, "1")
bl = read_blocks(sh)
replace_block(sh, 2, bl[2] + bl[2])
check_bad_block(p, "standard", set(rows_of("standard", 1, 2)), "standard/1 block 2: two frames",
                os.path.join(sh, "data.bin") + ": block 2 (")
p = copy_case("standard", "zshort")
sh = os.path.join(p, "0")
replace_block(sh, 2, zstd_raw_frame(pickle.dumps(exp_block("standard", 0, 2)[:4], protocol=4)))
check_bad_block(p, "standard", set(rows_of("standard", 0, 2)), "standard/0 block 2: frame of 4 examples",
                sh + ": block 2:", "holds 4 examples but meta.json says 5")
p = copy_case("standard", "znotlist")
sh = os.path.join(p, "3")
replace_block(sh, 0, zstd_raw_frame(pickle.dumps({"a": 1}, protocol=4)))
check_bad_block(p, "standard", set(rows_of("standard", 3, 0)), "standard/3 block 0: frame of a dict",
                sh + ": block 0:", "not a list")
p = copy_case("standard", "zsizelie")
sh = os.path.join(p, "0")
fr = bytearray(zstd_raw_frame(pickle.dumps(exp_block("standard", 0, 0), protocol=4)))
fr[5:9] = struct.pack("<I", struct.unpack("<I", fr[5:9])[0] + 100)  # content size +100
replace_block(sh, 0, bytes(fr))
check_bad_block(p, "standard", set(rows_of("standard", 0, 0)), "standard/0 block 0: content size lies",
                os.path.join(sh, "data.bin") + ": block 0 (")
p = copy_case("standard", "zhuge")
sh = os.path.join(p, "0")
fr = bytearray(b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", 2 ** 62) + b"\x01\x00\x00")
replace_block(sh, 3, bytes(fr))
check_bad_block(p, "standard", set(rows_of("standard", 0, 3)), "standard/0 block 3: frame claims 2^62 bytes",
                os.path.join(sh, "data.bin") + ": block 3 (")
p = copy_case("standard", "plainblk")
sh = os.path.join(p, "0")
replace_block(sh, 1, pickle.dumps(exp_block("standard", 0, 1), protocol=4))
check_bad_block(p, "standard", set(rows_of("standard", 0, 1)),
                "standard/0 block 1 stored uncompressed in a strategy-1 shard",
                os.path.join(sh, "data.bin") + ": block 1 (")

# ========================================================= dictionaries

p = copy_case("per_shard_dict", "nodict")
os.unlink(os.path.join(p, "1", "zstd_dict.bin"))
open_error_both(p, "per-shard dictionary missing", os.path.join(p, "1", "zstd_dict.bin"), "missing",
                "compression_strategy 3")
p = copy_case("shared_dict", "noshared")
os.unlink(os.path.join(p, "zstd_dict.bin"))
open_error_both(p, "shared dictionary missing", os.path.join(p, "zstd_dict.bin"), "missing",
                "compression_strategy 2")
p = copy_case("single_shard", "nodict-bare")
os.unlink(os.path.join(p, "zstd_dict.bin"))
open_error_both(p, "bare shard's dictionary missing", os.path.join(p, "zstd_dict.bin"), "missing")
p = copy_case("per_shard_dict", "emptydict")
write(os.path.join(p, "0", "zstd_dict.bin"), b"")
open_error_both(p, "an empty dictionary file", os.path.join(p, "0", "zstd_dict.bin"), "empty")

PSD = os.path.join(D, "per_shard_dict")
ID0, ID1 = dict_id_of(os.path.join(PSD, "0", "zstd_dict.bin")), dict_id_of(os.path.join(PSD, "1", "zstd_dict.bin"))
C.check(ID0 != ID1, "per_shard_dict fixture: the two dictionaries differ", (ID0, ID1))
p = copy_case("per_shard_dict", "wrongdict")
shutil.copyfile(os.path.join(p, "1", "zstd_dict.bin"), os.path.join(p, "0", "zstd_dict.bin"))
check_bad_block(p, "per_shard_dict", set(range(0, 56)), "shard 0 given shard 1's dictionary",
                os.path.join(p, "0", "data.bin") + ": block ", "compressed with dictionary %d" % ID0,
                os.path.join(p, "0", "zstd_dict.bin") + " has dictionary %d" % ID1, create_form=True)
expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 55" % tvf(p)),
             "wrong dictionary: the last row names its block", "block 6 ")
p = copy_case("per_shard_dict", "rawdict")
write(os.path.join(p, "1", "zstd_dict.bin"), b"not a zstd dictionary, just raw content " * 10)
check_bad_block(p, "per_shard_dict", set(range(56, 112)), "shard 1 given a raw-content dictionary",
                os.path.join(p, "1", "data.bin") + ": block ", "compressed with dictionary %d" % ID1,
                "raw content")
p = copy_case("per_shard_dict", "strategy1")
edit_json(os.path.join(p, "0", "meta.json"), compression_strategy=1)
check_bad_block(p, "per_shard_dict", set(range(0, 56)), "shard 0's meta says 1 but its frames need a dictionary",
                os.path.join(p, "0", "data.bin") + ": block ", "compressed with dictionary %d" % ID0,
                "compression_strategy 1")
p = copy_case("shared_dict", "wrongshared")
shutil.copyfile(os.path.join(PSD, "0", "zstd_dict.bin"), os.path.join(p, "zstd_dict.bin"))
SID = dict_id_of(os.path.join(D, "shared_dict", "zstd_dict.bin"))
for g, shard, block in ((0, 0, 0), (70, 1, 0), (149, 2, 2)):
    expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = ?" % tvf(p), g),
                 "shared dictionary replaced: row %d" % g,
                 os.path.join(p, str(shard), "data.bin") + ": block %d " % block,
                 "compressed with dictionary %d" % SID, os.path.join(p, "zstd_dict.bin"),
                 "has dictionary %d" % ID0)
C.eq(rows("SELECT count(*) FROM %s" % tvf(p)), [(150,)], "shared dictionary replaced: count(*) works")
p = copy_case("single_shard", "wrongdict-bare")
shutil.copyfile(os.path.join(PSD, "1", "zstd_dict.bin"), os.path.join(p, "zstd_dict.bin"))
check_bad_block(p, "single_shard", set(range(30)), "bare shard given another dictionary",
                os.path.join(p, "data.bin") + ": block ", "has dictionary %d" % ID1)
# a garbage frame in a dictionary shard: its neighbours still read
p = copy_case("per_shard_dict", "dictgarbage")
sh = os.path.join(p, "1")
b = read_blocks(sh)[3]
replace_block(sh, 3, b[:4] + b"\xff" * (len(b) - 4))
check_bad_block(p, "per_shard_dict", set(range(80, 88)), "per_shard_dict/1 block 3: garbage frame",
                os.path.join(sh, "data.bin") + ": block 3 (")
# a frame cut short inside a shared-dictionary shard
p = copy_case("shared_dict", "sharedcut")
sh = os.path.join(p, "2")
bl = read_blocks(sh)
replace_block(sh, 1, bl[1][:len(bl[1]) // 2])
check_bad_block(p, "shared_dict", set(range(136, 144)), "shared_dict/2 block 1 cut in half",
                os.path.join(sh, "data.bin") + ": block 1 (")

# ===================================================== rowids and options

p = copy_case("none", "rowids")
t = create(p)
for form, tab in (("tvf", tvf(p)), ("create", t)):
    for cond in ("rowid = -1", "rowid = -58", "rowid = -59", "rowid = 58", "rowid = 9223372036854775807",
                 "rowid = -9223372036854775808", "rowid < 0", "rowid IN (-1, -2, -57)",
                 "rowid BETWEEN -100 AND -1", "rowid = -1.0", "rowid = '-1'"):
        C.eq(rows("SELECT rowid, example FROM %s WHERE %s" % (tab, cond)), [],
             "%s: WHERE %s gives no row (upstream wraps negatives)" % (form, cond))
    C.eq([r[0] for r in rows("SELECT rowid FROM %s WHERE rowid IN (-1, 3, -20, 57)" % tab)], [3, 57],
         "%s: rowid IN with negatives keeps only the real rows" % form)
    C.eq([r[0] for r in rows("SELECT rowid FROM %s WHERE rowid BETWEEN -5 AND 1" % tab)], [0, 1],
         "%s: rowid BETWEEN -5 AND 1" % form)
    C.eq(rows("SELECT count(*) FROM %s WHERE rowid >= -3" % tab), [(58,)], "%s: rowid >= -3 counts all" % form)
    got = rows("SELECT example FROM %s WHERE rowid = ?" % tab, -1)
    C.eq(got, [], "%s: rowid = ? bound to -1" % form)
    C.eq(json.loads(rows("SELECT example FROM %s WHERE rowid = 19" % tab)[0][0]), exp_values("none")[19],
         "%s: control: rowid 19 (what upstream's ds[-59] returns) still reads" % form)

for opts, needles in (("bogus=1", ("'bogus'",)),
                      ("unsupported=maybe", ("unsupported", "maybe")),
                      ("unsupported=", ("unsupported",)),
                      ("unsupported", ("'unsupported'",)),
                      ("unsupported=placeholder, frobnicate=2", ("'frobnicate'",))):
    expect_error(lambda: rows("SELECT count(*) FROM %s" % tvf(p, opts)),
                 "tvf option %r is an error naming it" % opts, p, *needles)
for opts, needles in (("bogus=1", ("'bogus'",)),
                      ("unsupported=maybe", ("unsupported", "maybe")),
                      ("infer=abc", ("infer", "abc")),
                      ("infer=-1", ("infer", "-1")),
                      ("infer=99999999999999999999", ("infer",)),
                      ("columns='a INTEGER,,'", ("columns",)),
                      ("novalue", ("'novalue'",))):
    expect_error(lambda: create(p, opts), "CREATE option %r is an error naming it" % opts, p, *needles)
C.eq(columns_of(create(p, "unsupported=placeholder", "infer=1")), ["id", "text", "label", "score"],
     "control: valid CREATE options work")
C.eq(columns_of(create(p, "columns='label INTEGER, text TEXT'")), ["label", "text"],
     "control: columns= gives the columns")
C.eq(rows("SELECT count(*) FROM %s" % tvf(p, "unsupported=error")), [(58,)], "control: unsupported=error")

# two shards of 2^63-1 examples each (one block each, holding one example):
# the rowid of example 2^63 does not fit SQLite's signed 64-bit rowid, so
# the dataset must be refused, never shown with wrapped negative rowids
N63 = 2 ** 63 - 1
p = make_root(os.path.join(T, "huge-total"), [([pickle.dumps([0])], 1, 1), ([pickle.dumps([1])], 1, 1)])
for k in range(2):
    edit_json(os.path.join(p, str(k), "meta.json"), stored_examples=N63, block_size=N63)
edit_json(os.path.join(p, "meta.json"), shard_sizes=[N63, N63])
msg, got = error_of(lambda: rows("SELECT rowid, shard, shard_index FROM %s WHERE shard = 1 LIMIT 2" % tvf(p)))
if msg is None:
    C.check(all(r >= 0 for r, _, _ in got), "2 x (2^63-1) examples: no negative (wrapped) rowid", got)
else:
    C.check(msg.startswith("atlas: ") and p in msg, "2 x (2^63-1) examples: refused naming the dataset", msg)
msg, got = error_of(lambda: rows("SELECT rowid FROM %s ORDER BY rowid DESC LIMIT 1" % tvf(p)))
C.check(msg is not None or all(r >= 0 for r, in got),
        "2 x (2^63-1) examples: the last rowid is not negative", got)
p = make_root(os.path.join(T, "big-ok"), [([pickle.dumps([0])], 1, 1), ([pickle.dumps([1])], 1, 1)])
edit_json(os.path.join(p, "0", "meta.json"), stored_examples=N63 - 1, block_size=N63 - 1)
edit_json(os.path.join(p, "meta.json"), shard_sizes=[N63 - 1, 1])
# a claim no block can hold is refused at open (issue 11 item 4), so
# count(*) never walks rows that cannot exist
for q in ("SELECT count(*) FROM %s", "SELECT example FROM %s WHERE shard = 1"):
    expect_error(lambda: rows(q % tvf(p)),
                 "(2^63-2) examples claimed in a block of 17 bytes: refused at open (%s)" % q[:15],
                 os.path.join(p, "0", "meta.json"), "block_size %d" % (N63 - 1), "cannot be right",
                 "room for at most 17 examples")

# ================================================= hostile pickles

HOSTILE = os.path.join(T, "hostile")
os.mkdir(HOSTILE)


def marker(kind, name):
    return os.path.join(HOSTILE, "%s-%s.marker" % (kind, name))


class R:
    """Pickles as callable(*args): what a malicious pickle does."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)

    def __call__(self):  # pickle wants the callable of a reduce to be callable
        pass


def p_str(s):
    b = s.encode()
    return b"\x8c" + bytes([len(b)]) + b if len(b) < 256 else b"X" + struct.pack("<I", len(b)) + b


def p_int(i):
    return b"K" + bytes([i]) if 0 <= i < 256 else b"J" + struct.pack("<i", i)


def p_harmless(i):
    """{'id': i, 'text': 't<i>'} by hand (no memo)."""
    return b"}(" + p_str("id") + p_int(i) + p_str("text") + p_str("t%d" % i) + b"u"


def p_block(*items):
    return b"\x80\x04](" + b"".join(items) + b"e."


def with_value(i, frag):
    """{'id': i, 'text': <whatever frag pushes>} by hand."""
    return b"}(" + p_str("id") + p_int(i) + p_str("text") + frag + b"u"


def harmless(i):
    return {"id": i, "text": "t%d" % i}


def py_block(hostile_value, protocol=4):
    """Block 1 of shard 1: [harmless 5, {'id': 6, 'text': hostile}]."""
    return pickle.dumps([harmless(5), {"id": 6, "text": hostile_value}], protocol=protocol)


def hand_global(mod, name, args_frag, proto2=False):
    """mod.name(*args) with GLOBAL (proto2) or STACK_GLOBAL."""
    g = (b"c" + mod.encode() + b"\n" + name.encode() + b"\n") if proto2 else \
        (p_str(mod) + p_str(name) + b"\x93")
    return g + args_frag + b"R"


def memo_global_block(m):
    """Example 5 memoizes the strings 'posix' and 'system' as its own
    data; example 6 builds posix.system from BINGETs of them."""
    return (b"\x80\x04](" +
            b"}\x94(" + p_str("id") + b"\x94" + p_int(5) + p_str("text") + b"\x94" +
            p_str("posix") + b"\x94" + p_str("note") + b"\x94" + p_str("system") + b"\x94u" +
            b"}(h\x01" + p_int(6) + b"h\x02" +
            b"h\x03h\x05\x93" + p_str("touch " + m) + b"\x85R" + b"u" + b"e.")


def binput_global_block(m):
    """Memo slots first hold 'json'/'loads', then BINPUT overwrites them
    with 'posix'/'system' before the STACK_GLOBAL reads them."""
    return (b"\x80\x04](" + p_harmless(5) +
            b"}(" + p_str("id") + p_int(6) + p_str("text") +
            p_str("json") + b"\x94" + p_str("loads") + b"\x94" + b"00" +
            p_str("posix") + b"q\x00" + p_str("system") + b"q\x01" + b"00" +
            b"h\x00h\x01\x93" + p_str("touch " + m) + b"\x85R" + b"u" + b"e.")


# name: (block builder taking a marker path, global the error must name,
#        the side effect pickle.loads has: "marker" or "module")
HOSTILES = {
    "posix_system_p4": (lambda m: py_block(R(os.system, ("touch " + m,))), "posix.system", "marker"),
    "posix_system_p2": (lambda m: py_block(R(os.system, ("touch " + m,)), 2), "posix.system", "marker"),
    "posix_system_p3": (lambda m: py_block(R(os.system, ("touch " + m,)), 3), "posix.system", "marker"),
    "posix_system_p5": (lambda m: py_block(R(os.system, ("touch " + m,)), 5), "posix.system", "marker"),
    "os_system_global": (lambda m: p_block(p_harmless(5), with_value(
        6, hand_global("os", "system", p_str("touch " + m) + b"\x85", proto2=True))),
        "os.system", "marker"),
    "os_system_stack": (lambda m: p_block(p_harmless(5), with_value(
        6, hand_global("os", "system", p_str("touch " + m) + b"\x85"))), "os.system", "marker"),
    "builtins_eval": (lambda m: py_block(R(eval, ("open(%r, 'w').close()" % m,))),
                      "builtins.eval", "marker"),
    "builtin_eval_p2": (lambda m: py_block(R(eval, ("open(%r, 'w').close()" % m,)), 2),
                        "builtins.eval", "marker"),
    "builtins_exec": (lambda m: py_block(R(exec, ("open(%r, 'w').close()" % m,))),
                      "builtins.exec", "marker"),
    "subprocess_call": (lambda m: py_block(R(subprocess.call, (["touch", m],))),
                        "subprocess.call", "marker"),
    "subprocess_popen_newobj": (lambda m: p_block(p_harmless(5), with_value(
        6, p_str("subprocess") + p_str("Popen") + b"\x93" + b"(" + p_str("touch") + p_str(m) +
        b"t" + b"\x85\x81")), "subprocess.Popen", "none"),
    "getattr_import_chain": (lambda m: py_block(
        R(R(getattr, (R(__import__, ("os",)), "system")), ("touch " + m,))),
        "builtins.getattr", "marker"),
    "builtins_import": (lambda m: py_block(R(__import__, ("os",))), "builtins.__import__", "module"),
    "memo_strings_global": (memo_global_block, "posix.system", "marker"),
    "binput_overwritten_global": (binput_global_block, "posix.system", "marker"),
    "apply_in_list": (lambda m: py_block([1, [2, R(os.system, ("touch " + m,))]]), "posix.system", "marker"),
    "dict_key_global": (lambda m: p_block(p_harmless(5), b"}(" + p_str("id") + p_int(6) + p_str("text") +
                                          p_str("x") + b"u" +  # the example stays a dict with 'text'
                                          hand_global("posix", "system", p_str("touch " + m) + b"\x85") +
                                          p_int(1) + b"s"), "posix.system", "marker"),
    "build_setstate": (lambda m: p_block(p_harmless(5), with_value(
        6, p_str("os") + p_str("system") + b"\x93" + b")" + b"\x81" + b"}" + p_str("x") + p_str(m) +
        b"s" + b"b")), "os.system", "none"),
}

# pickle.loads really executes each of them (positive control, child process)
ctl_src = ("import pickle, sys, types\n"
           "v = pickle.loads(open(sys.argv[1], 'rb').read())\n"
           "print('module' if any(isinstance(x.get('text'), types.ModuleType) for x in v"
           " if isinstance(x, dict)) else 'no-module')\n")
for name, (make, glob, effect) in HOSTILES.items():
    if effect == "none":
        continue
    f = write(os.path.join(HOSTILE, "ctl-%s.pkl" % name), make(marker("ctl", name)))
    try:
        r = subprocess.run([sys.executable, "-c", ctl_src, f], capture_output=True, timeout=60,
                           text=True)
        out, err = r.stdout.strip(), r.stderr[-300:]
    except subprocess.TimeoutExpired:
        out, err = "timeout", ""
    if effect == "marker":
        C.check(os.path.exists(marker("ctl", name)),
                "control: pickle.loads of %s really runs code (creates its marker)" % name, (out, err))
    else:
        C.eq(out, "module", "control: pickle.loads of %s really imports a module" % name)

# through SQL: an error naming the global and example 6, or a placeholder
for name, (make, glob, effect) in HOSTILES.items():
    d = make_root(os.path.join(HOSTILE, name), [
        ([pickle.dumps([harmless(0), harmless(1)]), pickle.dumps([harmless(2)])], 3, 2),
        ([pickle.dumps([harmless(3), harmless(4)]), make(marker("sql", name))], 4, 2)])
    sh1 = os.path.join(d, "1")
    needles = (sh1 + ": block 1:", "example 6 ", "'%s'" % glob, "allow-list")
    want5 = {"id": 5, "text": "posix", "note": "system"} if name == "memo_strings_global" else harmless(5)
    want = [harmless(i) for i in range(5)] + [want5]
    for form, t in (("tvf", tvf(d)), ("create", create(d, "infer=6"))):
        lab = "hostile %s (%s)" % (name, form)
        expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 6" % t), lab + ": row 6 fails",
                     *needles)
        expect_error(lambda: rows("SELECT rowid, example FROM %s" % t), lab + ": a scan fails", *needles)
        C.eq([(r, json.loads(x)) for r, x in rows("SELECT rowid, example FROM %s WHERE rowid < 6" % t)],
             list(enumerate(want)), lab + ": rows 0-5 read")
        C.eq(rows("SELECT count(*) FROM %s" % t), [(7,)], lab + ": count(*)")
        if form == "create":
            C.eq(rows("SELECT id FROM %s WHERE rowid = 6" % t), [(6,)], lab + ": its id column reads")
            C.eq(rows("SELECT text FROM %s WHERE rowid < 6" % t), [(w["text"],) for w in want],
                 lab + ": the text column of rows 0-5")
            if name == "dict_key_global":
                C.eq(rows("SELECT text FROM %s WHERE rowid = 6" % t), [("x",)],
                     lab + ": a hostile key does not touch the text column")
            else:
                expect_error(lambda: rows("SELECT text FROM %s WHERE rowid = 6" % t),
                             lab + ": its text column fails", *needles)
    ph = tvf(d, "unsupported=placeholder")
    got = rows("SELECT example FROM %s WHERE rowid = 6" % ph)
    v = json.loads(got[0][0]) if got else None
    ph_value = {"$unsupported": glob}
    if name == "apply_in_list":
        ph_value = [1, [2, ph_value]]
    if name == "dict_key_global":
        want6 = {"id": 6, "text": "x", json.dumps(ph_value, separators=(",", ":")): 1}
    else:
        want6 = {"id": 6, "text": ph_value}
    C.eq(v, want6, "hostile %s: unsupported=placeholder gives %r" % (name, ph_value))
    t = create(d, "unsupported=placeholder", "infer=6")
    C.eq([json.loads(x) for x, in rows("SELECT example FROM %s WHERE rowid = 6" % t)], [want6],
         "hostile %s (create, placeholder): the example column" % name)
    if name != "dict_key_global":
        C.eq([json.loads(x) for x, in rows("SELECT text FROM %s WHERE rowid = 6" % t)], [ph_value],
             "hostile %s (create, placeholder): the text column" % name)
    C.eq(rows("SELECT count(*) FROM %s" % ph), [(7,)], "hostile %s: count(*) with placeholders" % name)

# opcodes that would run code or need outside state: refused by opcode
OPCODES = {
    "inst": (b"\x80\x02](" + p_str("touch") + b"iposix\nsystem\n" + b"a.", "0x69"),
    "obj": (b"\x80\x02](cposix\nsystem\n" + p_str("touch") + b"oa.", "0x6f"),
    "persid": (b"\x80\x04]" + p_str("x") + b"Qa.", "0x51"),
    "persid_text": (b"\x80\x04]Pxyz\na.", "0x50"),
    "ext1": (b"\x80\x04]\x82\x01a.", "0x82"),
    "ext2": (b"\x80\x04]\x83\x01\x00a.", "0x83"),
    "ext4": (b"\x80\x04]\x84\x01\x00\x00\x00a.", "0x84"),
    "reduce_text_p0": (b"cposix\nsystem\n(Vtouch\ntR.", "0x56"),
    "next_buffer": (b"\x80\x05]\x97a.", "0x97"),
    "readonly_buffer": (b"\x80\x05]N\x98a.", "0x98"),
    "proto6": (b"\x80\x06].", "protocol 6"),
}
for name, (blob, needle) in OPCODES.items():
    d = make_shard(os.path.join(HOSTILE, "op-" + name), [pickle.dumps([harmless(0)]), blob], 2, 1)
    for opts in (None, "unsupported=placeholder"):
        expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 1" % tvf(d, opts)),
                     "opcode %s refused (%s)" % (name, opts or "default"), d + ": block 1:", needle)
    C.eq(json.loads(rows("SELECT example FROM %s WHERE rowid = 0" % tvf(d))[0][0]), harmless(0),
         "opcode %s: block 0 still reads" % name)

# resource attacks: clean errors, fast, in bounded memory (child process)
bomb = []
for _ in range(60):
    bomb = [bomb, bomb]
t_rec = ([], 1, 2, 3)  # more than 3 items: pickled with POP_MARK
t_rec[0].append(t_rec)
d_rec = {}
d_rec["self"] = d_rec
l_rec = []
l_rec.append(l_rec)
RESOURCE = {
    "deep_list": (b"]" * 100000 + b"a" * 99999, "nested deeper than"),
    "deep_tuple": (b"(" * 100000 + b"t" * 100000, "nested deeper than"),
    "deep_tuple1": (b"N" + b"\x85" * 100000, "nested deeper than"),
    "deep_dict": (b"}" + (p_str("k") + b"}") * 100000 + b"s" * 100000, "nested deeper than"),
    "deep_mark": (b"(" * 100000 + b"N", "underflow"),
    "long4_huge": (b"\x8b\xff\xff\xff\x7f\x01\x02", "opcode 0x8b"),
    "long4_negative": (b"\x8b\x00\x00\x00\x80\x01", "LONG4 with a negative length"),
    "long1_past_end": (b"\x8a\xff\x01\x02", "opcode 0x8a"),
    "binunicode8_2p60": (b"\x8d" + struct.pack("<Q", 2 ** 60) + b"abc", "opcode 0x8d"),
    "binunicode8_max": (b"\x8d" + b"\xff" * 8 + b"abc", "opcode 0x8d"),
    "binunicode_4g": (b"X\xff\xff\xff\xff" + b"abc", "opcode 0x58"),
    "binbytes8_2p63": (b"\x8e" + struct.pack("<Q", 2 ** 63) + b"abc", "opcode 0x8e"),
    "bytearray8_max": (b"\x96" + b"\xff" * 8 + b"abc", "opcode 0x96"),
    "frame_2p62": (b"\x95" + struct.pack("<Q", 2 ** 62) + b"N", "opcode 0x95"),
    "binget_200": (b"h\xc8", "memo key 200 is not defined"),
    "long_binget_max": (b"j\xff\xff\xff\xff", "memo key 4294967295 is not defined"),
    "binget_after_memo": (b"N\x94h\x01", "memo key 1 is not defined"),
    "long_binput_max": (b"Nr\xff\xff\xff\xff", "4294967295"),
    "binput_empty_stack": (b"000q\x00", "byte"),
}
RES_FULL = {name: b"\x80\x04](" + p_harmless(5) + b"}(" + p_str("id") + p_int(6) + p_str("text") + frag +
            b"ue." for name, (frag, _) in RESOURCE.items()}
RES_FULL.update({
    "self_list": pickle.dumps([harmless(5), {"id": 6, "text": l_rec}], protocol=4),
    "self_dict": pickle.dumps([harmless(5), {"id": 6, "text": d_rec}], protocol=4),
    "self_tuple_pop_mark": pickle.dumps([harmless(5), {"id": 6, "text": t_rec}], protocol=4),
    "self_list_p2": pickle.dumps([harmless(5), {"id": 6, "text": l_rec}], protocol=2),
    "reference_bomb": pickle.dumps([harmless(5), {"id": 6, "text": bomb}], protocol=4),
})


def np_block(protocol, *subs):
    """Block [harmless 5, {'id': 6, 'text': int16 array [0, 1, 2]}] with
    byte substitutions (old, new) applied; the FRAME length is fixed up."""
    b = pickle.dumps([harmless(5), {"id": 6, "text": numpy.arange(3, dtype=numpy.int16)}],
                     protocol=protocol)
    for old, new in subs:
        if old not in b:
            raise ValueError("numpy pickle without %r" % old)
        b = b.replace(old, new, 1)
    if b[2:3] == b"\x95":
        b = b[:3] + struct.pack("<Q", len(b) - 11) + b[11:]
    return b


BIG = b"J\xff\xff\xff\x7f"
NP_DATA = b"C\x06\x00\x00\x01\x00\x02\x00"
NP_SHAPE = b"K\x03\x85"
NUMPY_ATTACKS = {
    "numpy_control": (np_block(4), None),
    "numpy_shape_2p93": (np_block(4, (NP_SHAPE, BIG * 3 + b"\x87")), "too large"),
    "numpy_shape_negative": (np_block(4, (NP_SHAPE, b"J\xff\xff\xff\xff\x85")), "negative dimension"),
    "numpy_shape_0_by_2p63": (np_block(4, (NP_SHAPE, b"K\x00\x8a\x08" + b"\xff" * 7 + b"\x7f\x86")),
                              "too large"),
    "numpy_shape_33_dims": (np_block(4, (NP_SHAPE, b"(" + b"K\x01" * 33 + b"t")), "33 dimensions"),
    "numpy_shape_str": (np_block(4, (NP_SHAPE, p_str("a") + b"\x85")), "shape"),
    "numpy_dtype_S2p31": (np_block(4, (b"\x8c\x02i2", b"\x8c\x0bS2147483647")), "need"),
    "numpy_dtype_U2p30": (np_block(4, (b"\x8c\x02i2", b"\x8c\x0bU1073741824")), "dtype"),
    "numpy_dtype_unknown": (np_block(4, (b"\x8c\x02i2", b"\x8c\x02z9")), "dtype 'z9'"),
    "numpy_data_long": (np_block(4, (NP_DATA, b"C\x07\x00\x00\x01\x00\x02\x00\x00")),
                        "has 7 bytes, its shape and dtype need 6"),
    "numpy_data_short": (np_block(4, (NP_DATA, b"C\x05\x00\x00\x01\x00\x02")),
                         "has 5 bytes, its shape and dtype need 6"),
    "numpy_p5_shape_2p62": (np_block(5, (NP_SHAPE, BIG * 2 + b"\x86")), "need"),
    "numpy_p5_data_short": (np_block(5, (b"\x96\x06" + b"\x00" * 7 + b"\x00\x00\x01\x00\x02\x00",
                                         b"\x96\x05" + b"\x00" * 7 + b"\x00\x00\x01\x00\x02")), "need 6"),
}
RES_FULL.update({name: blob for name, (blob, _) in NUMPY_ATTACKS.items() if _ is not None})
# control: the unmodified numpy block reads as the array [0, 1, 2]
d = make_shard(os.path.join(HOSTILE, "numpy-control"), [NUMPY_ATTACKS["numpy_control"][0]], 2, 2)
C.eq([json.loads(x) for x, in rows("SELECT example FROM %s WHERE rowid = 1" % tvf(d))],
     [{"id": 6, "text": [0, 1, 2]}], "control: the numpy block the attacks patch reads as [0, 1, 2]")
RES_NEEDLE = {name: n for name, (_, n) in RESOURCE.items()}
RES_NEEDLE.update({name: n for name, (_, n) in NUMPY_ATTACKS.items() if n is not None})
RES_NEEDLE.update({"self_list": "recursive", "self_dict": "recursive", "self_tuple_pop_mark": "recursive",
                   "self_list_p2": "recursive", "reference_bomb": "too large"})
C.check(b"1h" in pickle.dumps(t_rec, protocol=4), "control: the recursive tuple pickle uses POP_MARK")
C.check(len(RES_FULL["reference_bomb"]) < 1000, "control: the reference bomb is a small pickle",
        len(RES_FULL["reference_bomb"]))
res_paths = {}
for name, blob in RES_FULL.items():
    d = make_root(os.path.join(HOSTILE, "res-" + name), [
        ([pickle.dumps([harmless(0), harmless(1)]), pickle.dumps([harmless(2)])], 3, 2),
        ([pickle.dumps([harmless(3), harmless(4)]), blob], 4, 2)])
    res_paths[name] = d
    sh1 = os.path.join(d, "1")
    for opts in (None, "unsupported=placeholder"):
        expect_error(lambda: rows("SELECT example FROM %s WHERE rowid = 6" % tvf(d, opts)),
                     "resource %s (%s): a clean error" % (name, opts or "default"), sh1 + ": block 1:",
                     RES_NEEDLE[name])
    C.eq([r for r, in rows("SELECT rowid FROM %s WHERE rowid < 5 AND example IS NOT NULL" % tvf(d))],
         [0, 1, 2, 3, 4], "resource %s: the other blocks read" % name)
    expect_error(lambda: rows("SELECT text FROM %s" % create(d, "infer=1000")),
                 "resource %s (create): a scan of the text column fails" % name, sh1 + ": block 1:")
child = subprocess.run([sys.executable, os.path.abspath(__file__), BUILD, "--hostile-child"] +
                       list(res_paths.values()), capture_output=True, text=True, timeout=600)
try:
    rep = json.loads(child.stdout)
except ValueError:
    rep = None
C.check(rep is not None and child.returncode == 0, "resource attacks: the child process ran them all",
        (child.returncode, child.stderr[-500:]))
if rep:
    slow = [(os.path.basename(r["path"]), round(r["seconds"], 2)) for r in rep["results"] if r["seconds"] > 5]
    C.check(not slow, "resource attacks: each query takes under 5 s of CPU", slow)
    noerr = [os.path.basename(r["path"]) for r in rep["results"] if "error" not in r]
    C.check(not noerr, "resource attacks: each scan is an error in the child too", noerr)
    C.check(rep["maxrss_kb"] - rep["base_kb"] < 256 * 1024,
            "resource attacks: peak memory grows by less than 256 MB",
            "%d KB -> %d KB" % (rep["base_kb"], rep["maxrss_kb"]))

# nothing ever ran
left = sorted(f for f in os.listdir(HOSTILE) if f.startswith("sql-"))
C.eq(left, [], "no marker file was created by any SQL query")
C.eq(len([f for f in os.listdir(HOSTILE) if f.startswith("ctl-") and f.endswith(".marker")]),
     len([1 for _, _, e in HOSTILES.values() if e == "marker"]),
     "every control marker exists (the markers are a real test)")

conn.close()
TMP.cleanup()
C.exit()
