"""test_dataset_info.py - dataset_info(path) and the `dataset` module over
every upstream fixture dataset of the four formats.

For each dataset listed by an expected/*.json (read back by the real
upstream readers) this checks what dataset_info detects and reports against
that file: the format, the row count, shards and rows per shard, the
format's own metadata (bagz limits placement; datadings salt and Bloom
filter parameters; atlas strategies, block size, dictionaries and index
dtype; bcolz kind, chunklen, cparams, the Blosc header of the first chunk
and attrs); bytes_on_disk against the sizes the file system gives; columns
against PRAGMA table_info of the format's own CREATE form; and that
CREATE VIRTUAL TABLE ... USING dataset(path, ...) returns the same rows as
the format's module with the same options.
Usage: test_dataset_info.py BUILD_DIR"""
import glob
import json
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, Checker, connect, sql_quote  # noqa: E402

C = Checker()
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
conn = connect(BUILD)
_n = [0]


def load(fmt, name):
    with open(os.path.join(FIXTURES, fmt, "expected", name)) as f:
        return json.load(f)


def info(path, options=None):
    """dataset_info as a dict; JSON-valued properties decoded."""
    args = sql_quote(path) + ("" if options is None else ", " + sql_quote(options))
    out = {}
    for prop, value, is_json in conn.execute(
            "SELECT property, value, CASE WHEN typeof(value) = 'text' AND json_valid(value) "
            "THEN json_type(value) IN ('object', 'array') ELSE 0 END "
            "FROM dataset_info(%s)" % args):
        out[prop] = json.loads(value) if isinstance(value, str) and is_json else value
    return out


def create_args(path, options):
    return ", ".join([sql_quote(path)] + [sql_quote(o) for o in options])


def pragma_columns(module, path, options):
    _n[0] += 1
    t = "pc%d" % _n[0]
    conn.execute("CREATE VIRTUAL TABLE temp.%s USING %s(%s)"
                 % (t, module, create_args(path, options)))
    cols = {name: typ for _, name, typ, *_ in conn.execute("PRAGMA table_info(%s)" % t)}
    names = [r[1] for r in conn.execute("PRAGMA table_info(%s)" % t)]
    conn.execute("DROP TABLE temp.%s" % t)
    return cols, names


def all_rows(module, path, options):
    """Every row (rowid first) of a CREATE-form table, or the error text."""
    _n[0] += 1
    t = "rt%d" % _n[0]
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.%s USING %s(%s)"
                     % (t, module, create_args(path, options)))
    except sqlite3.Error as e:
        return "create error: " + str(e).split(": ", 1)[-1]
    try:
        return conn.execute("SELECT rowid, * FROM %s" % t).fetchall()
    except sqlite3.Error as e:
        return "error: " + str(e)
    finally:
        conn.execute("DROP TABLE temp.%s" % t)


def common(name, module, path, got, rows, shards, nbytes, options=(), shard_rows=None,
           readable=True):
    """Checks every format shares; options go to the CREATE forms. An
    unreadable dataset must fail the same way through both modules."""
    C.eq(got.get("format"), module, name + " format")
    C.eq(got.get("rows"), rows, name + " rows")
    C.eq(got.get("shards"), shards, name + " shards")
    C.eq(got.get("bytes_on_disk"), nbytes, name + " bytes_on_disk")
    if shard_rows is not None:
        C.eq(got.get("shard_rows"), shard_rows, name + " shard_rows")
    cols, names = pragma_columns(module, path, options)
    C.eq(got.get("columns"), cols, name + " columns = PRAGMA table_info of %s()" % module)
    C.eq(list(got.get("columns", {})), names, name + " columns in table order")
    want = all_rows(module, path, options)
    if readable:
        C.check(not isinstance(want, str) and len(want) == rows, name + " explicit module reads",
                want if isinstance(want, str) else len(want))
    else:
        C.check(isinstance(want, str) and want.startswith("error: " + module + ": "),
                name + " explicit module fails to read", want)
    C.eq(all_rows("dataset", path, options), want, name + " dataset() rows = %s() rows" % module)


