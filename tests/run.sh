#!/bin/sh
# run.sh - run the tests against a build folder and count the results.
# Usage: tests/run.sh [build-dir] [filter]. With a filter, only the tests
# whose name contains it run (names as printed: unit/test_bagz_reader,
# tests/conformance/test_bagz_fixtures.py, tests/sql/bagz.test), e.g.
# `tests/run.sh build bagz` or `make test T=bagz`. The layering check
# (tools/check_layers.sh) runs first, filter or not.
# Each test prints lines starting with "PASS " or "FAIL "; a test program
# that exits non-zero without printing a FAIL line counts as one failure.
# Ends with "N passed, N failed".
# DS_SANITIZE=1: the build is instrumented (make asan), so the stock
# sqlite3 shell and python3 get gcc's libasan preloaded.
BUILD=${1:-build}
FILTER=${2:-}
cd "$(dirname "$0")/.." || exit 2
PY=/usr/bin/python3
LOG=$(mktemp)
# the remote disk cache (src/remote/remote_cache.h) of this run: a fresh
# folder, never the user's ~/.cache
DATASETS_REMOTE_CACHE_DIR=$(mktemp -d)
export DATASETS_REMOTE_CACHE_DIR
# and no freshness window (default 10 s): the tests replace objects from
# outside the extension and read them again at once; test_remote_fresh.py
# checks the default window itself
DATASETS_REMOTE_CACHE_FRESH_MS=0
export DATASETS_REMOTE_CACHE_FRESH_MS
trap 'rm -f "$LOG"; rm -rf "$DATASETS_REMOTE_CACHE_DIR"' EXIT
pass=0
fail=0

if [ "${DS_SANITIZE:-0}" = 1 ]; then
  DS_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export DS_PRELOAD
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

# wanted NAME: 0 when NAME contains the filter (or there is none).
wanted() {
  case "$1" in *"$FILTER"*) return 0 ;; *) return 1 ;; esac
}

# run NAME CMD...: run one test program, tally its PASS/FAIL lines.
run() {
  name=$1
  shift
  "$@" >"$LOG" 2>&1
  rc=$?
  p=$(grep -c '^PASS ' "$LOG")
  f=$(grep -c '^FAIL ' "$LOG")
  # each FAIL line with the detail lines that follow it (up to 6, until
  # the next PASS/FAIL line): check.h prints a check's details after it
  awk '/^FAIL / { print; n = 6; next }
       /^PASS / { n = 0; next }
       n > 0 { print; n-- }' "$LOG" | head -40
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $name exited with status $rc:"
    tail -20 "$LOG"
    f=1
  fi
  echo "$name: $p passed, $f failed"
  pass=$((pass + p))
  fail=$((fail + f))
}

# with_preload CMD...: a command that loads the extension into a stock binary.
with_preload() {
  if [ -n "${DS_PRELOAD:-}" ]; then LD_PRELOAD="$DS_PRELOAD" "$@"; else "$@"; fi
}

run "tools/check_layers.sh" tools/check_layers.sh
for t in "$BUILD"/unit/test_*; do
  [ -f "$t" ] && [ -x "$t" ] && wanted "unit/$(basename "$t")" && run "unit/$(basename "$t")" "$t"
done
for t in tests/conformance/test_*.py; do
  [ -f "$t" ] && wanted "$t" && run "$t" with_preload $PY "$t" "$BUILD"
done
for t in tests/sql/*.test; do
  [ -f "$t" ] && wanted "$t" && run "$t" with_preload $PY tests/sql/run_sql_tests.py "$BUILD" "$t"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
