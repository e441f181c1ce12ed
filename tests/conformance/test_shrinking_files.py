"""test_shrinking_files.py - a dataset file that shrinks while a table reads
it (issue 11, items 1 and 2) must give an error naming the file, never kill
the process (a read of a mapping past the new end of a file is SIGBUS).

Each case runs in a child process, so a crash is a FAIL here, not a dead
test runner. The child opens a copy of a fixture, then either
  scan: starts a scan, fetches 50 rows, shrinks a file, fetches the rest; or
  next: runs one statement, shrinks a file, runs the next statement at once
        (well within the 100 ms in which a reader trusts its files);
in both forms (table-valued and CREATE), to 0 bytes and to one page, with
read-ahead threads on and off where the module has them, and with the
truncation done in the child itself or by another process.
Usage: test_shrinking_files.py BUILD"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, ROOT, Checker, sql_quote  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
C = Checker()
tmp = tempfile.mkdtemp(prefix="ds-shrink-")

CHILD = r"""
import os, sqlite3, subprocess, sys
build, module, path, opts, victims, mode, size, form, other, query = sys.argv[1:11]
victims = victims.split(",")
conn = sqlite3.connect(":memory:")
conn.enable_load_extension(True)
conn.load_extension(os.path.join(build, "datasets"))
q = lambda s: "'" + s.replace("'", "''") + "'"
if form == "create":
    extra = (", " + opts) if opts else ""
    conn.execute("CREATE VIRTUAL TABLE temp.t USING %s(%s%s)" % (module, q(path), extra))
    table = "temp.t"
else:
    table = "%s(%s%s)" % (module, q(path), (", " + q(opts)) if opts else "")
sql = query % table
def shrink():
    for v in victims:
        n = min(int(size), os.path.getsize(v))  # shrink, never grow
        if other == "1":
            subprocess.run(["truncate", "-s", str(n), v], check=True)
        else:
            os.truncate(v, n)
try:
    if mode == "scan":
        cur = conn.execute(sql)
        first = cur.fetchmany(50)
        shrink()
        rest = cur.fetchall()
        print("OK", len(first) + len(rest))
    else:
        n = len(conn.execute(sql).fetchall())
        shrink()
        n2 = len(conn.execute(sql).fetchall())
        print("OK", n, n2)
except sqlite3.Error as e:
    print("ERR", e)
"""

# module, fixture, dataset path in the copy, files to shrink, option sets, query
CASES = [
    ("bagz", "bagz/mid.bagz", "mid.bagz", ["mid.bagz"], ["threads=1", "threads=2"],
     "SELECT rowid, length(record) FROM %s"),
    ("datadings", "datadings/mid", "mid.msgpack", ["mid.msgpack"], [""],
     "SELECT key, length(sample) FROM %s"),
    ("datadings", "datadings/mid", "mid.msgpack", ["mid.msgpack.offsets"], [""],
     "SELECT rowid, length(sample) FROM %s"),
    ("datadings", "datadings/mid", "mid.msgpack", ["mid.msgpack.keys"], [""],
     "SELECT key FROM %s"),
    ("atlas", "atlas/mid", ".", ["0/data.bin", "1/data.bin", "2/data.bin"],
     ["threads=1", "threads=2"], "SELECT example FROM %s"),
    ("bcolz", "bcolz/small_chunklen", ".", None, [""], "SELECT * FROM %s"),
]


def copy_fixture(fixture, dest):
    src = os.path.join(FIXTURES, fixture)
    if os.path.isdir(src):
        shutil.copytree(src, dest)
        return dest
    os.makedirs(dest)
    shutil.copy(src, dest)
    return dest


def bcolz_chunks(d):
    out = []
    for top, _, files in os.walk(d):
        out += [os.path.join(top, f) for f in files if f.endswith(".blp")]
    return sorted(out)


n = 0
for module, fixture, rel, victims, optsets, query in CASES:
    for opts in optsets:
        for form in ("tvf", "create"):
            for mode in ("scan", "next"):
                for size in ("0", "4096"):
                    n += 1
                    d = copy_fixture(fixture, os.path.join(tmp, "c%d" % n))
                    path = os.path.join(d, rel) if rel != "." else d
                    files = [os.path.join(d, v) for v in victims] if victims else bcolz_chunks(d)
                    other = "1" if size == "4096" else "0"
                    name = "%s %s%s %s %s shrink %s to %s bytes%s" % (
                        module, form, " " + opts if opts else "", mode, query.split(" FROM")[0],
                        ",".join(os.path.basename(f) for f in files[:2]), size,
                        " (another process)" if other == "1" else "")
                    p = subprocess.run(
                        [sys.executable, "-c", CHILD, BUILD, module, path, opts, ",".join(files),
                         mode, size, form, other, query],
                        capture_output=True, text=True, timeout=120)
                    out = p.stdout.strip()
                    if p.returncode != 0:
                        C.check(False, name + ": the process lives",
                                "exit %d %s" % (p.returncode, p.stderr.strip()[-300:]))
                        continue
                    if out.startswith("ERR "):
                        msg = out[4:]
                        named = any(os.path.basename(f) in msg for f in files) or path in msg
                        C.check(msg.startswith(module + ": ") and named,
                                name + ": an error naming the file", msg)
                    else:
                        # Only rows read before the change may come back.
                        C.check(out.startswith("OK"), name + ": an error or the rows", out)
                    shutil.rmtree(d)

shutil.rmtree(tmp)
C.exit()
