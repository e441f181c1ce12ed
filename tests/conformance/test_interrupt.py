"""test_interrupt.py - long queries stop when SQLite is asked to stop them.

SQLite checks sqlite3_interrupt() and calls the progress handler between
the rows a virtual table returns, but one xFilter call can do long work on
its own: `record = X` on a bag first builds an index of every record (each
one decompressed and hashed). That work polls core/cancel.h, which asks
SQLite (vtab/interrupt.c) whether to stop, stepping a probe statement whose
VM steps reach the progress handler.

A generated bag of 400,000 zstd records (4 KiB each once decompressed;
more on a machine fast enough to index those with few progress calls) is
queried from Debian's python3 sqlite3 module. Every run has a progress
handler (every 1000 VM steps) that counts its calls; nothing here reads a
clock, so a loaded machine cannot change a verdict:
  - the control: the indexed lookup runs to the end and finds the rows,
    with at least MIN_CALLS progress calls on the way;
  - conn.interrupt() (what Ctrl-C does in the shell) from the STOP_AT-th
    progress call, the handler letting the query go on:
    sqlite3.OperationalError "interrupted", with no further progress call
    (it stopped at the first check after the request, long before the
    control's count);
  - a progress handler that asks to stop from its STOP_AT-th call, as
    timeouts are written: the same;
  - the same for a plain scan with the two-thread read-ahead (stopped
    between rows by SQLite itself);
  - a bcolz column of 48M+ int8 rows (uncompressed Blosc chunks) filtered
    on a value no row has, in descending order: one xNext call tests every
    row before it can say there is none; it stops the same way;
  - afterwards the connection works, and the index is built in full by
    the next uninterrupted lookup (an interrupted build is not kept).
Usage: test_interrupt.py BUILD_DIR"""
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.mkdtemp(prefix="interrupt-")
PROGRESS_STEPS = 1000  # VM steps between progress handler calls
STOP_AT = 3            # the progress call at which a run asks to stop
MIN_CALLS = 30         # progress calls an uninterrupted run must make


def make_bag(N):
    """N zstd frames of the same 4 KiB text, except the last record."""
    rec = (b"the quick brown fox jumps over the lazy dog %d " * 100)[:4096]
    src = os.path.join(TMP, "rec.bin")
    with open(src, "wb") as f:
        f.write(rec)
    frame = subprocess.run(["zstd", "-q", "-c", "--no-check", src], check=True,
                           stdout=subprocess.PIPE).stdout
    last = b"needle"
    with open(src, "wb") as f:
        f.write(last)
    last_frame = subprocess.run(["zstd", "-q", "-c", "--no-check", src], check=True,
                                stdout=subprocess.PIPE).stdout
    path = os.path.join(TMP, "big.bagz")
    with open(path, "wb") as f:
        f.write(frame * (N - 1) + last_frame)
        ends = [len(frame) * (i + 1) for i in range(N - 1)] + [len(frame) * (N - 1) + len(last_frame)]
        f.write(struct.pack("<%dQ" % N, *ends))
    return path, rec


def make_carray(nchunks):
    """An int8 carray of nchunks chunks of 2^20 zero rows (memcpyed Blosc)."""
    d = os.path.join(TMP, "carray")
    cl = 1 << 20
    os.makedirs(os.path.join(d, "meta"), exist_ok=True)
    os.makedirs(os.path.join(d, "data"), exist_ok=True)
    n = cl * nchunks
    with open(os.path.join(d, "meta", "sizes"), "w") as f:
        f.write('{"shape": [%d], "nbytes": %d, "cbytes": 0}' % (n, n))
    with open(os.path.join(d, "meta", "storage"), "w") as f:
        f.write('{"dtype": "int8", "cparams": {"clevel": 0, "shuffle": 0, "cname": "blosclz", '
                '"quantize": 0}, "chunklen": %d, "expectedlen": %d, "dflt": 0}' % (cl, n))
    with open(os.path.join(d, "__attrs__"), "w") as f:
        f.write("{}")
    chunk = (b"blpk\x01\x00\x00\x00" + struct.pack("<q", 1) +
             struct.pack("<BBBBIII", 2, 1, 0x02, 1, cl, cl, cl + 16) + bytes(cl))
    for k in range(nchunks):
        p = os.path.join(d, "data", "__%d.blp" % k)
        if not os.path.exists(p):
            with open(p, "wb") as f:
                f.write(chunk)
    return d


