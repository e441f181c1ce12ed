"""dstest.py - shared helpers of the Python tests: load the extension into
Debian's python3 sqlite3, decode the fixtures' typed JSON, and report each
assertion as a "PASS name" / "FAIL name: detail" line for tests/run.sh.
A check function that raises is one FAIL (Checker.run), and the script goes
on; an exception outside one still ends the script with a FAIL line."""
import contextlib
import os
import sqlite3
import struct
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "upstream")


class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0
        # an exception no run() caught: one FAIL line with where it came
        # from (not just a non-zero exit), then Python's usual report
        previous = sys.excepthook

        def hook(kind, value, tb):
            if issubclass(kind, Exception):
                self._raised(os.path.basename(sys.argv[0]) + ": stopped", value, tb)
            previous(kind, value, tb)
        sys.excepthook = hook

    def _raised(self, label, e, tb):
        """One FAIL for exception e, with its last frames indented below."""
        self.check(False, "%s: raised %s" % (label, type(e).__name__), str(e))
        frames = [f for f in traceback.format_tb(tb) if "dstest.py" not in f]
        for line in frames[-3:]:
            for part in line.rstrip().splitlines():
                print("    " + part)
        sys.stdout.flush()

    def run(self, fn, *args, name=None):
        """Run the check function fn(*args) and return its result. An
        exception it raises (other than SystemExit / KeyboardInterrupt) is
        one FAIL line naming the function, and the script goes on with the
        next; the result is then None."""
        try:
            return fn(*args)
        except Exception as e:  # noqa: BLE001 - reported, then the next check
            self._raised(name or getattr(fn, "__name__", "check"), e, e.__traceback__)
            return None

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print("PASS", name)
        else:
            self.failed += 1
            print("FAIL", name + (": " + str(detail)[:500] if detail else ""))
        return ok

    def eq(self, got, want, name):
        return self.check(got == want, name, "got %r, want %r" % (_short(got), _short(want)))

    def raises(self, fn, name, *needles):
        """fn() must raise sqlite3.Error whose text contains every needle."""
        try:
            got = fn()
        except sqlite3.Error as e:
            msg = str(e)
            missing = [n for n in needles if n not in msg]
            return self.check(not missing, name, "error %r lacks %r" % (msg, missing))
        return self.check(False, name, "no error, got %r" % (_short(got),))

    def exit(self):
        sys.exit(1 if self.failed else 0)


def _short(v):
    r = repr(v)
    return r if len(r) < 300 else r[:300] + "..."


def connect(build):
    conn = sqlite3.connect(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(build, "datasets"))
    return conn


def typed(v):
    """Decode the fixtures' typed JSON: {"$bytes_hex": ...} -> bytes."""
    if isinstance(v, dict) and "$bytes_hex" in v:
        return bytes.fromhex(v["$bytes_hex"])
    if isinstance(v, list):
        return [typed(x) for x in v]
    return v


def sql_quote(s):
    return "'" + s.replace("'", "''") + "'"


def error_of(conn, sql, *args):
    """The text of the sqlite3.Error that running sql on conn raises
    (rows fetched), or None when it succeeds."""
    try:
        conn.execute(sql, args).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


def tree(folder):
    """{relative path: bytes} of every file below folder."""
    out = {}
    for r, _, fs in os.walk(folder):
        for f in fs:
            p = os.path.join(r, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, folder)] = fh.read()
    return out


def bucket_bag(build, prefix, name, records):
    """A fresh temporary folder (prefix) with a bucket folder bkt holding
    the bag `name` of records, written by the extension (mode=create):
    (root, the bag's path). The caller removes root."""
    import tempfile
    root = tempfile.mkdtemp(prefix=prefix)
    os.makedirs(os.path.join(root, "bkt"))
    path = os.path.join(root, "bkt", name)
    w = connect(build)
    w.execute("CREATE VIRTUAL TABLE temp.w USING bagz(%s, mode=create)" % sql_quote(path))
    w.executemany("INSERT INTO temp.w(record) VALUES (?)", [(r,) for r in records])
    w.commit()
    w.close()
    return root, path


