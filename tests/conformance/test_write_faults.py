"""test_write_faults.py - writers under a failing disk (issue 20 item 3).

The LD_PRELOAD shim tests/shims/fault_shim.c (BUILD/shims/fault_shim.so)
makes the Nth write under a test folder short (then ENOSPC), or fail with
ENOSPC or EIO. For every format (bagz, sharded bagz, datadings, atlas with
plain zstd and with its default trained dictionary, bcolz with a TEXT
column that waits in .values.tmp, and with an object column: a chunk file
a row, no more files than rows; bagz also with threads=2, atlas also with
shards of 6 rows; tfrecord one file and
gzip name@2) a mode=replace writer over a good dataset runs BEGIN,
INSERT statements (the fault armed after BEGIN), and COMMIT. Then either COMMIT succeeded and the dataset reads back exactly the
rows of the statements that succeeded (every row compared), or COMMIT
failed and the old dataset reads back intact; a fault that fired is
reported by some statement or by COMMIT, naming the file. The fault walks
over the first, last and three writes between of the transaction (counted
by a dry run first) for each kind; three more cases per format fail the
last statement's first write, COMMIT's first write, COMMIT's first fsync. The test re-runs itself with the shim
preloaded (after libasan under make asan). Usage: test_write_faults.py
BUILD_DIR"""
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
STATEMENTS = 8   # INSERT statements per transaction
ROWS = 2         # rows per statement
SIZES = (60000, 150000)  # payload bytes of a statement's rows (bagz: raw; others hex, twice)

if "DS_FAULT_CTL" not in os.environ:  # the parent: run this file with the shim
    shim = os.path.abspath(os.path.join(BUILD, "shims", "fault_shim.so"))
    if not os.path.exists(shim):
        print("FAIL fault shim: %s was not built" % shim)
        sys.exit(1)
    # the shim makes the faults: a tmpfs (when there is one) keeps the
    # commits' fsyncs cheap
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    tmp = tempfile.mkdtemp(prefix="ds_faults_", dir=shm)
    env = dict(os.environ)
    env["LD_PRELOAD"] = (env.get("LD_PRELOAD", "") + " " + shim).strip()
    env["DS_FAULT_DIR"] = os.path.join(tmp, "data")
    env["DS_FAULT_CTL"] = os.path.join(tmp, "ctl")
    os.mkdir(env["DS_FAULT_DIR"])
    with open(env["DS_FAULT_CTL"], "w") as f:
        f.write("off")
    try:
        rc = subprocess.run([sys.executable, os.path.abspath(__file__), BUILD], env=env,
                            timeout=180).returncode
    except subprocess.TimeoutExpired:
        print("FAIL the fault test ran for more than 180 s")
        rc = 1
    shutil.rmtree(tmp, ignore_errors=True)
    if rc not in (0, 1):
        print("FAIL the fault test process ended with status %d" % rc)
    sys.exit(0 if rc == 0 else 1)

C = Checker()
DATA = os.environ["DS_FAULT_DIR"]
CTL = os.environ["DS_FAULT_CTL"]


def arm(text):
    with open(CTL, "w") as f:
        f.write(text)


def ctl_state():
    with open(CTL) as f:
        return f.read()


def statement_rows(s):
    """The rows of statement s: (index, random payload), ROWS of them."""
    rnd = random.Random(s)
    return [(s * ROWS + k, rnd.randbytes(SIZES[k % len(SIZES)])) for k in range(ROWS)]


class Fmt:
    """One format: the target's name, the writer's options, how rows are
    inserted and read back (rows as (index, payload) pairs)."""

    def __init__(self, label, module, target, options, cols, to_sql, read_sql, from_sql,
                 rows_of=None):
        self.label, self.module, self.target, self.options = label, module, target, options
        self.rows_of = rows_of or statement_rows  # the rows of statement s
        self.cols, self.to_sql, self.read_sql, self.from_sql = cols, to_sql, read_sql, from_sql

    def writer(self, conn, path, mode):
        conn.execute("CREATE VIRTUAL TABLE temp.w USING %s(%s, mode=%s%s)"
                     % (self.module, sql_quote(path), mode, self.options))

    def insert(self, conn, rows):
        marks = ", ".join(["(%s)" % ", ".join("?" * len(self.cols))] * len(rows))
        args = [a for r in rows for a in self.to_sql(r)]
        conn.execute("INSERT INTO w(%s) VALUES %s" % (", ".join(self.cols), marks), args)

    def read(self, path):
        """The rows of the dataset at path (a fresh connection), or the error."""
        conn = connect(BUILD)
        try:
            got = [self.from_sql(r) for r in conn.execute(self.read_sql % self.module, (path,))]
        except sqlite3.Error as e:
            got = "error: %s" % e
        conn.close()
        return got


