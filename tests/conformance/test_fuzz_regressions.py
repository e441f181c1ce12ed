"""test_fuzz_regressions.py - saved fuzzer inputs never crash the SQL layer.

Every file in tests/fuzz/regressions/bagz/ (except *.md notes) is an input
of tests/fuzz/fuzz_bagz.c: one option byte, then the bytes of a bagz file.
The file part (input[1:]), and for good measure the whole input, is written
to a temporary file and queried with
    SELECT count(*), sum(length(record)) FROM bagz(file, 'compression=...')
for compression=zstd and none (and the layout the option byte picks). Each
query must either succeed or fail with an sqlite3.Error starting "bagz: ".
The queries run in a child process so that a crash is reported as a FAIL
line naming the input instead of killing the test.

datadings: every file in tests/fuzz/regressions/datadings/ (except *.md)
named sample-* is an input of tests/fuzz/fuzz_datadings_sample.c (one
sample): it is written as the only sample of a dataset (data file, .offsets
[0, size], .keys ["r0"]) and read with the table-valued form (key, sample,
raw, a lookup by key) and a CREATE VIRTUAL TABLE (every column). A file
named index-* is an input of tests/fuzz/fuzz_datadings_index.c (flag byte,
length-prefixed index files, data file) and is unpacked into its files;
then count(*), every key and sample, a few lookups and datadings_verify
run. Each query must succeed or fail with "datadings: " (datadings_verify:
"datadings_verify: "), again in a child process.
npy: every file in tests/fuzz/regressions/npy/ (except *.md) is an input
of tests/fuzz/fuzz_npy.c (a .npy file); every npy_* SQL function runs on
it as a BLOB and must give a value or an error starting with the
function's name, again in a child process. TEXT must be valid UTF-8 (the
sqlite3 module fails to decode it otherwise), and when numpy loads the
file, npy_json must equal json.dumps(a.tolist()) and npy_size a.size.
atlas: every input of tests/fuzz/fuzz_atlas.c is unpacked into the bare
shard the harness writes (meta.json, index.npy, zstd_dict.bin, data.bin;
the shared dictionary as dictionary=) and read with atlas(): count(*) and
every example. bcolz: every input of tests/fuzz/fuzz_bcolz.c replaces a
part of a copy of the carray_int32 fixture (selector 0: the chunk
data/__0.blp; 1: meta/storage and meta/sizes) and the copy is read with
bcolz(): count(*) and every row. pickle: every input of
tests/fuzz/fuzz_pickle.c is the one block of an uncompressed bare atlas
shard (how the extension reaches the pickle decoder) read with atlas().
Each query must succeed or fail with "atlas: " / "bcolz: ", in a child
process. The other folders are replayed by their own tests (tfexample by
test_tfexample.py, queries by test_query_fuzz.py); a folder that no test
replays is a FAIL.
Usage: test_fuzz_regressions.py BUILD_DIR"""
import ast
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, ROOT, Checker, connect, sql_quote  # noqa: E402

REG = os.path.join(ROOT, "tests", "fuzz", "regressions", "bagz")
DD_REG = os.path.join(ROOT, "tests", "fuzz", "regressions", "datadings")
NPY_REG = os.path.join(ROOT, "tests", "fuzz", "regressions", "npy")
NPY_QUERIES = ["npy_shape(?1)", "npy_dtype(?1)", "npy_size(?1)", "npy_json(?1)",
               "npy_get(?1)", "npy_get(?1, 0)", "npy_get(?1, 0, 0)", "npy_sum(?1)",
               "npy_min(?1)", "npy_max(?1)", "npy_mean(?1)"]
DD_SUFFIXES = (".offsets", ".keys", ".key_hashes", ".filter", ".index", ".md5")
REGS = os.path.join(ROOT, "tests", "fuzz", "regressions")
# folders of tests/fuzz/regressions/ replayed by another test: that test
# must name the folder
REPLAYED_ELSEWHERE = {"tfexample": "test_tfexample.py", "queries": "test_query_fuzz.py",
                      # through the reader, until a tfrecord table exists
                      "tfrecord": "../unit/test_tfrecord.c"}


