"""test_readme_examples.py - every ```sql block of README.md and every
sql/*.sql file runs as written, without an error, through the sqlite3 shell
with `.load build/datasets`; all README SQL blocks also run in order in one
shell session (a new user's pass: no name created twice, no file written
twice), and the README's ```python blocks run in order in one Python
process.

Each run has a fresh working directory, a temporary directory holding
symlinks to the checkout's `tests`, `build` and `python` and an empty
`scratch/` (the README creates it): relative paths
(`tests/fixtures/upstream/...`, `.load build/datasets`) read the bundled
fixtures as from the repository root, and writer examples write into
`scratch/` of the temporary directory, never into the tree.
A block whose fence line is "```sql -- not run: REASON" is skipped (and
counted); a failure names the block's README line.
Usage: test_readme_examples.py BUILD_DIR"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

from dstest import ROOT, Checker

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
SHELL = shutil.which("sqlite3") or "/usr/bin/sqlite3"
C = Checker()


def sql_blocks(path, lang="sql"):
    """(line number of the fence, fence info, text) of each ```LANG block."""
    blocks, cur, start, info = [], None, 0, ""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if cur is None:
                if s.startswith("```" + lang):
                    cur, start, info = [], n, s[len("```"):]
            elif s.startswith("```"):
                blocks.append((start, info, "".join(cur)))
                cur = None
            else:
                cur.append(line)
    C.check(cur is None, "README.md: every ```sql block is closed", "open at line %d" % start)
    return blocks


def workdir():
    """A fresh working directory as the README's reader has it."""
    work = tempfile.mkdtemp(prefix="readme-example-")
    os.symlink(os.path.join(ROOT, "tests"), os.path.join(work, "tests"))
    os.symlink(os.path.join(ROOT, "python"), os.path.join(work, "python"))
    os.symlink(BUILD, os.path.join(work, "build"))
    os.mkdir(os.path.join(work, "scratch"))
    return work


def run(sql, name, timeout=120):
    """Run sql in a fresh shell in a scratch directory; check it succeeds."""
    work = workdir()
    try:
        p = subprocess.run([SHELL, "-bail", ":memory:", "-cmd", ".load build/datasets"],
                           input=sql, cwd=work, capture_output=True, text=True, errors="replace",
                           timeout=timeout)
        err = p.stderr.strip()
        C.check(p.returncode == 0 and not err, name,
                "exit %d: %s" % (p.returncode, err or p.stdout[-300:]))
        left = sorted(f for f in os.listdir(work) if f not in ("tests", "python", "build", "scratch"))
        C.check(not left, name + ": writes only into scratch/", left)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_python(code, name, timeout=300):
    """Run Python code (the README's blocks, in order) in one process."""
    work = workdir()
    env = dict(os.environ, PYTHONPATH=os.path.join(work, "python"),
               SQLITE_DATASETS_EXTENSION=os.path.join(BUILD, "datasets.so"))
    try:
        p = subprocess.run(["/usr/bin/python3", "-c", code], cwd=work, env=env, capture_output=True,
                           text=True, errors="replace", timeout=timeout)
        C.check(p.returncode == 0, name, "exit %d: %s" % (p.returncode, p.stderr[-600:]))
        left = sorted(f for f in os.listdir(work) if f not in ("tests", "python", "build", "scratch"))
        C.check(not left, name + ": writes only into scratch/", left)
    finally:
        shutil.rmtree(work, ignore_errors=True)


readme = os.path.join(ROOT, "README.md")
blocks = sql_blocks(readme)
C.check(len(blocks) >= 15, "README.md has its SQL examples", "%d blocks" % len(blocks))
skipped = 0
for line, info, text in blocks:
    if "not run:" in info:
        skipped += 1
        C.check(info.split("not run:", 1)[1].strip() != "",
                "README.md:%d not-run block says why" % line)
        continue
    run(text, "README.md:%d sql block runs" % line)
C.check(skipped <= 5, "README.md: few not-run blocks", "%d skipped" % skipped)
print("README.md: %d sql blocks, %d marked not run" % (len(blocks), skipped))
# a new user's pass: every block in order in one session
run("".join(text for _, info, text in blocks if "not run:" not in info),
    "README.md: every sql block in order in one session", timeout=600)
py = [(line, info, text) for line, info, text in sql_blocks(readme, "python")
      if "not run:" not in info]
C.check(len(py) >= 3, "README.md has its Python examples", "%d blocks" % len(py))
run_python("".join(text for _, _, text in py), "README.md: every python block in order in one process")

files = sorted(glob.glob(os.path.join(ROOT, "sql", "*.sql")))
C.check(len(files) >= 5, "sql/*.sql found", files)
for path in files:
    with open(path, encoding="utf-8") as f:
        run(f.read(), "sql/%s runs" % os.path.basename(path))

C.exit()