def open_remote_bag(build, s3, key, threads):
    """A connection with temp.r: bagz(s3.url(key), threads=threads), opened
    (a count(*) ran), and s3's log cleared after the open."""
    conn = connect(build)
    conn.execute("CREATE VIRTUAL TABLE temp.r USING bagz(%s, threads=%d)"
                 % (sql_quote(s3.url(key)), threads))
    conn.execute("SELECT count(*) FROM temp.r").fetchone()
    s3.log.clear()
    return conn


def write_tail_bag(path, records):
    """A bag of raw records with tail limits (one u64 end per record after
    the records), as upstream's bagz writer lays it out."""
    ends, pos = [], 0
    for r in records:
        pos += len(r)
        ends.append(pos)
    with open(path, "wb") as f:
        f.write(b"".join(records) + struct.pack("<%dQ" % len(ends), *ends))
    return path


def range_gets(log, name=None, status=None):
    """(arrival, start, end) of the GETs with an explicit byte range in a
    request log of the tests' S3 front (s3_front.Front.requests()), of the
    object whose path ends in "/name" if given, answered `status` if given."""
    out = []
    for when, method, path, rng, _, st in log:
        if (method == "GET" and rng and not rng.startswith("bytes=-")
                and (name is None or path.endswith("/" + name))
                and (status is None or st == status)):
            a, b = rng[len("bytes="):].split("-")
            out.append((when, int(a), int(b)))
    return out


def fetched(log):
    """Body bytes the answered (206) explicit range GETs of the log asked for."""
    return sum(b - a + 1 for _, a, b in range_gets(log, status=206))


def c_define(header, name):
    """The value of `#define name <integer expression>` in the source file
    header (relative to the repo root), e.g. ((uint64_t)8 << 20): so that a
    test's expected sizes follow the code's constants."""
    import re
    with open(os.path.join(ROOT, header)) as f:
        for line in f:
            m = re.match(r"#define\s+%s\s+(.*?)\s*(/\*.*)?$" % re.escape(name), line)
            if m:
                expr = re.sub(r"\((?:u?int\d+_t|size_t|unsigned)\)", "", m.group(1))
                if not re.fullmatch(r"[0-9\s()<>*+-]+", expr):
                    raise ValueError("%s: %s is not a plain integer: %s" % (header, name, expr))
                return eval(expr)
    raise KeyError("%s: no #define %s" % (header, name))


def first_at_zero(log, name):
    """(start, end) of the first range GET of `name` that starts at byte 0."""
    return next(((a, b) for _, a, b in range_gets(log, name) if a == 0), None)


@contextlib.contextmanager
def environ(**values):
    """Set environment variables for the block, then restore each one (unset
    again if it was unset before)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def from_zero(log, name):
    """Bytes of `name` asked for in one run from byte 0 (range GETs of the
    log that follow each other without a gap)."""
    end = 0
    for _, a, b in sorted(range_gets(log, name), key=lambda g: g[1]):
        if a > end:
            break
        end = max(end, b + 1)
    return end


def next_shard_hint(t, s3, conn, table, name, want0):
    """(test_remote_scan_shards and _atlas) threads=1, a fresh table: with the scan standing at row 0 (shard 0
    is within 4 MiB of its end), the next shard's first bytes asked for
    ahead are more than 1 MiB (the hint of the next shard: up to 4 MiB, so
    that the walk does not wait a round trip when it gets there)."""
    s3.log.clear()
    cur = conn.execute("SELECT rowid, %s FROM temp.r" % table)
    row = cur.fetchone()
    n = 0
    for _ in range(50):  # the hint's GETs go out on a helper thread: <= 5 s
        n = from_zero(s3.requests(), name)
        if n > 1 << 20:
            break
        time.sleep(0.1)
    t.check(row == want0 and n > 1 << 20, "threads=1: at row 0, more than 1 MiB of %s "
            "asked for ahead (the next shard's hint)" % name, (row == want0, n))
    cur.close()
