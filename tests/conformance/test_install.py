"""test_install.py - `make install` into a staging folder (DESTDIR): the
five libraries land in EXTDIR and the package in PYDIR; from another
directory, with only those on the loader's and Python's paths, `.load
datasets` works in the sqlite3 shell and sqlite_datasets.connect() finds the
extension by its bare name. `make uninstall` removes them again.
Usage: test_install.py BUILD_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker  # noqa: E402

C = Checker()
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
stage = tempfile.mkdtemp(prefix="ds_install_")
ext, py = "/ext", "/py"
make = ["make", "-s", "--no-print-directory", "-C", ROOT, "BUILD=" + BUILD,
        "DESTDIR=" + stage, "EXTDIR=" + ext, "PYDIR=" + py]
r = subprocess.run(make + ["install"], capture_output=True, text=True)
C.eq(r.returncode, 0, "make install" + (": " + r.stderr[-300:] if r.returncode else ""))
C.eq(sorted(os.listdir(stage + ext)),
     ["atlas.so", "bagz.so", "bcolz.so", "datadings.so", "datasets.so", "tfrecord.so"],
     "libraries installed")
C.check(os.path.isfile(os.path.join(stage + py, "sqlite_datasets", "dask.py")), "package installed")

env = dict(os.environ, LD_LIBRARY_PATH=stage + ext, PYTHONPATH=stage + py)
env.pop("SQLITE_DATASETS_EXTENSION", None)
r = subprocess.run(["sqlite3", ":memory:", ".load datasets",
                    "SELECT count(*) FROM pragma_module_list WHERE name = 'dataset_shards'"],
                   capture_output=True, text=True, env=env, cwd=stage)
C.eq(r.stdout.strip(), "1", ".load datasets finds the installed library " + r.stderr)
code = ("import sqlite_datasets as sd; c = sd.connect(); "
        "print(sd.__file__.startswith(%r), sd.extension_path(), "
        "c.execute(\"SELECT count(*) FROM pragma_module_list WHERE name = 'dataset_shards'\")"
        ".fetchone()[0])" % (stage + py))
r = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, env=env,
                   cwd=stage)
C.eq(r.stdout.split(), ["True", "datasets", "1"],
     "the installed package loads the installed extension " + r.stderr[-300:])

r = subprocess.run(make + ["uninstall"], capture_output=True, text=True)
left = [f for _, _, fs in os.walk(stage) for f in fs]
C.eq((r.returncode, left), (0, []), "make uninstall removes them")
shutil.rmtree(stage)
C.exit()
