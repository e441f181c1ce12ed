"""test_python_sqlite_utils.py - the extension from Python programs.

Loads build/datasets into Debian's /usr/bin/python3 sqlite3 module
(enable_load_extension + load_extension) and into the `sqlite-utils`
command (Debian package sqlite-utils: `sqlite-utils memory
--load-extension build/datasets.so "SELECT ..."`, which prints the rows as
JSON), runs one query per format on a bundled fixture, and compares the
rows of both with the upstream reader's expected JSON
(tests/fixtures/upstream/<format>/expected/*.json):
  bagz       every record of concat@4.bagz, in order (hex);
  datadings  every key of basic.msgpack, and its i_small field;
  atlas      every example of the `none` dataset (JSON, parsed);
  bcolz      columns id, label, small of sampled rows of ctable_basic.
Usage: test_python_sqlite_utils.py BUILD_DIR"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import FIXTURES, ROOT, Checker, connect  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
FIX = os.path.relpath(FIXTURES, ROOT)  # the queries run from the repository root


def expected(fmt, name):
    with open(os.path.join(FIXTURES, fmt, "expected", name + ".json")) as f:
        return json.load(f)


def cases():
    """(label, SQL, expected rows as lists) per format."""
    out = []
    bz = expected("bagz", "concat")
    want = [r["$bytes_hex"].upper() for shard in bz["per_shard_records"] for r in shard]
    out.append(("bagz", "SELECT rowid AS i, hex(record) AS record FROM bagz('%s/bagz/%s') "
                "ORDER BY rowid" % (FIX, bz["filespec"]), [[i, h] for i, h in enumerate(want)]))

    dd = expected("datadings", "basic")
    out.append(("datadings", "SELECT key, sample ->> '$.i_small' AS i_small FROM "
                "datadings('%s/datadings/basic/basic.msgpack') ORDER BY rowid" % FIX,
                [[s["key"], s["i_small"]] for s in dd["samples"]]))

    at = expected("atlas", "none")
    out.append(("atlas", "SELECT rowid AS i, example FROM atlas('%s/atlas/none') ORDER BY rowid"
                % FIX, [[e["i"], e["value"]] for e in at["examples"]]))

    bc = expected("bcolz", "ctable_basic")
    names = bc["names"]
    pick = [names.index("id"), names.index("label"), names.index("small")]
    rows = bc["rows"][:20]
    ids = ", ".join(str(r[0]) for r in rows)
    out.append(("bcolz", "SELECT rowid AS i, row ->> '$.id' AS id, row ->> '$.label' AS label, "
                "row ->> '$.small' AS small FROM bcolz('%s/bcolz/ctable_basic') "
                "WHERE rowid IN (%s) ORDER BY rowid" % (FIX, ids),
                [[r[0]] + [r[1][k] for k in pick] for r in rows]))
    return out


def normal(label, rows):
    """Rows as lists; atlas examples parsed from their JSON text."""
    out = [list(r) for r in rows]
    if label == "atlas":
        out = [[i, json.loads(e)] for i, e in out]
    return out


def via_python(sql):
    conn = connect(BUILD)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def via_sqlite_utils(tool, sql):
    """The rows `sqlite-utils memory` prints as JSON (keys in column order)."""
    p = subprocess.run([tool, "memory", "--load-extension", os.path.join(BUILD, "datasets.so"),
                        sql], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode != 0:
        raise RuntimeError("exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-500:]))
    return [list(r.values()) for r in json.loads(p.stdout.decode("utf-8"))]


def main():
    tool = shutil.which("sqlite-utils")
    C.check(tool is not None, "sqlite-utils is installed (tools/deps.sh test installs it)")
    for label, sql, want in cases():
        C.check(len(want) > 0, "%s: the fixture has expected rows" % label)
        try:
            got = normal(label, via_python(sql))
            C.eq(got, want, "python3 sqlite3: %s rows match upstream" % label)
        except sqlite3.Error as e:
            C.check(False, "python3 sqlite3: %s query runs" % label, str(e))
        if tool:
            try:
                got = normal(label, via_sqlite_utils(tool, sql))
                C.eq(got, want, "sqlite-utils: %s rows match upstream" % label)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                C.check(False, "sqlite-utils: %s query runs" % label, str(e))
    C.exit()


if __name__ == "__main__":
    main()
