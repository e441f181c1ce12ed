"""test_query_fuzz.py - the differential query fuzzer (tests/fuzz/query_fuzz.py)
with fixed seeds: saved regressions in tests/fuzz/regressions/queries/ are
replayed, then FUZZ_QUERIES (default 300) random queries per format and seed
must give the same rows from each virtual table as from its native copy.
Usage: test_query_fuzz.py BUILD_DIR"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fuzz"))
from dstest import Checker  # noqa: E402
import query_fuzz  # noqa: E402

SEEDS = [1, 2]


def main():
    """Run the fuzzer, reporting through the shared Checker."""
    c = Checker()
    count = int(os.environ.get("FUZZ_QUERIES", "300")) // len(SEEDS)
    query_fuzz.main(sys.argv[1], SEEDS, count, c.check)
    c.exit()


if __name__ == "__main__":
    main()
