"""test_fuzz_regressions.py - saved fuzzer inputs never crash the SQL layer.

Every file in tests/fuzz/regressions/bagz/ (except *.md notes) is an input
of tests/fuzz/fuzz_bagz.c: one option byte, then the bytes of a bagz file.
The file part (input[1:]), and for good measure the whole input, is written
to a temporary file and queried with
    SELECT count(*), sum(length(record)) FROM bagz(file, 'compression=...')
for compression=zstd and none (and the layout the option byte picks). Each
query must either succeed or fail with an sqlite3.Error starting "bagz: ".
The queries run in a child process so that a crash is reported as a FAIL
line naming the input instead of killing the test.
Usage: test_fuzz_regressions.py BUILD_DIR"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from dstest import ROOT, Checker, connect, sql_quote  # noqa: E402

REG = os.path.join(ROOT, "tests", "fuzz", "regressions", "bagz")


def variants(data):
    """(label, file bytes, extra option) for one fuzzer input."""
    out = []
    if data:
        layout = "interleaved" if data[0] & 4 else "concatenated"
        out.append(("file part", data[1:], "layout=" + layout))
    out.append(("whole input", data, ""))
    return out


def child(build, path):
    """Run every query for one input; print one JSON result per query."""
    conn = connect(build)
    with open(path, "rb") as f:
        data = f.read()
    with tempfile.TemporaryDirectory(prefix="bagz-fuzzreg-") as d:
        for label, body, extra in variants(data):
            fp = os.path.join(d, "input.bagz")
            with open(fp, "wb") as f:
                f.write(body)
            for comp in ("zstd", "none"):
                for threads in ("1", "2"):
                    opts = ",".join(x for x in ("compression=" + comp, extra,
                                                "threads=" + threads) if x)
                    q = "SELECT count(*), sum(length(record)) FROM bagz(%s, %s)" % (
                        sql_quote(fp), sql_quote(opts))
                    res = {"label": label, "opts": opts}
                    try:
                        res["rows"] = [list(r) for r in conn.execute(q).fetchall()]
                    except sqlite3.Error as e:
                        res["error"] = str(e)
                    print(json.dumps(res), flush=True)
    conn.close()


def main(build):
    C = Checker()
    C.check(os.path.isdir(REG), "regression folder exists", REG)
    files = sorted(f for f in os.listdir(REG)
                   if not f.endswith(".md") and not f.startswith(".")) if os.path.isdir(REG) else []
    for name in files:
        path = os.path.join(REG, name)
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", build, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        out = p.stdout.decode("utf-8", "replace")
        C.check(p.returncode == 0, "%s: no crash" % name,
                "exit %d; stderr: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        want = sum(2 * 2 for _ in variants(open(path, "rb").read()))
        C.eq(len(results), want, "%s: every query ran" % name)
        for r in results:
            what = "%s: %s %s" % (name, r["label"], r["opts"])
            if "error" in r:
                C.check(r["error"].startswith("bagz: "), what + ": error starts with 'bagz: '",
                        r["error"])
            else:
                rows = r["rows"]
                C.check(len(rows) == 1 and isinstance(rows[0][0], int) and rows[0][0] >= 0,
                        what + ": succeeded with a count", rows)
    C.exit()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "build")
