"""writer_proc.py - helpers of the publish tests (test_write_publish.py,
test_write_killed.py): run a writer in a child process (optionally under
the kill shim, build/shims/kill_shim.so, or a lowered descriptor limit),
and read a dataset back in a fresh connection as a sorted list of rows or
the error it raised."""
import os
import resource
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import connect, sql_quote  # noqa: E402

# module: (extension, insert columns, value SQL of row text v, read SQL)
FORMATS = {
    "bagz": (".bagz", "record", "{v}", "SELECT CAST(record AS TEXT) FROM bagz(?)"),
    "datadings": (".msgpack", "key, sample", "{v}, json_object('v', {v})",
                  "SELECT key FROM datadings(?)"),
    "atlas": (".atlas", "example", "json_object('v', {v})",
              "SELECT json_extract(example, '$.v') FROM atlas(?)"),
    "bcolz": (".bcolz", "value", "{v}", "SELECT trim(row, '\"') FROM bcolz(?)"),
    "tfrecord": (".tfrecord", "record", "{v}", "SELECT CAST(record AS TEXT) FROM tfrecord(?)"),
}


def create_sql(module, path, mode, options="", table="w"):
    return "CREATE VIRTUAL TABLE temp.%s USING %s(%s, mode=%s%s)" % (
        table, module, sql_quote(path), mode, (", " + options) if options else "")


def insert_sql(module, rows, table="w"):
    _, cols, value, _ = FORMATS[module]
    vals = ", ".join("(%s)" % value.replace("{v}", sql_quote(r)) for r in rows)
    return "INSERT INTO %s(%s) VALUES %s" % (table, cols, vals)


def run_writer(build, statements, kill_dir=None, kill_at=0, nofile=None, cwd=None,
               timeout=60, fail=None):
    """Run statements (each its own autocommit statement, or BEGIN/COMMIT) in
    a child process (the sqlite3 shell); returns (returncode, stderr text). returncode -9: the
    shim killed it. fail=(call, path end): that call fails once with EIO.
    A statement's error ends the child with 1 (the error in stderr)."""
    env = dict(os.environ)
    if kill_dir or fail:
        shim = os.path.abspath(os.path.join(build, "shims", "kill_shim.so"))
        env["LD_PRELOAD"] = (env.get("LD_PRELOAD", "") + " " + shim).strip()
        env["DS_KILL_DIR"] = kill_dir or ""
        env["DS_KILL_AT"] = str(kill_at)
    if fail:
        env["DS_FAIL_CALL"], env["DS_FAIL_END"] = fail

    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    # the stock shell starts faster than python3 (the kill test runs
    # hundreds); -bail: the first error ends it with status 1
    lib = os.path.abspath(os.path.join(build, "datasets"))
    r = subprocess.run(["sqlite3", "-bail", ":memory:", "-cmd", ".load " + lib] + statements,
                       env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, preexec_fn=limit)
    return r.returncode, r.stderr


def read_rows(build, module, path):
    """Sorted row texts of the dataset at path, or ('error', message)."""
    conn = connect(build)
    try:
        rows = conn.execute(FORMATS[module][3], (path,)).fetchall()
        return sorted(str(r[0]) if not isinstance(r[0], bytes) else r[0].decode()
                      for r in rows)
    except sqlite3.Error as e:
        return ("error", str(e))
    finally:
        conn.close()


def listing(d):
    """Every path below d (relative), with file bytes, for before/after."""
    out = {}
    for root, dirs, files in os.walk(d):
        for x in dirs:
            out[os.path.relpath(os.path.join(root, x), d) + "/"] = None
        for x in files:
            q = os.path.join(root, x)
            if not os.path.isfile(q) or os.path.islink(q):  # a FIFO would block
                out[os.path.relpath(q, d)] = "special"
                continue
            try:
                out[os.path.relpath(q, d)] = open(q, "rb").read()
            except OSError:
                out[os.path.relpath(q, d)] = "unreadable"
    return out