def size(p):
    return os.path.getsize(p)


def tree_bytes(d):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs
               if os.path.isfile(os.path.join(r, f)) and not os.path.islink(os.path.join(r, f)))


# ---------------------------------------------------------------- bagz

def check_bagz():
    d = os.path.join(FIXTURES, "bagz")
    for jf in sorted(os.listdir(os.path.join(d, "expected"))):
        e = load("bagz", jf)
        name = "bagz/" + jf
        if jf == "forced.json":  # two files, each read with every compression
            for fname, per in sorted(e.items()):
                if fname == "writer":
                    continue
                path = os.path.join(d, fname)
                for comp in ("none", "zstd"):
                    n = "%s %s compression=%s" % (name, fname, comp)
                    got = info(path, "compression=" + comp)
                    C.eq(got.get("compression"), comp, n + " compression")
                    readable = "error" not in per[comp]["rows_single_read"][0]
                    common(n, "bagz", path, got, per[comp]["count"], 1, per["file_size"],
                           ["compression=" + comp], readable=readable)
                C.eq(info(path).get("compression"), "zstd" if fname.endswith(".bagz") else "none",
                     "%s %s auto compression follows the name" % (name, fname))
            continue
        if "filespec" in e:
            path = os.path.join(d, e["filespec"])
            files = [os.path.join(d, f) for f in e["shard_files"]]
            limits = [os.path.join(d, f) for f in e.get("limits_files", [])]
            rows = e.get("count", sum(e.get("shard_sizes", [])))
        else:
            path = os.path.join(d, e["file"])
            files = [path]
            limits = [os.path.join(d, e["limits_file"])] if "limits_file" in e else []
            rows = e["count"]
        placement = e.get("reader_options", {}).get("limits_placement", "TAIL")
        options = []
        if "dictionary_file" in e:
            options.append("dictionary=" + os.path.join(d, e["dictionary_file"]))
        got = info(path, ",".join(options) or None)
        C.eq(got.get("limits"), "separate" if limits else "tail", name + " limits detected")
        C.eq(got.get("limits"), placement.lower(), name + " limits = upstream's placement")
        C.eq(got.get("files"), files, name + " files")
        C.eq(got.get("compression"), "zstd" if path.endswith(".bagz") else "none",
             name + " compression")
        C.eq(got.get("layout"), "concatenated", name + " layout")
        common(name, "bagz", path, got, rows, len(files),
               sum(size(f) for f in files + limits),
               options + (["limits=separate"] if limits else []),
               e.get("shard_sizes"))
        for variant, count in sorted(e.get("filespec_variants", {}).items()):
            v = info(",".join(os.path.join(d, x) for x in variant.split(",")))
            C.eq((v.get("format"), v.get("rows"), v.get("shards")),
                 ("bagz", count["count"], len(files)), name + " spec variant " + variant)
        for layout, lay in sorted(e.get("layouts", {}).items()):
            n = "%s layout=%s" % (name, layout.lower())
            opt = "layout=" + layout.lower()
            if "error" in lay:  # upstream refuses the layout: so does dataset_info
                C.raises(lambda: info(path, opt), n + " refused like upstream",
                         "dataset_info: bagz: ", "interleaved layout needs")
                continue
            got = info(path, opt)
            C.eq((got.get("rows"), got.get("layout")), (lay["count"], layout.lower()), n)
            C.eq(all_rows("dataset", path, [opt]), all_rows("bagz", path, [opt]),
                 n + " dataset() rows = bagz() rows")


# ----------------------------------------------------------- datadings

