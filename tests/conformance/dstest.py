"""dstest.py - shared helpers of the Python tests: load the extension into
Debian's python3 sqlite3, decode the fixtures' typed JSON, and report each
assertion as a "PASS name" / "FAIL name: detail" line for tests/run.sh."""
import os
import sqlite3
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "upstream")


class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0

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