def counted(sql, params=(), stop=None, conn=None):
    """Run sql with a progress handler (every PROGRESS_STEPS VM steps) that
    counts its calls. stop="interrupt": at call STOP_AT the handler calls
    conn.interrupt() and lets the query go on; stop="progress": from call
    STOP_AT on it asks to stop. Returns (conn, rows or None, error text or
    None, calls); a fresh connection unless conn is given."""
    conn = conn or connect(BUILD)
    calls = [0]

    def handler():
        calls[0] += 1
        if stop == "interrupt" and calls[0] == STOP_AT:
            conn.interrupt()
        return 1 if stop == "progress" and calls[0] >= STOP_AT else 0

    conn.set_progress_handler(handler, PROGRESS_STEPS)
    try:
        rows, err = conn.execute(sql, params).fetchall(), None
    except sqlite3.Error as e:
        rows, err = None, str(e)
    conn.set_progress_handler(None, 0)
    return conn, rows, err, calls[0]


def check_stopped(label, res, control_calls):
    _, rows, err, calls = res
    C.eq(err, "interrupted", label + ": the query fails with 'interrupted'")
    # asked at progress call STOP_AT, it stopped at the next check: no
    # further progress call, long before the control's count
    C.check(calls == STOP_AT and control_calls > 2 * STOP_AT, label + ": it stopped at once",
            "%d progress calls (asked at call %d; uninterrupted: %d)" % (calls, STOP_AT, control_calls))
    print("     %s: stopped at progress call %d (uninterrupted: %d)" % (label, calls, control_calls))


def main():
    if not shutil.which("zstd"):
        C.check(False, "the zstd tool is installed (tools/deps.sh test)")
        C.exit()
    lookup = "SELECT rowid FROM bagz(?) WHERE record = ?"
    N = 400000
    while True:  # a bag big enough for the index build to take a while
        path, rec = make_bag(N)
        control, rows, err, control_calls = counted(lookup, (path, b"needle"))
        control.close()
        if control_calls >= MIN_CALLS or N >= 3200000:
            break
        N *= 2
    C.eq((rows, err), ([(N - 1,)], None), "control: the indexed lookup finds the row")
    C.check(control_calls >= MIN_CALLS, "control: the index build takes a while",
            "%d progress calls for %d records" % (control_calls, N))

    res = counted(lookup, (path, b"needle"), "interrupt")
    check_stopped("sqlite3_interrupt during the index build", res, control_calls)
    conn = res[0]
    _, rows, err, _ = counted("SELECT count(*) FROM bagz(?)", (path,), conn=conn)
    C.eq((rows, err), ([(N,)], None), "the connection works after the interrupt")
    _, rows, err, _ = counted(lookup, (path, rec), conn=conn)
    C.eq((err, len(rows or []), (rows or [(None,)])[0]), (None, N - 1, (0,)),
         "the next lookup builds the whole index (the interrupted one was dropped)")
    conn.close()

    res = counted(lookup, (path, b"needle"), "progress")
    check_stopped("progress handler during the index build", res, control_calls)
    res[0].close()

    scan = "SELECT sum(length(record)) FROM bagz(?, 'threads=2')"
    c2, rows, err, scan_calls = counted(scan, (path,))
    C.eq((rows, err), ([((N - 1) * 4096 + 6,)], None), "control: the scan reads every record")
    c2.close()
    if scan_calls >= MIN_CALLS:
        for how, label in (("interrupt", "sqlite3_interrupt"), ("progress", "progress handler")):
            res = counted(scan, (path,), how)
            check_stopped(label + " during a read-ahead scan", res, scan_calls)
            res[0].close()
    else:
        C.check(True, "the scan is too short here to interrupt (%d progress calls)" % scan_calls)

    # bcolz: a filtered scan that finds nothing is one long xNext call
    nch = 48
    while True:
        d = make_carray(nch)
        filt = "SELECT rowid FROM t WHERE value = 1 ORDER BY rowid DESC"
        c4 = connect(BUILD)
        c4.execute("CREATE VIRTUAL TABLE temp.t USING bcolz(%s)" % sql_quote(d))
        _, rows, err, filt_calls = counted(filt, conn=c4)
        c4.close()
        if filt_calls >= MIN_CALLS or nch >= 192:
            break
        nch *= 2
    C.eq((rows, err), ([], None), "control: the filtered bcolz scan finds no row")
    C.check(filt_calls >= MIN_CALLS, "control: the filtered bcolz scan takes a while",
            "%d progress calls for %d rows" % (filt_calls, nch << 20))

    for how, label in (("interrupt", "sqlite3_interrupt"), ("progress", "progress handler")):
        conn = connect(BUILD)
        conn.execute("CREATE VIRTUAL TABLE temp.t USING bcolz(%s)" % sql_quote(d))
        res = counted(filt, (), how, conn)
        check_stopped(label + " during a filtered bcolz scan", res, filt_calls)
        conn.close()

    shutil.rmtree(TMP, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