def check_datadings():
    d = os.path.join(FIXTURES, "datadings")
    for jf in sorted(os.listdir(os.path.join(d, "expected"))):
        e = load("datadings", jf)
        case = jf[:-5]
        name = "datadings/" + jf
        if "glob" in e:
            path = os.path.join(d, case, e["glob"])
            data = [os.path.join(d, case, f) for f in e["shards"]]
        else:
            path = os.path.join(d, case, e["data_file"])
            data = [path]
        files = [f for x in data for f in [x] + glob.glob(glob.escape(x) + ".*")]
        got = info(path)
        C.eq(got.get("files"), data, name + " files")
        C.eq(got.get("compression"), "none", name + " compression")
        new = [os.path.exists(x + ".offsets") for x in data]
        C.eq(got.get("index_style"), "new" if all(new) else "legacy", name + " index_style")
        if "key_hashes" in e:
            C.eq(got.get("salt"), e["key_hashes"]["salt_hex"], name + " salt")
        elif "glob" not in e:
            C.eq(got.get("salt"), None, name + " no salt without .key_hashes")
        b = e.get("bloom")
        if b:
            C.eq((got.get("filter_bits"), got.get("filter_hashes"), got.get("filter_capacity"),
                  got.get("filter_fp_rate")),
                 (b["num_bits"], b["num_hashes"], b["num_elements"], b["false_positive_prob"]),
                 name + " Bloom filter bits, hashes, capacity, rate")
        elif "glob" not in e:
            C.eq(got.get("filter_bits"), None, name + " no filter")
        if "glob" in e:  # one value per shard (they differ in size)
            fb = got.get("filter_bits")
            C.check(isinstance(fb, list) and len(fb) == len(data), name + " per-shard filter_bits", fb)
        C.eq(got.get("lookup"), "filter+key_hashes" if e.get("contains_supported", True)
             else "index", name + " lookup")
        common(name, "datadings", path, got, e["n"], len(data),
               sum(size(f) for f in files), [], e.get("shard_sizes", [e["n"]]))
    # options reach the CREATE form: infer=0 and columns= change the columns
    path = os.path.join(d, "basic", "basic.msgpack")
    got = info(path, "columns='label INTEGER, text TEXT'")
    C.eq(got.get("columns"), {"key": "TEXT", "label": "INTEGER", "text": "TEXT"},
         "datadings columns= option reaches the declared columns")


# --------------------------------------------------------------- atlas

def check_atlas():
    d = os.path.join(FIXTURES, "atlas")
    for jf in sorted(os.listdir(os.path.join(d, "expected"))):
        e = load("atlas", jf)
        name = "atlas/" + jf
        path = os.path.join(d, e["path"])
        shards = e["shards"]
        got = info(path)
        C.eq(got.get("kind"), e["kind"], name + " kind")
        strategy = e["root_meta"]["compression_strategy"] if e["kind"] == "dataset" \
            else shards[0]["meta"]["compression_strategy"]
        C.eq(got.get("strategy"), strategy, name + " strategy")
        C.eq(got.get("compression"), ["none", "zstd", "zstd, shared dictionary",
                                      "zstd, per-shard dictionaries"][strategy],
             name + " compression")

        def per_shard(vals):
            return vals[0] if len(set(map(json.dumps, vals))) == 1 else vals
        C.eq(got.get("shard_strategy"),
             per_shard([s["meta"]["compression_strategy"] for s in shards]), name + " shard_strategy")
        C.eq(got.get("block_size"), per_shard([s["meta"]["block_size"] for s in shards]),
             name + " block_size")
        C.eq(got.get("compression_level"),
             per_shard([s["meta"].get("compression_level", 0) for s in shards]),
             name + " compression_level")
        C.eq(got.get("index_dtype"), per_shard([s["index"]["dtype"] for s in shards]),
             name + " index_dtype")
        C.eq(got.get("shard_dirs"), [s["dir"] for s in shards], name + " shard_dirs")
        want = []
        if e.get("root_zstd_dict", {}).get("present"):
            want.append({"file": os.path.join(path, "zstd_dict.bin"),
                         "dict_id": e["root_zstd_dict"]["dict_id"],
                         "shards": [i for i, s in enumerate(shards)
                                    if s["meta"]["compression_strategy"] == 2]})
        for i, s in enumerate(shards):
            if s["zstd_dict"].get("present"):
                f = os.path.join(path, "zstd_dict.bin") if s["dir"] == "." else \
                    os.path.join(path, s["dir"], "zstd_dict.bin")
                want.append({"file": f, "dict_id": s["zstd_dict"]["dict_id"], "shards": [i]})
        C.eq(got.get("dictionaries"), want, name + " dictionaries")
        # exotic holds a self-containing list no table can return: both
        # modules must fail on it alike (and placeholders must pass through)
        options = ["unsupported=placeholder"] if jf == "exotic.json" else []
        common(name, "atlas", path, got, e["length"], len(shards), tree_bytes(path),
               options, e["shard_sizes_reader"], readable=jf != "exotic.json")


