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
from dstest import Checker, connect  # noqa: E402
from writer_proc import FORMATS, create_sql, insert_sql, listing, read_rows, run_writer  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = os.path.realpath(tempfile.mkdtemp(prefix="ds_write_publish_"))


def fresh(name):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def theirs(d):
    """listing(d) less the writers' own names (.ds-tmp, .ds-lock, ...)."""
    return {k: v for k, v in listing(d).items() if ".ds-" not in k}


def commit_fails(conn, name, *needles):
    C.raises(lambda: conn.execute("COMMIT"), name, *needles)
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def leftovers(d):
    return sorted(x for x in os.listdir(d) if ".ds-" in x)


def section_0():
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


def section_1():
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


def section_2():
    # 4. errors at COMMIT are seen. A directory where bagz would publish,
    # appearing after CREATE: COMMIT fails (xSync), the directory untouched.




    d = fresh("dir_at_target")
    x = os.path.join(d, "d.bagz")
    run_writer(BUILD, [create_sql("bagz", x, "create"), insert_sql("bagz", ["old"])])
    conn = connect(BUILD)
    conn.isolation_level = None
    conn.execute(create_sql("bagz", x, "replace"))
    conn.execute("BEGIN")
    conn.execute(insert_sql("bagz", ["new"]))
    os.unlink(x)
    os.makedirs(os.path.join(x, "inside"))
    before = theirs(d)
    commit_fails(conn, "4: bagz replace where d.bagz became a directory: COMMIT fails", "d.bagz",
                 "a directory is there")
    C.eq(theirs(d), before, "4: the directory and everything else untouched")
    conn.close()
    # datadings: x.msgpack.md5 a non-empty directory (after CREATE): the old
    # dataset stays whole
    d = fresh("md5_dir")
    x = os.path.join(d, "x.msgpack")
    run_writer(BUILD, [create_sql("datadings", x, "create"), insert_sql("datadings", ["o1", "o2"])])
    os.unlink(x + ".md5")
    os.makedirs(os.path.join(x + ".md5", "sub"))
    open(os.path.join(x + ".md5", "sub", "f"), "w").write("keep")
    before = theirs(d)
    conn = connect(BUILD)
    conn.isolation_level = None
    C.raises(lambda: conn.execute(create_sql("datadings", x, "replace")),
             "6: datadings replace refuses x.msgpack.md5 that is a directory, at CREATE",
             "x.msgpack.md5", "a directory is there")
    conn.close()  # (a writer that took the path holds its lock until then)
    conn = connect(BUILD)
    conn.isolation_level = None
    shutil.rmtree(x + ".md5")
    conn.execute(create_sql("datadings", x, "replace", table="w2"))
    conn.execute("BEGIN")
    conn.execute(insert_sql("datadings", ["n1"], table="w2"))
    os.makedirs(os.path.join(x + ".md5", "sub"))
    open(os.path.join(x + ".md5", "sub", "f"), "w").write("keep")
    commit_fails(conn, "4: datadings replace, x.msgpack.md5 a directory after CREATE: COMMIT fails",
                 "x.msgpack.md5", "a directory is there")
    C.eq(theirs(d), before, "4: the old datadings dataset and the directory are untouched")
    C.eq(read_rows(BUILD, "datadings", x), ["o1", "o2"], "4: the old dataset still reads")
    conn.close()



def section_2b():
    # the commit step itself fails (an injected EIO on the commit rename):
    # nothing replaced, the new rows kept on disk, and the table's next
    # statement says so
    d = fresh("commit_eio")
    x = os.path.join(d, "x.bagz")
    run_writer(BUILD, [create_sql("bagz", x, "create"), insert_sql("bagz", ["old"])])
    before = open(x, "rb").read()
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "replace"), "BEGIN", insert_sql("bagz", ["new"]),
                                 "COMMIT", insert_sql("bagz", ["more"])], fail=("rename", "/x.bagz"))
    C.check(rc == 1 and "COMMIT could not publish" in err and "kept" in err and ".ds-tmp." in err,
            "4: a failed commit rename: the next INSERT fails naming what was kept where", (rc, err))
    C.eq(open(x, "rb").read(), before, "4: a failed commit rename: x.bagz is the old one")
    C.check(any(".ds-tmp." in f for f in os.listdir(d)), "4: the new files are kept", os.listdir(d))
    # the directory's fsync fails after the rename: the publish counts, the
    # next statement reports the error once
    d = fresh("fsync_eio")
    x = os.path.join(d, "x.bagz")
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "create"), "BEGIN", insert_sql("bagz", ["a"]),
                                 "COMMIT", "SELECT 1", insert_sql("bagz", ["b"]), insert_sql("bagz", ["c"])],
                         fail=("fsync", "/fsync_eio"))
    C.check(rc == 1 and "published the new dataset, but it may not be durable" in err,
            "4: a failed fsync of the folder after the rename: reported at the next INSERT", (rc, err))
    C.eq(read_rows(BUILD, "bagz", x), ["a"], "4: ... and the dataset was published")
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "replace"), "BEGIN", insert_sql("bagz", ["a"]),
                                 "COMMIT", insert_sql("bagz", ["b"])], fail=("fsync", "/fsync_eio"))
    C.check(rc == 1 and "published the new dataset" in err, "4: reported once ...", (rc, err))


