"""test_file_kinds.py - a file of another kind given to bagz (or to
dataset_info) is reported as what it looks like, "not a bagz file: it
looks like a tar archive", not as a damaged bag (issue 22); a bag that
really was cut short still says "limits tail cut".
Usage: test_file_kinds.py BUILD_DIR"""
import gzip
import os
import shutil
import sqlite3
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import FIXTURES, Checker, connect, error_of  # noqa: E402

C = Checker()




def main():
    conn = connect(sys.argv[1] if len(sys.argv) > 1 else "build")
    tmp = tempfile.mkdtemp(prefix="ds-kinds-")
    try:
        files = {}
        tar = os.path.join(tmp, "data.tar")
        with tarfile.open(tar, "w") as t:
            t.add(os.path.join(FIXTURES, "bagz", "mid.bagz"), arcname="mid.bagz")
        files["a tar archive"] = tar
        z = os.path.join(tmp, "data.zip")
        with zipfile.ZipFile(z, "w") as f:
            f.writestr("a.txt", "hello" * 100)
        files["a zip file"] = z
        g = os.path.join(tmp, "data.gz")
        with open(g, "wb") as f:
            f.write(gzip.compress(b"hello" * 1000))
        files["a gzip file"] = g
        db = os.path.join(tmp, "meta.db")
        c2 = sqlite3.connect(db)
        c2.execute("CREATE TABLE t(x)")
        c2.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(500)])
        c2.commit()
        c2.close()
        files["an SQLite database"] = db
        for kind, path in files.items():
            e = error_of(conn, "SELECT count(*) FROM bagz(?)", path)
            C.check(e is not None and "not a bagz file: it looks like %s" % kind in e and path in e,
                    "bagz on %s says what it looks like" % kind, e)
            C.check(e is not None and "limits tail cut" not in e,
                    "bagz on %s is not called a cut bag" % kind, e)
            e = error_of(conn, "SELECT * FROM dataset_info(?)", path)
            C.check(e is not None and "not a dataset, it looks like %s" % kind in e,
                    "dataset_info on %s says what it looks like" % kind, e)
        # a real bag cut short is still diagnosed as one
        cut = os.path.join(tmp, "cut.bagz")
        data = open(os.path.join(FIXTURES, "bagz", "mid.bagz"), "rb").read()
        with open(cut, "wb") as f:
            f.write(data[:-20])
        e = error_of(conn, "SELECT count(*) FROM bagz(?)", cut)
        C.check(e is not None and "limits tail cut" in e, "a cut bag says limits tail cut", e)
        # zeros are no cut bag either (limits that end at byte 0)
        zeros = os.path.join(tmp, "zeros.dat")
        with open(zeros, "wb") as f:
            f.write(b"\x00" * 5000 + b"\x01" * 3)
        e = error_of(conn, "SELECT count(*) FROM bagz(?)", zeros)
        C.check(e is not None and "not a bagz file" in e and "limits tail cut" not in e,
                "zeros with stray bytes: not a bagz file", e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
