"""test_datasets_help.py - datasets_help() (issue 22 item 13) in every
library: its module and function rows are exactly the modules and
functions the library registers (compared both ways with SQLite's own
pragma_module_list / pragma_function_list, less those of a connection
without the library); every module's options have a row with a default;
the version rows are those the libraries report themselves (asked here
through ctypes, and Python's SQLite), and a per-format library reports
only the codec libraries it links (readelf -d NEEDED) and lists no other
format's module.
Usage: test_datasets_help.py BUILD_DIR"""
import ctypes
import os
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker  # noqa: E402

BUILD = sys.argv[1]
C = Checker()

# codec library -> (its soname prefix, its version call)
CODECS = {"zstd": ("libzstd.so", "ZSTD_versionString"),
          "c-blosc": ("libblosc.so", "blosc_get_version_string"),
          "msgpack-c": ("libmsgpackc.so", "msgpack_version"),
          "protobuf-c": ("libprotobuf-c.so", "protobuf_c_version")}
FORMAT_MODULES = {"bagz": {"bagz"}, "datadings": {"datadings"}, "atlas": {"atlas"},
                  "bcolz": {"bcolz"}}


def connect(lib):
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    if lib:
        conn.load_extension(os.path.join(BUILD, lib))
    return conn


def registered(lib):
    """The modules and functions lib adds to a connection."""
    def names(conn):
        mods = {r[0] for r in conn.execute("SELECT name FROM pragma_module_list")}
        funcs = {r[0] for r in conn.execute("SELECT name FROM pragma_function_list")}
        return mods, funcs
    base_m, base_f = names(connect(None))
    m, f = names(connect(lib))
    # the writer registry's per-connection hook (vtab/writer_registry.c) is
    # internal: not something a user calls
    f = {n for n in f if not n.startswith("ds_writer_tables_")}
    return m - base_m, f - base_f


def needed(lib):
    out = subprocess.run(["readelf", "-d", os.path.join(BUILD, lib + ".so")],
                         capture_output=True, text=True, check=True).stdout
    return [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def codec_version(name, sonames):
    prefix, call = CODECS[name]
    so = next(s for s in sonames if s.startswith(prefix))
    fn = getattr(ctypes.CDLL(so), call)
    fn.restype = ctypes.c_char_p
    return fn().decode()


def check_library(lib):
    conn = connect(lib)
    rows = conn.execute("SELECT kind, module, name, value, help FROM datasets_help()").fetchall()
    kinds = {}
    for kind, module, name, value, hlp in rows:
        kinds.setdefault(kind, []).append((module, name, value, hlp))
    C.eq([n for _, n, _, _ in kinds.get("library", [])], [lib], lib + ": says which library")
    mods, funcs = registered(lib)
    listed_m = {n for _, n, _, _ in kinds.get("module", [])}
    listed_f = {n for _, n, _, _ in kinds.get("function", [])}
    # a table-valued function is a module to SQLite and a function to a user
    C.eq(listed_m | listed_f, mods | funcs, lib + ": one row per module and function registered")
    C.check(all(v for _, _, v, _ in kinds.get("module", []) + kinds.get("function", [])),
            lib + ": each module and function has a usage")
    for mod in listed_m - {"dataset"}:
        opts = [(n, v) for m, n, v, _ in kinds.get("option", []) if m == mod]
        C.check(any(n == "max_value_bytes" for n, _ in opts) and len(opts) > 3,
                "%s: %s lists its options" % (lib, mod), opts)
        C.check(all(v is not None for _, v in opts), "%s: %s options have defaults" % (lib, mod))
    if lib != "datasets":
        C.eq(listed_m - {"datasets_help", "datadings_verify", "bcolz_attrs", "bcolz_stats"},
             FORMAT_MODULES[lib], lib + ": lists only its own format's module")
    versions = {n: v for _, n, v, _ in kinds.get("version", [])}
    C.eq(versions.get("SQLite"), sqlite3.sqlite_version, lib + ": SQLite's version")
    sonames = needed(lib)
    linked = {name for name, (prefix, _) in CODECS.items()
              if any(s.startswith(prefix) for s in sonames)}
    C.eq(set(versions) - {"SQLite"}, linked, lib + ": versions of exactly the codecs it links")
    for name in linked & set(versions):
        C.eq(versions[name], codec_version(name, sonames), "%s: %s version" % (lib, name))


for library in ["datasets", "bagz", "datadings", "atlas", "bcolz"]:
    C.run(check_library, library, name=library)
# the per-format libraries link what they did before datasets_help()
C.eq(set(needed("bagz")) & {"libblosc.so.1", "libmsgpackc.so.2"}, set(),
     "bagz.so links neither c-blosc nor msgpack-c")
C.exit()
