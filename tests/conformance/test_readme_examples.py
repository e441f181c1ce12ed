"""test_readme_examples.py - every ```sql block of README.md and every
sql/*.sql file runs as written, without an error, through the sqlite3 shell
with `.load build/datasets`.

Each block runs in a fresh :memory: connection whose working directory is a
temporary directory holding symlinks to the checkout's `tests` and `build`:
relative paths (`tests/fixtures/upstream/...`, `.load build/datasets`) read
the bundled fixtures as from the repository root, and writer examples
(`mode=create`) write into the temporary directory, never into the tree.
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


def sql_blocks(path):
    """(line number of the fence, fence info, text) of each ```sql block."""
    blocks, cur, start, info = [], None, 0, ""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if cur is None:
                if s.startswith("```sql"):
                    cur, start, info = [], n, s[len("```"):]
            elif s.startswith("```"):
                blocks.append((start, info, "".join(cur)))
                cur = None
            else:
                cur.append(line)
    C.check(cur is None, "README.md: every ```sql block is closed", "open at line %d" % start)
    return blocks


def run(sql, name):
    """Run sql in a fresh shell in a scratch directory; check it succeeds."""
    work = tempfile.mkdtemp(prefix="readme-example-")
    try:
        os.symlink(os.path.join(ROOT, "tests"), os.path.join(work, "tests"))
        os.symlink(BUILD, os.path.join(work, "build"))
        p = subprocess.run([SHELL, "-bail", ":memory:", "-cmd", ".load build/datasets"],
                           input=sql, cwd=work, capture_output=True, text=True, errors="replace",
                           timeout=120)
        err = p.stderr.strip()
        C.check(p.returncode == 0 and not err, name,
                "exit %d: %s" % (p.returncode, err or p.stdout[-300:]))
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

files = sorted(glob.glob(os.path.join(ROOT, "sql", "*.sql")))
C.check(len(files) >= 5, "sql/*.sql found", files)
for path in files:
    with open(path, encoding="utf-8") as f:
        run(f.read(), "sql/%s runs" % os.path.basename(path))

C.exit()