def js(d):
    return json.dumps(d)


FORMATS = [
    Fmt("bagz", "bagz", "x.bagz", "", ["record"], lambda r: [r[1]],
        "SELECT record FROM %s(?)", lambda t: bytes(t[0])),
    Fmt("bagz-threads", "bagz", "x.bagz", ", threads=2", ["record"], lambda r: [r[1]],
        "SELECT record FROM %s(?)", lambda t: bytes(t[0])),
    Fmt("bagz@2", "bagz", "x@2.bagz", "", ["record"], lambda r: [r[1]],
        "SELECT record FROM %s(?)", lambda t: bytes(t[0])),
    Fmt("datadings", "datadings", "x.msgpack", "", ["key", "sample"],
        lambda r: ["k%d" % r[0], js({"d": r[1].hex()})],
        "SELECT key, sample FROM %s(?)",
        lambda t: (t[0], json.loads(t[1])["d"])),
    Fmt("atlas", "atlas", "x.atlas", ", strategy=1, block_size=2", ["example"],
        lambda r: [js({"i": r[0], "d": r[1].hex()})],
        "SELECT example FROM %s(?)", lambda t: tuple(json.loads(t[0]).values())),
    Fmt("atlas-dict", "atlas", "x.atlas", ", block_size=2, shard_size=6", ["example"],
        lambda r: [js({"i": r[0], "d": r[1].hex()})],
        "SELECT example FROM %s(?)", lambda t: tuple(json.loads(t[0]).values())),
    Fmt("bcolz", "bcolz", "x.bcolz", ", columns='id INTEGER, s TEXT', chunklen=2",
        ["id", "s"], lambda r: [r[0], r[1].hex()],
        "SELECT row FROM %s(?)", lambda t: tuple(json.loads(t[0]).values())),
    Fmt("bcolz-object", "bcolz", "x.bcolz", ", columns='id INTEGER, o JSON', chunklen=2",
        ["id", "o"], lambda r: [r[0], js({"d": r[1].hex()})],
        "SELECT row FROM %s(?)", lambda t: (json.loads(t[0])["id"], json.loads(t[0])["o"]["d"])),
    Fmt("tfrecord", "tfrecord", "x.tfrecord", "", ["record"], lambda r: [r[1]],
        "SELECT record FROM %s(?)", lambda t: bytes(t[0])),
    Fmt("tfrecord@2-gzip", "tfrecord", "x@2.tfrecord", ", compression=gzip", ["record"],
        lambda r: [r[1]], "SELECT record FROM %s(?)", lambda t: bytes(t[0])),
]


def want_rows(fmt, rows):
    """rows as fmt.read gives them back."""
    if fmt.module in ("bagz", "tfrecord"):
        return [r[1] for r in rows]
    if fmt.module == "datadings":
        return [("k%d" % r[0], r[1].hex()) for r in rows]
    return [(r[0], r[1].hex()) for r in rows]


OLD = [(1000 + k, random.Random(1000 + k).randbytes(2000)) for k in range(4)]
_case = [0]


def same(got, want):
    """'' when equal, else a short account of the difference."""
    if isinstance(got, str):
        return got
    if got == want:
        return ""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "%d rows (want %d), row %d differs" % (len(got), len(want), i)
    return "%d rows, want %d" % (len(got), len(want))


