"""test_writer_errors.py - a writer's errors name the dataset it writes
(issue 22): a row refused by any of the four writers says the target path
before the row, and a writer into a folder that does not exist (or is a
file) says so, not "cannot create the writer lock".
Usage: test_writer_errors.py BUILD_DIR"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import Checker, connect, error_of  # noqa: E402

C = Checker()

# module, target name, extra options, a row it refuses (INSERT text)
CASES = [
    ("bagz", "w.bagz", "", "INSERT INTO w(record) VALUES (1)", "row 0"),
    ("bagz", "w@2.bagz", "", "INSERT INTO w(record) VALUES (x'01'), (2.5)", "row 1"),
    ("datadings", "w.msgpack", "", "INSERT INTO w(key) VALUES (NULL)", "sample 0"),
    ("atlas", "w_atlas", "", "INSERT INTO w(example) VALUES ('{')", "example 0"),
    ("bcolz", "w_bcolz", ", columns='id i8'", "INSERT INTO w(id) VALUES ('x')", "row 0"),
]




def main():
    conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
    conn.isolation_level = None
    tmp = tempfile.mkdtemp(prefix="ds-werr-")
    try:
        for module, name, opts, insert, row in CASES:
            target = os.path.join(tmp, name)
            conn.execute("CREATE VIRTUAL TABLE temp.w USING %s('%s', mode=create%s)"
                         % (module, target, opts))
            e = error_of(conn, insert)
            C.check(e is not None and e.startswith("%s: %s: %s" % (module, target, row)),
                    "%s: a refused row names %s first" % (module, name), e)
            conn.execute("DROP TABLE temp.w")
            missing = os.path.join(tmp, "nodir", name)
            e = error_of(conn, "CREATE VIRTUAL TABLE temp.m USING %s('%s', mode=create%s)"
                         % (module, missing, opts))
            C.check(e is not None and "%s: the folder to write into does not exist"
                    % os.path.join(tmp, "nodir") in e and "lock" not in e,
                    "%s: a missing folder is named as missing" % module, e)
            C.check(not os.path.exists(os.path.join(tmp, "nodir")),
                    "%s: the missing folder is not created" % module)
        afile = os.path.join(tmp, "plain.txt")
        with open(afile, "w") as f:
            f.write("x")
        e = error_of(conn, "CREATE VIRTUAL TABLE temp.f USING bagz('%s/x.bagz', mode=create)"
                     % afile)
        C.check(e is not None and "%s: not a folder, so nothing can be written inside it" % afile
                in e and "lock" not in e,
                "a file where the folder should be is named", e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