def variants(data):
    """(label, file bytes, extra option) for one fuzzer input."""
    out = []
    if data:
        layout = "interleaved" if data[0] & 4 else "concatenated"
        out.append(("file part", data[1:], "layout=" + layout))
    out.append(("whole input", data, ""))
    return out


def child(build, path):
    """Run every query for one input; print one JSON result per query."""
    conn = connect(build)
    with open(path, "rb") as f:
        data = f.read()
    with tempfile.TemporaryDirectory(prefix="bagz-fuzzreg-") as d:
        for label, body, extra in variants(data):
            fp = os.path.join(d, "input.bagz")
            with open(fp, "wb") as f:
                f.write(body)
            for comp in ("zstd", "none"):
                for threads in ("1", "2"):
                    opts = ",".join(x for x in ("compression=" + comp, extra,
                                                "threads=" + threads) if x)
                    q = "SELECT count(*), sum(length(record)) FROM bagz(%s, %s)" % (
                        sql_quote(fp), sql_quote(opts))
                    res = {"label": label, "opts": opts}
                    try:
                        res["rows"] = [list(r) for r in conn.execute(q).fetchall()]
                    except sqlite3.Error as e:
                        res["error"] = str(e)
                    print(json.dumps(res), flush=True)
    conn.close()


def bagz_input(build, C, path):
    """Replay one fuzz_bagz input (see child)."""
    name = os.path.basename(path)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", build, path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    C.check(p.returncode == 0, "%s: no crash" % name,
            "exit %d; stderr: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    want = sum(2 * 2 for _ in variants(open(path, "rb").read()))
    C.eq(len(results), want, "%s: every query ran" % name)
    for r in results:
        what = "%s: %s %s" % (name, r["label"], r["opts"])
        if "error" in r:
            C.check(r["error"].startswith("bagz: "), what + ": error starts with 'bagz: '",
                    r["error"])
        else:
            rows = r["rows"]
            C.check(len(rows) == 1 and isinstance(rows[0][0], int) and rows[0][0] >= 0,
                    what + ": succeeded with a count", rows)


def inputs(folder):
    """The saved inputs of one regressions folder (no *.md notes)."""
    d = os.path.join(REGS, folder)
    return sorted(os.path.join(d, f) for f in os.listdir(d)
                  if not f.endswith(".md") and not f.startswith(".")) if os.path.isdir(d) else []


def main(build):
    C = Checker()
    C.check(os.path.isdir(REG), "regression folder exists", REG)
    for path in inputs("bagz"):
        C.run(bagz_input, build, C, path, name="bagz " + os.path.basename(path))
    C.run(dd_main, build, C)
    C.run(npy_main, build, C)
    for folder, module in (("atlas", "atlas"), ("bcolz", "bcolz"), ("pickle", "atlas")):
        C.run(sql_main, build, C, folder, module, name=folder + " regressions")
    C.run(every_folder_replayed, C)
    C.exit()


def every_folder_replayed(C):
    """Each folder of tests/fuzz/regressions/ has a replayer in make test."""
    here = {"bagz", "datadings", "npy", "atlas", "bcolz", "pickle"}
    for folder in sorted(os.listdir(REGS)):
        if not os.path.isdir(os.path.join(REGS, folder)):
            continue
        other = REPLAYED_ELSEWHERE.get(folder)
        if other:
            with open(os.path.join(HERE, other), encoding="utf-8") as f:
                text = f.read()
            C.check('"regressions", "%s"' % folder in text or "regressions/%s" % folder in text,
                    "fuzz regressions/%s: replayed by %s" % (folder, other))
        else:
            C.check(folder in here, "fuzz regressions/%s: replayed by make test" % folder,
                    "no test replays it")


# ------------------------------------------------- atlas, bcolz, pickle

def u16le(b, at, left):
    """fuzz_atlas's take_len: a u16 LE length clamped to what is left."""
    n = b[at] | b[at + 1] << 8
    return min(n, left)


