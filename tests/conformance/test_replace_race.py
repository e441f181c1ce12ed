"""test_replace_race.py - readers in other processes never see two versions
of a dataset mixed while a writer replaces it (issue 20, item 8).

Per format (bagz single file, bagz x@4, bagz x@*, datadings, atlas, bcolz,
tfrecord x@*):
one child process replaces the dataset in a loop with mode=replace, every
row of version v holding v (and version v having rows(v) rows); two other
children query it over and over, in both forms (the table-valued form and a
long-lived CREATE-form table, dropped and created again after it reports
that the dataset changed). Each case runs for RUN_SECONDS (bounded: every
loop stops at its deadline). Asserted: no answer mixes versions or has the
wrong row count for its version; every error is of the clean kind (the
dataset changed, or was not found); a good fraction of queries succeeded
(so that the test can fail) and the writer published several versions.
Usage: test_replace_race.py BUILD"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import ROOT, Checker  # noqa: E402

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
PY = "/usr/bin/python3"
RUN_SECONDS = 3.0
C = Checker()
tmp = tempfile.mkdtemp(prefix="ds-race-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)

# module, path, writer options, writer columns, writer value of row i of
# version v, table-valued read of a row's v, CREATE-form read of it
CASES = [
    ("bagz single", "bagz", "x.bagz", "", "record", "CAST({v} AS TEXT)",
     "CAST(record AS TEXT)", "CAST(record AS TEXT)"),
    ("bagz @4", "bagz", "x@4.bagz", "", "record", "CAST({v} AS TEXT)",
     "CAST(record AS TEXT)", "CAST(record AS TEXT)"),
    ("bagz @*", "bagz", "x@*.bagz", ", rows_per_shard=16", "record", "CAST({v} AS TEXT)",
     "CAST(record AS TEXT)", "CAST(record AS TEXT)"),
    # the publish order of issue 20 item 2 done by hand (the old shard 0
    # moved away first, the new shard 0 renamed in last): the reader alone
    ("bagz @4 shard 0 last", "bagz", "x@4.bag", "", "", "", "CAST(record AS TEXT)",
     "CAST(record AS TEXT)"),
    ("datadings", "datadings", "x.msgpack", "", "key, sample",
     "'k' || i, '{{\"v\": {v}}}'", "json_extract(sample, '$.v')", "v"),
    ("atlas", "atlas", "x.atlas", "", "example", "'{{\"v\": {v}}}'",
     "json_extract(example, '$.v')", "v"),
    ("bcolz", "bcolz", "x.bcolz", ", chunklen=8, columns='v INTEGER, w INTEGER'", "v, w", "{v}, i",
     "json_extract(row, '$.v')", "v"),
    ("tfrecord @*", "tfrecord", "x@*.tfrecord", ", rows_per_shard=16", "record",
     "CAST({v} AS TEXT)", "CAST(record AS TEXT)", "CAST(record AS TEXT)"),
]

COMMON = r"""
import json, os, sqlite3, sys, time
build, module, path, wopts, wcols, wval, tvf_v, create_v, seconds = sys.argv[1:10]
def connect():
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(os.path.join(build, "datasets"))
    return c
def rows(v):  # rows of version v: 24, 32 or 40
    return 24 + (v % 3) * 8
q = lambda s: "'" + s.replace("'", "''") + "'"
deadline = time.monotonic() + float(seconds)
"""

WRITER = COMMON + r"""
conn = connect()
v = 0
errors = []
while time.monotonic() < deadline:
    v += 1
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.w%d USING %s(%s, mode=replace%s)"
                     % (v, module, q(path), wopts))
        conn.execute("INSERT INTO w%d(%s) WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL "
                     "SELECT i + 1 FROM s WHERE i < %d) SELECT %s FROM s"
                     % (v, wcols, rows(v) - 1, wval.format(v=v)))
    except sqlite3.Error as e:
        errors.append(str(e))
    conn.execute("DROP TABLE IF EXISTS w%d" % v)
print(json.dumps({"versions": v, "errors": errors[:5], "nerrors": len(errors)}))
"""

# x@4.bag written as four tail-limits bags of raw records, published in
# the order of a sharded writer that keeps its commit point
SHARD0_LAST = COMMON + r"""
import struct
d, base = os.path.dirname(path), os.path.basename(path).replace("@4.bag", "")
name = lambda i: os.path.join(d, "%s-%05d-of-00004.bag" % (base, i))
def bag(p, records):
    ends, pos = [], 0
    for r in records:
        pos += len(r)
        ends.append(pos)
    with open(p, "wb") as f:
        f.write(b"".join(records) + struct.pack("<%dQ" % len(ends), *ends))
