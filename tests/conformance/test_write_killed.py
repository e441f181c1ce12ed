"""test_write_killed.py - a writer SIGKILLed at every file-system step of
its work (issue 20): the kill shim (tests/shims/kill_shim.c, LD_PRELOAD)
kills the writer process just before its Nth rename, link, unlink, rmdir,
mkdir, fsync or ftruncate under the test folder, for N = 1, 2, ... until
the writer runs to its end. Walked for a create, a replace, and a second
commit of the same writer table, for bagz (one file, name@N, name@* with
rows_per_shard), datadings, atlas, bcolz and tfrecord (one file,
name@N, gzip name@* with rows_per_shard). After each kill a fresh
connection reads exactly the old rows, exactly the new rows, or gets an
error (never a mix, never a crash); then the next writer (mode=replace)
recovers and succeeds, and the folder holds the dataset's files and the
bystander file, unchanged, and nothing else (no temporaries, no ds-old
files, no journal). Bounded: 60 steps per walk at most, and the walks stop
after 150 seconds (what was walked is reported).
Usage: test_write_killed.py BUILD_DIR"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect  # noqa: E402
from writer_proc import create_sql, insert_sql, listing, read_rows, run_writer  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
# on tmpfs when there is one: thousands of fsyncs cost nothing there
TMP = os.path.realpath(tempfile.mkdtemp(prefix="ds_write_killed_",
                                        dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
MAX_STEPS = 60
DEADLINE = time.time() + 150

CASES = [("bagz", "k.bagz", ""), ("bagz", "k@3.bagz", ""),
         ("bagz", "k@*.bagz", "rows_per_shard=2"), ("datadings", "k.msgpack", ""),
         ("atlas", "k.atlas", ""), ("bcolz", "k.bcolz", ""),
         ("tfrecord", "k.tfrecord", ""), ("tfrecord", "k@2.tfrecord", ""),
         ("tfrecord", "k@*.tfrecord", "rows_per_shard=2, compression=gzip")]
OLD = ["o1", "o2", "o3", "o4", "o5"]
NEW = ["n1", "n2", "n3"]
MORE = ["m1", "m2"]
NEXT = ["x1", "x2", "x3", "x4"]
BYSTANDER = b"not the writer's"


def write_here(statements):
    """Run a writer's statements in this process (no shim)."""
    conn = connect(BUILD)
    conn.isolation_level = None
    for s in statements:
        conn.execute(s)
    conn.close()


def setup(d, module, path, opts, scenario):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    open(os.path.join(d, "bystander.txt"), "wb").write(BYSTANDER)
    if scenario == "replace":
        write_here([create_sql(module, path, "create", opts), insert_sql(module, OLD)])


def statements(module, path, opts, scenario):
    if scenario == "create":
        return [create_sql(module, path, "create", opts), insert_sql(module, NEW)]
    if scenario == "replace":
        return [create_sql(module, path, "replace", opts), insert_sql(module, NEW)]
    return [create_sql(module, path, "create", opts), insert_sql(module, OLD), insert_sql(module, MORE)]


def allowed(scenario):
    """The row sets a reader may see after a kill (besides an error)."""
    if scenario == "create":
        return [sorted(NEW)]
    if scenario == "replace":
        return [sorted(OLD), sorted(NEW)]
    return [sorted(OLD), sorted(OLD + MORE)]


def names_of(module, path, opts):
    """The names a dataset written by the next writer has (a reference)."""
    d = os.path.join(TMP, "reference")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    p = os.path.join(d, os.path.basename(path))
    write_here([create_sql(module, p, "create", opts), insert_sql(module, NEXT)])
    names = sorted(listing(d))
    shutil.rmtree(d)
    return names


walked = 0
for module, name, opts in CASES:
    for scenario in ("create", "replace", "second"):
        label = "%s %s %s" % (module, name, scenario)
        d = os.path.join(TMP, "case")
        path = os.path.join(d, name)
        reference = names_of(module, path, opts) + ["bystander.txt"]
        bad, unrecovered, kills, finished = [], [], 0, False
        for n in range(1, MAX_STEPS + 1):
            if time.time() > DEADLINE:
                break
            setup(d, module, path, opts, scenario)
            rc, err = run_writer(BUILD, statements(module, path, opts, scenario), kill_dir=d, kill_at=n)
            if rc != -9:
                finished = rc == 0
                if not finished:
                    bad.append((n, "the writer failed without a kill: %s" % err.strip()[-300:]))
                break
            kills += 1
            got = read_rows(BUILD, module, path)
            if not (isinstance(got, tuple) or got in allowed(scenario)):
                bad.append((n, got))
            # the next writer recovers and succeeds
            try:
                write_here([create_sql(module, path, "replace", opts), insert_sql(module, NEXT)])
                now = read_rows(BUILD, module, path)
                names = sorted(set(listing(d)) | {"bystander.txt"})
                ok = (now == sorted(NEXT) and names == sorted(reference) and
                      open(os.path.join(d, "bystander.txt"), "rb").read() == BYSTANDER)
                if not ok:
                    unrecovered.append((n, now, [x for x in names if x not in reference]))
            except Exception as e:  # noqa: BLE001 - any failure is the finding
                unrecovered.append((n, str(e)))
        walked += kills
        if not finished and time.time() > DEADLINE:
            print("note: %s: time cap reached after %d kill points" % (label, kills))
            continue
        C.check(finished and kills > 0, "%s: killed at each of its %d steps, then ran to the end" %
                (label, kills), bad[-1:] if bad else "")
        C.eq(bad, [], "%s: after every kill: the old rows, the new rows or an error" % label)
        C.eq(unrecovered, [], "%s: after every kill the next writer recovers: its rows, the "
             "dataset's names and the bystander, nothing else" % label)
print("note: %d kill points walked" % walked)
shutil.rmtree(TMP, ignore_errors=True)
C.exit()
