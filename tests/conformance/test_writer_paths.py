"""test_writer_paths.py - writer paths that are not one plain file (issue 20
item 7): a comma list, a `posix:` prefix, a path ending in a comma, `posix:`
alone. Each CREATE of a writer runs in its own sqlite3 shell (a crash there
must not end this test): it either works (`posix:x.ext` is x.ext, as for the
readers, and an INSERT + read back returns the row) or fails with a clear
error that starts with the module's name and names the path -- never a
crash. Every format is tried.
Usage: test_writer_paths.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, sql_quote  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
C = Checker()
TMP = tempfile.mkdtemp(prefix="ds_writer_paths_")
env = dict(os.environ)
if env.get("DS_PRELOAD"):
    env["LD_PRELOAD"] = env["DS_PRELOAD"]

# module, file name, columns option (the typed writers need one), value
FORMATS = [("bagz", "x.bagz", "", "record", "'r'"),
           ("datadings", "x.msgpack", "", "sample", "'{\"key\": \"k\", \"a\": 1}'"),
           ("atlas", "x_atlas", ", columns='a INTEGER'", "a", "7"),
           ("bcolz", "x.bcolz", ", columns='a i8'", "a", "7")]


def shell(sql):
    """Run sql in a fresh sqlite3 shell in TMP; (exit status, stdout, stderr)."""
    r = subprocess.run(["sqlite3", "-batch", ":memory:", ".load %s/datasets" % BUILD, sql],
                       capture_output=True, text=True, cwd=TMP, env=env, timeout=120)
    return r.returncode, r.stdout, r.stderr


for mod, name, cols, col, val in FORMATS:
    other = "y" + name[1:]
    for spec in ("%s,%s" % (name, other), "posix:%s,%s" % (name, other), name + ",",
                 "posix:", "posix:%s," % name):
        rc, out, err = shell("CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=create%s);"
                             % (mod, sql_quote(spec), cols))
        C.check(rc != 0 and err.startswith("Error") and ("%s: " % mod) in err and
                "free()" not in err and "Aborted" not in err and
                (spec.rstrip(",").split(",")[0].replace("posix:", "") in err or spec == "posix:"),
                "%s writer on %r: a clear error naming the path, no crash" % (mod, spec),
                "status %d, stderr %r" % (rc, err[-300:]))
    # posix:NAME is NAME, as for the readers
    shutil.rmtree(os.path.join(TMP, name), ignore_errors=True)
    rc, out, err = shell("CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=create%s);"
                         "INSERT INTO w(%s) VALUES (%s);"
                         "SELECT count(*) FROM %s(%s);"
                         % (mod, sql_quote("posix:" + name), cols, col, val, mod,
                            sql_quote(name)))
    C.check(rc == 0 and out.split() == ["1"] and os.path.exists(os.path.join(TMP, name)),
            "%s writer on 'posix:%s' writes %s" % (mod, name, name),
            "status %d, stdout %r, stderr %r" % (rc, out, err[-300:]))

shutil.rmtree(TMP)
C.exit()
