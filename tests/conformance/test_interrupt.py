"""test_interrupt.py - long queries stop when SQLite is asked to stop them.

SQLite checks sqlite3_interrupt() and calls the progress handler between
the rows a virtual table returns, but one xFilter call can do long work on
its own: `record = X` on a bag first builds an index of every record (each
one decompressed and hashed). That work polls core/cancel.h, which asks
SQLite (vtab/interrupt.c) whether to stop.

A generated bag of 400,000 zstd records (4 KiB each once decompressed;
more on a machine fast enough to index those in under a second) is
queried from Debian's python3 sqlite3 module:
  - the control: the indexed lookup runs to the end and finds the rows;
  - conn.interrupt() from a timer thread 0.2 s into that lookup (what
    Ctrl-C does in the shell): sqlite3.OperationalError "interrupted", well
    before the control's time;
  - a progress handler (every 1000 VM steps) that asks to stop after
    0.2 s, as timeouts are written: the same error, as quickly;
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
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dstest import Checker, connect, sql_quote  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
C = Checker()
TMP = tempfile.mkdtemp(prefix="interrupt-")
STOP_AFTER = 0.2


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


def timed(conn, sql, params=()):
    """(rows or None, error text or None, seconds)."""
    t = time.monotonic()
    try:
        rows = conn.execute(sql, params).fetchall()
        return rows, None, time.monotonic() - t
    except sqlite3.Error as e:
        return None, str(e), time.monotonic() - t


def with_interrupt(sql, params=()):
    """Run sql on a fresh connection, calling conn.interrupt() after
    STOP_AFTER seconds from another thread."""
    conn = connect(BUILD)
    timer = threading.Timer(STOP_AFTER, conn.interrupt)
    timer.start()
    res = timed(conn, sql, params)
    timer.cancel()
    return conn, res


def with_progress(sql, params=()):
    """Run sql on a fresh connection whose progress handler (every 1000 VM
    steps) asks to stop once STOP_AFTER seconds have passed."""
    conn = connect(BUILD)
    deadline = time.monotonic() + STOP_AFTER
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
    res = timed(conn, sql, params)
    conn.set_progress_handler(None, 0)
    return conn, res


def check_stopped(label, res, control_s):
    rows, err, secs = res
    C.eq(err, "interrupted", label + ": the query fails with 'interrupted'")
    # it stopped soon after it was asked to (at STOP_AFTER), and long
    # before the uninterrupted query would have ended
    C.check(secs < STOP_AFTER + max(0.6, control_s * 0.25) and secs < control_s * 0.75,
            label + ": it stopped quickly", "%.2f s (uninterrupted: %.2f s)" % (secs, control_s))
    print("     %s: stopped after %.2f s (uninterrupted: %.2f s)" % (label, secs, control_s))


def main():
    if not shutil.which("zstd"):
        C.check(False, "the zstd tool is installed (tools/deps.sh test)")
        C.exit()
    lookup = "SELECT rowid FROM bagz(?) WHERE record = ?"
    N = 400000
    while True:  # a bag big enough for the index build to take a second
        path, rec = make_bag(N)
        control = connect(BUILD)
        rows, err, control_s = timed(control, lookup, (path, b"needle"))
        control.close()
        if control_s >= 1.0 or N >= 3200000:
            break
        N *= 2
    C.eq((rows, err), ([(N - 1,)], None), "control: the indexed lookup finds the row")
    C.check(control_s > 3 * STOP_AFTER, "control: the index build takes a while",
            "%.2f s for %d records" % (control_s, N))

    conn, res = with_interrupt(lookup, (path, b"needle"))
    check_stopped("sqlite3_interrupt during the index build", res, control_s)
    rows, err, _ = timed(conn, "SELECT count(*) FROM bagz(?)", (path,))
    C.eq((rows, err), ([(N,)], None), "the connection works after the interrupt")
    rows, err, _ = timed(conn, lookup, (path, rec))
    C.eq((err, len(rows or []), (rows or [(None,)])[0]), (None, N - 1, (0,)),
         "the next lookup builds the whole index (the interrupted one was dropped)")
    conn.close()

    conn, res = with_progress(lookup, (path, b"needle"))
    check_stopped("progress handler during the index build", res, control_s)
    conn.close()

    scan = "SELECT sum(length(record)) FROM bagz(?, 'threads=2')"
    c2 = connect(BUILD)
    rows, err, scan_s = timed(c2, scan, (path,))
    C.eq((rows, err), ([((N - 1) * 4096 + 6,)], None), "control: the scan reads every record")
    c2.close()
    if scan_s > 3 * STOP_AFTER:
        conn, res = with_interrupt(scan, (path,))
        check_stopped("sqlite3_interrupt during a read-ahead scan", res, scan_s)
        conn.close()
        conn, res = with_progress(scan, (path,))
        check_stopped("progress handler during a read-ahead scan", res, scan_s)
        conn.close()
    else:
        C.check(True, "the scan is too quick here to interrupt (%.2f s)" % scan_s)

    # bcolz: a filtered scan that finds nothing is one long xNext call
    nch = 48
    while True:
        d = make_carray(nch)
        filt = "SELECT rowid FROM t WHERE value = 1 ORDER BY rowid DESC"
        c4 = connect(BUILD)
        c4.execute("CREATE VIRTUAL TABLE temp.t USING bcolz(%s)" % sql_quote(d))
        rows, err, filt_s = timed(c4, filt)
        c4.close()
        if filt_s >= 1.0 or nch >= 192:
            break
        nch *= 2
    C.eq((rows, err), ([], None), "control: the filtered bcolz scan finds no row")
    C.check(filt_s > 3 * STOP_AFTER, "control: the filtered bcolz scan takes a while",
            "%.2f s for %d rows" % (filt_s, nch << 20))

    def bcolz_conn(fn):
        conn = connect(BUILD)
        conn.execute("CREATE VIRTUAL TABLE temp.t USING bcolz(%s)" % sql_quote(d))
        return fn(conn)

    def stop_by_interrupt(conn):
        timer = threading.Timer(STOP_AFTER, conn.interrupt)
        timer.start()
        res = timed(conn, filt)
        timer.cancel()
        return conn, res

    def stop_by_progress(conn):
        deadline = time.monotonic() + STOP_AFTER
        conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 1000)
        return conn, timed(conn, filt)

    conn, res = bcolz_conn(stop_by_interrupt)
    check_stopped("sqlite3_interrupt during a filtered bcolz scan", res, filt_s)
    conn.close()
    conn, res = bcolz_conn(stop_by_progress)
    check_stopped("progress handler during a filtered bcolz scan", res, filt_s)
    conn.close()

    shutil.rmtree(TMP, ignore_errors=True)
    C.exit()


if __name__ == "__main__":
    main()