def section_3():
    # 5. mode=create never overwrites what appeared after CREATE (all four)
    for m in FORMATS:
        d = fresh("appeared_" + m)
        x = os.path.join(d, "t" + FORMATS[m][0])
        conn = connect(BUILD)
        conn.isolation_level = None
        conn.execute(create_sql(m, x, "create"))
        conn.execute("BEGIN")
        conn.execute(insert_sql(m, ["1", "2"]))
        if m in ("atlas", "bcolz"):
            os.makedirs(x)
            open(os.path.join(x, "theirs.txt"), "w").write("another program's")
        else:
            open(x, "w").write("another program's")
        before = theirs(d)
        commit_fails(conn, "5: %s mode=create, the target appeared after CREATE: COMMIT fails" % m,
                     "mode=create never overwrites")
        C.eq(theirs(d), before, "5: %s: what the other program made is untouched" % m)
        conn.close()
    # one lock for the same files however they are spelled
    d = fresh("spelling")
    conn = connect(BUILD)
    spellings = ["s@1.bagz", "s@*.bagz", "s-00000-of-00001.bagz", "s@3.bagz"]
    conn.execute("CREATE VIRTUAL TABLE temp.w0 USING bagz(%r, mode=create)" % os.path.join(d, spellings[0]))
    for i, sp in enumerate(spellings[1:]):
        C.raises(lambda: conn.execute("CREATE VIRTUAL TABLE temp.w%d USING bagz(%r, mode=replace)"
                                      % (i + 1, os.path.join(d, sp))),
                 "5: %s while s@1.bagz is open for writing: refused (one lock)" % sp,
                 "another writer")
    conn.close()


def section_4():
    # 6. mode=replace replaces only a dataset of its own format
    d = fresh("own")
    res = os.path.join(d, "results")
    os.makedirs(os.path.join(res, "run1"))
    open(os.path.join(res, "run1", "model.ckpt"), "w").write("weights")
    notes = os.path.join(d, "notes.msgpack")
    os.makedirs(notes)
    open(os.path.join(notes, "a.txt"), "w").write("a")
    fifo = os.path.join(d, "f.bagz")
    os.mkfifo(fifo)
    plain = os.path.join(d, "plain.bcolz")
    os.makedirs(plain)
    open(os.path.join(plain, "readme"), "w").write("r")
    before = theirs(d)
    conn = connect(BUILD)
    C.raises(lambda: conn.execute(create_sql("atlas", res, "replace", table="w0")),
             "6: atlas replace refuses a folder holding run1/", "run1", "not part of an atlas dataset")
    C.raises(lambda: conn.execute(create_sql("datadings", notes, "replace", table="w1")),
             "6: datadings replace refuses a folder", "notes.msgpack", "a directory is there")
    C.raises(lambda: conn.execute(create_sql("bagz", fifo, "replace", table="w2")),
             "6: bagz replace refuses a FIFO", "f.bagz", "a FIFO is there")
    C.raises(lambda: conn.execute(create_sql("bcolz", plain, "replace", table="w3")),
             "6: bcolz replace refuses a folder that is no ctable or carray", "plain.bcolz",
             "not a bcolz ctable or carray")
    C.eq(theirs(d), before, "6: everything refused is untouched")
    conn.close()
    # an atlas dataset that gained a stranger after CREATE: COMMIT refuses
    d = fresh("own_late")
    x = os.path.join(d, "a.atlas")
    run_writer(BUILD, [create_sql("atlas", x, "create"), insert_sql("atlas", ["1"])])
    conn = connect(BUILD)
    conn.isolation_level = None
    conn.execute(create_sql("atlas", x, "replace"))
    conn.execute("BEGIN")
    conn.execute(insert_sql("atlas", ["2"]))
    open(os.path.join(x, "notes.txt"), "w").write("mine")
    before = theirs(d)
    commit_fails(conn, "6: atlas replace, a stranger file appeared inside: COMMIT fails", "notes.txt")
    C.eq(theirs(d), before, "6: ... the atlas folder and the stranger untouched")
    conn.close()


def section_5():
    # 11. a bag of 1,200 shards written under a limit of 256 open files
    d = fresh("many")
    x = os.path.join(d, "m@1200.bagz")
    rows = ["%04d" % i for i in range(1200)]
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "create"), insert_sql("bagz", rows)], nofile=256)
    C.eq((rc, err), (0, ""), "11: m@1200.bagz under ulimit -n 256: written")
    C.eq(read_rows(BUILD, "bagz", x), rows, "11: ... and reads back")
    x = os.path.join(d, "r@*.bagz")
    rc, err = run_writer(BUILD, [create_sql("bagz", x, "create", "rows_per_shard=1"), "BEGIN",
                                 insert_sql("bagz", rows[:600]), "SAVEPOINT a", insert_sql("bagz", rows[600:]),
                                 "ROLLBACK TO a", insert_sql("bagz", rows[600:]), "COMMIT"], nofile=256)
    C.eq((rc, err), (0, ""), "11: r@*.bagz rows_per_shard=1, 1,200 rows (a savepoint rolled back) under "
         "ulimit -n 256")
    C.eq(read_rows(BUILD, "bagz", x), rows, "11: ... and reads back")


def run(section):
    """A section whose writer misbehaves may raise where it expected an
    error: that is one FAIL, and the other sections still run."""
    try:
        section()
    except Exception as e:  # noqa: BLE001 - any failure is the finding
        C.check(False, "%s ran to its end" % section.__name__, repr(e))


run(section_0)
run(section_1)
run(section_2)
run(section_2b)
run(section_3)
run(section_4)
run(section_5)
C.exit()