# --------------------------------------------------------------- bcolz

def check_bcolz():
    d = os.path.join(FIXTURES, "bcolz")
    for jf in sorted(os.listdir(os.path.join(d, "expected"))):
        e = load("bcolz", jf)
        name = "bcolz/" + jf
        path = os.path.join(d, e["fixture"])
        if "upstream_error" in e:  # upstream cannot open it; neither do we
            C.raises(lambda: info(path), name + " refused like upstream", "dataset_info: bcolz: ",
                     path)
            continue
        got = info(path)
        C.eq(got.get("kind"), e["kind"], name + " kind")
        cols = e["columns"]
        C.eq(list(got.get("columns", {})), e["names"], name + " column names = upstream's")
        C.eq(got.get("chunklen"), {c["name"]: c["chunklen"] for c in cols}, name + " chunklen")
        C.eq(got.get("dtypes"), {c["name"]: c["dtype"] for c in cols}, name + " dtypes")
        C.eq(got.get("attrs"), e["attrs"], name + " attrs")
        if e["kind"] == "ctable":
            C.eq(got.get("column_attrs"), {c["name"]: c["attrs"] for c in cols},
                 name + " column_attrs")
        cp = got.get("cparams") or {}
        C.eq({k: {x: v[x] for x in ("clevel", "shuffle", "cname", "quantize")}
              for k, v in cp.items()},
             {c["name"]: c["cparams"] for c in cols}, name + " cparams = upstream's")
        want_blosc = {}
        for c in cols:
            if not c["chunk_files"]:
                want_blosc[c["name"]] = None
                continue
            h = c["chunk_files"][0]["blosc"]
            want_blosc[c["name"]] = {
                "codec": "lz4" if h["codec"] == "lz4/lz4hc" else h["codec"],
                "shuffle": "bit" if h["bitshuffle"] else "byte" if h["shuffle"] else "none",
                "memcpyed": h["memcpyed"], "typesize": h["typesize"]}
        C.eq({k: v.get("blosc") for k, v in cp.items()}, want_blosc,
             name + " Blosc header of chunk 0")
        cnames = []
        for c in cols:
            if c["cparams"]["cname"] not in cnames:
                cnames.append(c["cparams"]["cname"])
        C.eq(got.get("compression"), "blosc:" + ",".join(cnames), name + " compression")
        common(name, "bcolz", path, got, e["len"], 1, tree_bytes(path))
    path = os.path.join(d, "ctable_basic")
    C.eq(info(path, "bytes=blob").get("columns", {}).get("name"), "BLOB",
         "bcolz bytes=blob reaches the declared columns")
    C.eq(all_rows("dataset", path, ["bytes=blob"]), all_rows("bcolz", path, ["bytes=blob"]),
         "bcolz dataset(bytes=blob) rows = bcolz(bytes=blob) rows")


# -------------------------------------------------------------- errors

