#!/bin/sh
# run.sh - run every test against a build folder and count the results.
# Usage: tests/run.sh [build-dir] [unit]. Each test prints lines starting with
# "PASS " or "FAIL "; a test program that exits non-zero without printing a
# FAIL line counts as one failure. Ends with "N passed, N failed".
# DS_SANITIZE=1: the build is instrumented (make asan), so the stock
# sqlite3 shell and python3 get gcc's libasan preloaded.
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
PY=/usr/bin/python3
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
pass=0
fail=0

if [ "${DS_SANITIZE:-0}" = 1 ]; then
  DS_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export DS_PRELOAD
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi

# run NAME CMD...: run one test program, tally its PASS/FAIL lines.
run() {
  name=$1
  shift
  "$@" >"$LOG" 2>&1
  rc=$?
  p=$(grep -c '^PASS ' "$LOG")
  f=$(grep -c '^FAIL ' "$LOG")
  grep -A3 '^FAIL ' "$LOG" | head -40
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

for t in "$BUILD"/unit/test_*; do
  [ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
if [ "${2:-}" != unit ]; then # "unit": the C test programs only (make tsan)
  for t in tests/conformance/test_*.py; do
    [ -f "$t" ] && run "$t" with_preload $PY "$t" "$BUILD"
  done
  run "sql shell tests" with_preload $PY tests/sql/run_sql_tests.py "$BUILD"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