def atlas_unpack(d, data):
    """A fuzz_atlas input as its bare shard in d; returns the atlas() args."""
    if len(data) < 7:
        return None
    flags, left = data[0], len(data) - 7
    nm = u16le(data, 1, left)
    left -= nm
    ni = u16le(data, 3, left)
    left -= ni
    nd = 0
    if flags & 2:
        nd = u16le(data, 5, left)
        left -= nd
    p = data[7:]
    parts = [("meta.json", p[:nm]), ("index.npy", p[nm:nm + ni])]
    if flags & 2:
        parts.append(("zstd_dict.bin", p[nm + ni:nm + ni + nd]))
    if not flags & 1:
        parts.append(("data.bin", p[nm + ni + nd:]))
    for fname, body in parts:
        with open(os.path.join(d, fname), "wb") as f:
            f.write(body)
    opts = "dictionary=" + os.path.join(d, "zstd_dict.bin") if flags & 4 else ""
    return opts


def npy_u64(values):
    """A .npy file (format 1.0) of little-endian uint64 values."""
    head = "{'descr': '<u8', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    pad = 64 - (10 + len(head) + 1) % 64
    head = (head + " " * pad + "\n").encode("latin-1")
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head
            + struct.pack("<%dQ" % len(values), *values))


def pickle_unpack(d, data):
    """A pickle as the one raw block (strategy 0) of a bare atlas shard."""
    meta = {"version": 1, "block_size": 1, "stored_examples": 1, "compression_strategy": 0,
            "compression_level": 3, "compression_dict_size": 0.01}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(d, "index.npy"), "wb") as f:
        f.write(npy_u64([0, len(data)]))
    with open(os.path.join(d, "data.bin"), "wb") as f:
        f.write(data)
    return ""


BCOLZ_BASE = os.path.join(FIXTURES, "bcolz", "carray_int32")


def bcolz_unpack(d, data):
    """A fuzz_bcolz input put into a copy of carray_int32 (see the top)."""
    if not data:
        return None
    root = os.path.join(d, "t")
    shutil.copytree(BCOLZ_BASE, root)
    body = data[1:]
    if data[0] & 1:
        storage, _, sizes = body.partition(b"\x00")
        with open(os.path.join(root, "meta", "storage"), "wb") as f:
            f.write(storage)
        with open(os.path.join(root, "meta", "sizes"), "wb") as f:
            f.write(sizes)
    else:
        with open(os.path.join(root, "data", "__0.blp"), "wb") as f:
            f.write(body)
    return ""


UNPACK = {"atlas": atlas_unpack, "bcolz": bcolz_unpack, "pickle": pickle_unpack}


def sql_child(build, folder, module, path):
    """Unpack one input and query it; one JSON result per query."""
    conn = connect(build)
    with open(path, "rb") as f:
        data = f.read()
    with tempfile.TemporaryDirectory(prefix="%s-fuzzreg-" % folder) as d:
        opts = UNPACK[folder](d, data)
        if opts is None:
            print(json.dumps({"skipped": "shorter than the harness reads"}), flush=True)
            return
        target = os.path.join(d, "t") if folder == "bcolz" else d
        src = "%s(%s%s)" % (module, sql_quote(target), ", " + sql_quote(opts) if opts else "")
        for label, q in (("count", "SELECT count(*) FROM " + src),
                         ("every row", "SELECT * FROM " + src)):
            res = {"label": label}
            try:
                res["rows"] = len(conn.execute(q).fetchall())
            except sqlite3.Error as e:
                res["error"] = str(e)
            print(json.dumps(res), flush=True)
    conn.close()