def check_errors():
    with tempfile.TemporaryDirectory() as empty:
        C.raises(lambda: info(empty), "empty directory is not a dataset",
                 "dataset_info: %s: not a dataset: looked for __rootdirs__" % empty,
                 "meta.json")
        C.raises(lambda: conn.execute("CREATE VIRTUAL TABLE temp.e USING dataset(%s)"
                                      % sql_quote(empty)),
                 "dataset over an empty directory", "dataset: %s: not a dataset" % empty)
        plain = os.path.join(empty, "notes.txt")
        with open(plain, "w") as f:
            f.write("hello, this is not a dataset\n")
        C.raises(lambda: info(plain), "a text file is not a dataset",
                 "%s: not a dataset: looked for a .tfrecord or .tfrecords name, or a first record "
                 "header with a good length CRC (tfrecord), notes.txt.offsets or "
                 "notes.txt.index" % plain,
                 "limits.notes.txt")
    # bagz files under other names: found by limits.NAME or by the limits tail
    with tempfile.TemporaryDirectory() as tmp:
        b = os.path.join(FIXTURES, "bagz")
        shutil.copy(os.path.join(b, "plain.bag"), os.path.join(tmp, "records.dat"))
        shutil.copy(os.path.join(b, "separate.bagz"), os.path.join(tmp, "sep.dat"))
        shutil.copy(os.path.join(b, "limits.separate.bagz"), os.path.join(tmp, "limits.sep.dat"))
        with open(os.path.join(tmp, "junk.dat"), "wb") as f:
            f.write(bytes(range(256)) * 3)
        plain = load("bagz", "plain.json")
        got = info(os.path.join(tmp, "records.dat"))
        C.eq((got.get("format"), got.get("limits"), got.get("rows")), ("bagz", "tail", plain["count"]),
             "a bagz file with another name is found by its limits tail")
        sep = load("bagz", "separate.json")
        got = info(os.path.join(tmp, "sep.dat"))
        C.eq((got.get("format"), got.get("limits"), got.get("rows")),
             ("bagz", "separate", sep["count"]), "a bagz file is found by limits.NAME beside it")
        C.raises(lambda: info(os.path.join(tmp, "junk.dat")), "bytes without a valid limits tail",
                 "junk.dat: not a dataset")
        # a datadings file under another name is found by its index files
        dd = os.path.join(FIXTURES, "datadings", "basic", "basic.msgpack")
        for suffix in ("", ".offsets", ".keys"):
            shutil.copy(dd + suffix, os.path.join(tmp, "samples" + suffix))
        got = info(os.path.join(tmp, "samples"))
        C.eq((got.get("format"), got.get("rows"), got.get("salt")),
             ("datadings", load("datadings", "basic.json")["n"], None),
             "datadings without .key_hashes: found by .offsets, no salt")
    C.raises(lambda: info(os.path.join(FIXTURES, "missing.bagz")), "missing path",
             "dataset_info: %s: no such file or directory" % os.path.join(FIXTURES, "missing.bagz"))
    # the JSON values carry SQLite's JSON subtype
    path = os.path.join(FIXTURES, "bagz", "zstd.bagz")
    C.eq(conn.execute("SELECT value ->> '$.record' FROM dataset_info(?) "
                      "WHERE property = 'columns'", (path,)).fetchall(), [("BLOB",)],
         "columns is JSON")


def connect_file(db):
    c = sqlite3.connect(db)
    c.enable_load_extension(True)
    c.load_extension(os.path.join(BUILD, "datasets"))
    return c


def check_reopen():
    """A dataset table in a database file detects again when reopened."""
    e = load("atlas", "none.json")
    path = os.path.join(FIXTURES, "atlas", e["path"])
    want = (len(e["examples"]), sum(x["value"]["label"] for x in e["examples"]))
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "t.db")
        c = connect_file(db)
        c.execute("CREATE VIRTUAL TABLE t USING dataset(%s)" % sql_quote(path))
        c.commit()
        c.close()
        c = connect_file(db)
        C.eq(c.execute("SELECT count(*), sum(label) FROM t").fetchone(), want,
             "dataset table after reopening the database file")
        c.execute("DROP TABLE t")
        C.eq(c.execute("SELECT count(*) FROM sqlite_master").fetchone(), (0,),
             "dataset table dropped")
        c.close()


for fn in (check_reopen, check_bagz, check_datadings, check_atlas, check_bcolz, check_errors):
    C.run(fn)
C.exit()