v = 0
while time.monotonic() < deadline:
    v += 1
    recs = [str(v).encode()] * rows(v)
    k = len(recs) // 4
    for i in range(4):
        bag(name(i) + ".tmp", recs[i * k:(i + 1) * k] if i < 3 else recs[3 * k:])
    if os.path.exists(name(0)):
        os.rename(name(0), name(0) + ".old")
    for i in (3, 2, 1, 0):
        os.rename(name(i) + ".tmp", name(i))
    if os.path.exists(name(0) + ".old"):
        os.unlink(name(0) + ".old")
print(json.dumps({"versions": v, "errors": [], "nerrors": 0}))
"""

READER = COMMON + r"""
conn = connect()
# clean errors: the dataset changed, or it (a shard of it) is not there;
# not a chunk file missing inside a tree that was read
clean = ("changed", "cannot open: No such file or directory", "no shard files found")
out = {"queries": 0, "ok": 0, "mixed": 0, "clean": 0, "other": 0, "examples": [],
       "other_errors": [], "errors": {}}
have_table = False
def note(e):
    m = str(e)
    if any(c in m for c in clean):
        out["clean"] += 1
        key = m.split(": ", 1)[-1][:60]
        out["errors"][key] = out["errors"].get(key, 0) + 1
    else:
        out["other"] += 1
        if len(out["other_errors"]) < 5:
            out["other_errors"].append(m)
n = 0
while time.monotonic() < deadline:
    n += 1
    if n % 2:
        sql = "SELECT %s FROM %s(%s)" % (tvf_v, module, q(path))
    else:
        if not have_table:
            try:
                conn.execute("CREATE VIRTUAL TABLE temp.t USING %s(%s)" % (module, q(path)))
                have_table = True
            except sqlite3.Error as e:
                out["queries"] += 1
                note(e)
                continue
        sql = "SELECT %s FROM temp.t" % create_v
    out["queries"] += 1
    try:
        got = [r[0] for r in conn.execute(sql).fetchall()]
    except sqlite3.Error as e:
        note(e)
        if n % 2 == 0 and "changed" in str(e):
            conn.execute("DROP TABLE temp.t")
            have_table = False
        continue
    vs = set(int(x) for x in got)
    if len(vs) == 1 and len(got) == rows(next(iter(vs))):
        out["ok"] += 1
    else:
        out["mixed"] += 1
        if len(out["examples"]) < 5:
            out["examples"].append("%s: %d rows, versions %s" % (
                "tvf" if n % 2 else "create", len(got), sorted(vs)))
print(json.dumps(out))
"""


def run_case(name, module, rel, wopts, wcols, wval, tvf_v, create_v):
    d = os.path.join(tmp, name.replace(" ", "_").replace("@", "at").replace("*", "star"))
    os.mkdir(d)
    path = os.path.join(d, rel)
    args = [BUILD, module, path, wopts, wcols, wval, tvf_v, create_v]
    # version 0 first, so that readers find a dataset from the start
    wcode = SHARD0_LAST if "shard 0 last" in name else WRITER
    first = subprocess.run([PY, "-c", wcode] + args + ["0.001"], capture_output=True, text=True,
                           timeout=60)
    if not C.check(first.returncode == 0, "%s: the first version is written" % name,
                   first.stderr[-500:]):
        return
    procs = [subprocess.Popen([PY, "-c", code] + args + [str(RUN_SECONDS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for code in (wcode, READER, READER)]
    res = []
    for p in procs:
        try:
            o, e = p.communicate(timeout=RUN_SECONDS + 60)
        except subprocess.TimeoutExpired:
            p.kill()
            o, e = p.communicate()
        if not C.check(p.returncode == 0 and o.strip(), "%s: a child ran to its end" % name,
                       e[-800:]):
            return
        res.append(json.loads(o))
    w, r1, r2 = res
    print("# %s: %d versions written; readers %s" % (name, w["versions"], json.dumps(
        [{k: r[k] for k in ("queries", "ok", "mixed", "clean", "other", "errors")}
         for r in (r1, r2)])))
    C.check(w["nerrors"] == 0, "%s: the writer's replaces succeed" % name, w["errors"])
    C.check(w["versions"] >= 5, "%s: the writer published several versions" % name,
            w["versions"])
    for i, r in enumerate((r1, r2)):
        C.check(r["mixed"] == 0, "%s reader %d: no answer mixes versions (%d queries)"
                % (name, i + 1, r["queries"]), "%d mixed: %s" % (r["mixed"], r["examples"]))
        C.check(r["other"] == 0, "%s reader %d: every error says the dataset changed or "
                "is not there" % (name, i + 1), r["other_errors"])
        C.check(r["queries"] >= 20 and r["ok"] * 4 >= r["queries"],
                "%s reader %d: at least a quarter of the queries answered" % (name, i + 1),
                "%d of %d" % (r["ok"], r["queries"]))


only = sys.argv[2] if len(sys.argv) > 2 else ""
for case in CASES:
    if only in case[0]:
        run_case(*case)
shutil.rmtree(tmp)
C.exit()