def sql_main(build, C, folder, module):
    """Replay every input of one folder through module's table (sql_child)."""
    files = inputs(folder)
    C.check(len(files) > 0, "%s: regression inputs exist" % folder)
    for path in files:
        name = "%s %s" % (folder, os.path.basename(path))
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--sql-child", build,
                            folder, module, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        C.check(p.returncode == 0, "%s: no crash" % name,
                "exit %d; stderr: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
        results = [json.loads(line) for line in p.stdout.decode("utf-8", "replace").splitlines()
                   if line.startswith("{")]
        if results and "skipped" in results[0]:
            C.check(True, "%s: %s" % (name, results[0]["skipped"]))
            continue
        C.eq([r["label"] for r in results], ["count", "every row"], "%s: every query ran" % name)
        for r in results:
            what = "%s: %s" % (name, r["label"])
            if "error" in r:
                C.check(r["error"].startswith(module + ": "),
                        "%s: error starts with '%s: '" % (what, module), r["error"])
            else:
                C.check(isinstance(r["rows"], int), what + ": succeeded", r)


# ------------------------------------------------------------ datadings

def dd_write_sample_dataset(d, body):
    """The sample bytes as the only sample of d/input.msgpack."""
    p = os.path.join(d, "input.msgpack")
    with open(p, "wb") as f:
        f.write(body)
    with open(p + ".offsets", "wb") as f:
        f.write(struct.pack(">QQ", 0, len(body)))
    with open(p + ".keys", "wb") as f:
        f.write(b"\x91\xa2r0")
    return p


def dd_write_index_input(d, data):
    """Unpack an index-harness input (see fuzz_datadings_index.c) into d;
    returns the path or glob to open."""
    flags = data[0] if data else 0
    pos, files = 1, {}
    for i, suf in enumerate(DD_SUFFIXES):
        if flags >> i & 1:
            n = int.from_bytes(data[pos:pos + 2], "big") if pos + 2 <= len(data) else 0
            pos = min(pos + 2, len(data))
            files[suf] = data[pos:pos + n]
            pos += len(files[suf])
    stems = ["X-0", "X-1"] if flags & 64 else ["X"]
    for stem in stems:
        with open(os.path.join(d, stem + ".msgpack"), "wb") as f:
            f.write(data[pos:])
        for suf, body in files.items():
            with open(os.path.join(d, stem + ".msgpack" + suf), "wb") as f:
                f.write(body)
    return os.path.join(d, "X-*.msgpack" if flags & 64 else "X.msgpack"), bool(flags & 32)


def dd_queries(path, kind, has_md5):
    """(label, sql, params, error prefix) for one unpacked input."""
    t = "datadings(%s)" % sql_quote(path)
    out = [("count", "SELECT count(*) FROM %s" % t, ()),
           ("scan", "SELECT key, sample, length(raw) FROM %s" % t, ()),
           ("by key", "SELECT rowid, sample FROM %s WHERE key = ?" % t, ("r0",)),
           ("absent key", "SELECT rowid FROM %s WHERE key IN (?, ?)" % t, ("", "absent")),
           ("by rowid", "SELECT key, sample FROM %s WHERE rowid IN (0, 1, 2)" % t, ()),
           ("create", "CREATE VIRTUAL TABLE temp.t USING datadings(%s)" % sql_quote(path), ()),
           ("create scan", "SELECT * FROM temp.t", ()),
           ("create hidden", "SELECT * , sample, raw FROM temp.t", ())]
    if kind == "index" and has_md5:
        out.append(("verify", "SELECT * FROM datadings_verify(%s)" % sql_quote(path), ()))
    return out


def dd_child(build, path):
    """Run every query for one datadings input; one JSON result per query."""
    conn = connect(build)
    name = os.path.basename(path)
    kind = "sample" if name.startswith("sample-") else "index"
    with open(path, "rb") as f:
        data = f.read()
    with tempfile.TemporaryDirectory(prefix="datadings-fuzzreg-") as d:
        if kind == "sample":
            p, has_md5 = dd_write_sample_dataset(d, data), False
        else:
            p, has_md5 = dd_write_index_input(d, data)
        created = False
        for label, q, params in dd_queries(p, kind, has_md5):
            res = {"label": label}
            if label.startswith("create ") and not created:
                res["skipped"] = "CREATE failed"
                print(json.dumps(res), flush=True)
                continue
            try:
                res["rows"] = len(conn.execute(q, params).fetchall())
                created = created or label == "create"
            except sqlite3.Error as e:
                res["error"] = str(e)
            print(json.dumps(res), flush=True)
    conn.close()


def dd_main(build, C):
    C.check(os.path.isdir(DD_REG), "datadings regression folder exists", DD_REG)
    files = sorted(f for f in os.listdir(DD_REG)
                   if not f.endswith(".md") and not f.startswith(".")) if os.path.isdir(DD_REG) else []
    C.check(any(f.startswith("sample-") for f in files), "datadings: sample regressions exist")
    for name in files:
        path = os.path.join(DD_REG, name)
        if not name.startswith(("sample-", "index-")):
            C.check(False, "%s: named sample-* or index-*" % name)
            continue
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--dd-child", build, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        out = p.stdout.decode("utf-8", "replace")
        C.check(p.returncode == 0, "datadings %s: no crash" % name,
                "exit %d; stderr: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        with open(path, "rb") as f:
            data = f.read()
        has_md5 = name.startswith("index-") and bool(data[:1]) and bool(data[0] & 32)
        C.eq(len(results), 8 + (1 if has_md5 else 0), "datadings %s: every query ran" % name)
        create_failed = any(r["label"] == "create" and "error" in r for r in results)
        for r in results:
            what = "datadings %s: %s" % (name, r["label"])
            if "skipped" in r:
                C.check(create_failed, what + ": skipped only because CREATE failed", r)
            elif "error" in r:
                prefix = "datadings_verify: " if r["label"] == "verify" else "datadings: "
                C.check(r["error"].startswith(prefix), what + ": error starts with %r" % prefix,
                        r["error"])
            else:
                C.check(isinstance(r["rows"], int), what + ": succeeded", r)


# ------------------------------------------------------------------ npy

def npy_child(build, path):
    """Every npy_* function on one input; one JSON result per query."""
    conn = connect(build)
    with open(path, "rb") as f:
        blob = f.read()
    for q in NPY_QUERIES:
        res = {"query": q}
        try:
            res["value"] = conn.execute("SELECT " + q, (blob,)).fetchone()[0]
            if isinstance(res["value"], bytes):
                res["value"] = res["value"].hex()
        except sqlite3.Error as e:
            res["error"] = str(e)
        print(json.dumps(res), flush=True)
    conn.close()


def npy_main(build, C):
    C.check(os.path.isdir(NPY_REG), "npy regression folder exists", NPY_REG)
    files = sorted(f for f in os.listdir(NPY_REG)
                   if not f.endswith(".md") and not f.startswith(".")) if os.path.isdir(NPY_REG) else []
    C.check(len(files) > 0, "npy: regression inputs exist")
    try:
        import io
        import numpy as np
    except ImportError:
        np = None
    for name in files:
        path = os.path.join(NPY_REG, name)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--npy-child", build, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        C.check(p.returncode == 0, "npy %s: no crash" % name,
                "exit %d; stderr: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
        results = [json.loads(line) for line in p.stdout.decode("utf-8", "replace").splitlines()
                   if line.startswith("{")]
        C.eq([r["query"] for r in results], NPY_QUERIES, "npy %s: every query ran" % name)
        by = {r["query"]: r for r in results}
        for r in results:
            fn = r["query"].split("(")[0]
            if "error" in r:
                C.check(r["error"].startswith(fn + ": "), "npy %s: %s error starts with '%s: '"
                        % (name, r["query"], fn), r["error"])
        if np is None:
            continue
        try:
            with open(path, "rb") as f:
                a = np.load(io.BytesIO(f.read()), allow_pickle=False)
            want = json.dumps(a.tolist(), separators=(",", ":"), ensure_ascii=False)
        except Exception:
            continue  # numpy refuses it too
        C.eq(by["npy_json(?1)"].get("value"), want, "npy %s: npy_json is numpy's tolist()" % name)
        C.eq(by["npy_size(?1)"].get("value"), int(a.size), "npy %s: npy_size" % name)
        dt = by["npy_dtype(?1)"].get("value")
        if isinstance(dt, str) and dt.startswith("["):
            # field names as numpy decodes them (the types keep the header's
            # text, e.g. '|u2' where numpy says '<u2')
            C.eq([f[0] for f in ast.literal_eval(dt)], [f[0] for f in a.dtype.descr],
                 "npy %s: npy_dtype has numpy's field names" % name)
        else:
            C.eq(dt, a.dtype.str, "npy %s: npy_dtype is numpy's dtype.str" % name)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--dd-child":
        dd_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--sql-child":
        sql_child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif len(sys.argv) > 1 and sys.argv[1] == "--npy-child":
        npy_child(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "build")
