"""run_sql_tests.py - SQL tests through the real sqlite3 shell.

Each tests/sql/*.test file holds cases:

    -- case: a name
    SELECT ...;            (any SQL and dot-commands, run from the repo root)
    -- expect:
    exact output lines (sqlite3 -batch, list mode, '|' separators)
    -- case: ...
    ...
    -- expect-error: substring that the shell's error output must contain
    -- case: ...
    -- expect-in-order:
    lines that must all appear in the output, in this order (for output
    that also holds random rows)

Every case starts a fresh `sqlite3 :memory:` with the build's datasets
extension loaded. Usage: run_sql_tests.py BUILD_DIR [FILE.test ...] (no
files: every tests/sql/*.test)."""
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"


def parse(path):
    cases, cur, mode = [], None, None
    with open(path) as f:
        for line in f.read().split("\n"):
            if line.startswith("-- case:"):
                cur = {"name": line[8:].strip(), "sql": [], "expect": [], "error": None}
                cases.append(cur)
                mode = "sql"
            elif line.startswith("-- expect-error:"):
                cur["error"] = line[16:].strip()
                mode = None
            elif line.startswith("-- expect-in-order:"):
                mode = "expect"
                cur["in_order"] = True
            elif line.startswith("-- expect:"):
                mode = "expect"
            elif cur is not None and mode == "sql":
                cur["sql"].append(line)
            elif cur is not None and mode == "expect":
                cur["expect"].append(line)
    for c in cases:
        while c["expect"] and c["expect"][-1] == "":
            c["expect"].pop()
    return cases


def run_case(case):
    sql = "\n".join(case["sql"]) + "\n"
    p = subprocess.run(
        ["sqlite3", "-batch", "-bail", ":memory:", "-cmd", ".load %s/datasets" % BUILD],
        input=sql, capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = p.stdout.rstrip("\n").split("\n") if p.stdout.strip("\n") else []
    if case["error"] is not None:
        ok = case["error"] in p.stderr and p.returncode != 0
        return ok, "stderr %r (rc %d), want %r" % (p.stderr.strip(), p.returncode, case["error"])
    if case.get("in_order"):
        it = iter(out)
        ok = p.returncode == 0 and all(any(x == want for x in it) for want in case["expect"])
    else:
        ok = p.returncode == 0 and out == case["expect"]
    return ok, "rc %d, stderr %r\n    got:  %r\n    want: %r" % (
        p.returncode, p.stderr.strip(), out, case["expect"])


def main():
    failed = 0
    paths = sys.argv[2:] or sorted(glob.glob(os.path.join(ROOT, "tests", "sql", "*.test")))
    for path in paths:
        for case in parse(path):
            ok, detail = run_case(case)
            name = "%s: %s" % (os.path.basename(path), case["name"])
            if ok:
                print("PASS", name)
            else:
                failed += 1
                print("FAIL", name + ": " + detail)
    sys.exit(1 if failed else 0)


main()