def run_case(fmt, name, fault, arm_at=0):
    """One transaction with `fault` armed before statement `arm_at` (0:
    after BEGIN; STATEMENTS: just before COMMIT). Returns the control
    file's state at the end."""
    at_commit = arm_at == STATEMENTS
    _case[0] += 1
    folder = os.path.join(DATA, "case%d" % _case[0])
    os.mkdir(folder)
    path = os.path.join(folder, fmt.target)
    conn = connect(BUILD)
    conn.isolation_level = None
    fmt.writer(conn, path, "create")
    fmt.insert(conn, OLD)
    conn.close()
    old = want_rows(fmt, OLD)
    if not C.eq(same(fmt.read(path), old), "", "%s %s: the old dataset reads back" % (fmt.label, name)):
        return ""
    conn = connect(BUILD)
    conn.isolation_level = None
    fmt.writer(conn, path, "replace")
    conn.execute("BEGIN")
    accepted, errors = [], []
    for s in range(STATEMENTS):
        if s == arm_at:
            arm(fault)
        rows = fmt.rows_of(s)
        try:
            fmt.insert(conn, rows)
            accepted += rows
        except sqlite3.Error as e:
            errors.append(str(e))
    # a failed statement undoes only itself (SQLite ends the whole
    # transaction when the undo fails, and later statements commit alone)
    C.check(conn.in_transaction, "%s %s: the transaction is still open after the statements"
            % (fmt.label, name), "errors %r" % errors[:2])
    if at_commit:
        arm(fault)
    commit_error = None
    try:
        conn.execute("COMMIT")
    except sqlite3.Error as e:
        commit_error = str(e)
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
    state = ctl_state()
    arm("off")
    conn.close()
    got = fmt.read(path)
    fired = state.startswith("fired ")
    label = "%s %s" % (fmt.label, name)
    if commit_error is None:
        C.eq(same(got, want_rows(fmt, accepted)), "",
             "%s: COMMIT succeeded and the dataset reads back the %d accepted rows"
             % (label, len(accepted)))
    else:
        C.eq(same(got, old), "", "%s: COMMIT failed (%s) and the old dataset reads back intact"
             % (label, commit_error[:120]))
    if fmt.label == "bcolz-object":  # upstream counts the chunk files: one a row
        files = len([f for f in os.listdir(os.path.join(path, "o", "data")) if f.endswith(".blp")])
        C.eq(files, len(accepted if commit_error is None else OLD),
             "%s: one chunk file a row in o/data" % label)
    if fired:
        where = os.path.basename(state.split(" ", 2)[2])
        said = errors + ([commit_error] if commit_error else [])
        C.check(any(where in e for e in said), "%s: the fault is reported, naming %s" % (label, where),
                "statement errors %r, COMMIT %r" % (errors[:2], commit_error))
    elif not at_commit:
        C.eq(errors, [], "%s: no fault, no statement failed" % label)
    shutil.rmtree(folder, ignore_errors=True)
    return state


# the shim is in place: an armed write under the folder fails
probe = os.path.join(DATA, "probe")
fd = os.open(probe, os.O_WRONLY | os.O_CREAT)
arm("1 eio 0")
try:
    os.write(fd, b"x")
    C.check(False, "fault shim: the armed write fails with EIO")
except OSError as e:
    C.eq(e.errno, 5, "fault shim: the armed write fails with EIO")
arm("off")
os.close(fd)
os.unlink(probe)

for fmt in FORMATS:
    # dry run: how many writes the transaction makes (INSERTs and COMMIT)
    state = run_case(fmt, "no fault", "1000000000 count 0")
    writes = int(state.split()[2]) if state.split()[1:2] == ["count"] else 0
    C.check(writes > 0, "%s: the transaction writes under the folder (%d writes)"
            % (fmt.label, writes))
    points = sorted({max(1, (writes * q + 3) // 4) for q in range(5)})
    for kind in ("short", "enospc", "eio"):
        for n in points:
            run_case(fmt, "%s at write %d of %d" % (kind, n, writes), "%d %s 0" % (n, kind))
    st = run_case(fmt, "short at the last statement's first write", "1 short 0",
                  arm_at=STATEMENTS - 1)
    C.check(st.startswith("fired "), "%s: the last statement writes (the fault fired)"
            % fmt.label, st)
    st = run_case(fmt, "ENOSPC at COMMIT's first write", "1 enospc 0", arm_at=STATEMENTS)
    C.check(st.startswith("fired "), "%s: COMMIT writes (the fault fired)" % fmt.label, st)
    st = run_case(fmt, "ENOSPC at COMMIT's first fsync", "1 fsync 0", arm_at=STATEMENTS)
    C.check(st.startswith("fired "), "%s: COMMIT fsyncs (the fault fired)" % fmt.label, st)

# datadings' key hashes: a temporary written on the hasher's thread, 24
# bytes a key, flushed at 1 MiB (about 44,000 keys): 8 statements of 7,000
# keys, the fault at its first write (only paths containing "hashes")
KEYS = Fmt("datadings-keys", "datadings", "x.msgpack", "", ["key", "sample"],
           lambda r: ["k%d" % r[0], js({"d": r[1].hex()})],
           "SELECT key, sample FROM %s(?)", lambda t: (t[0], json.loads(t[1])["d"]),
           rows_of=lambda s: [(s * 7000 + k, b"%d" % k) for k in range(7000)])
for kind in ("short", "enospc", "eio"):
    st = run_case(KEYS, "%s at the key hashes' first write" % kind, "1 %s 0 hashes" % kind)
    C.check(st.startswith("fired "), "datadings-keys %s: the key hashes are written (the fault "
            "fired)" % kind, st)

C.exit()
