#!/bin/sh
# run.sh - run every libFuzzer harness built by `make fuzz` (build/fuzz/fuzz_*)
# for SECONDS seconds each.
# Usage: tests/fuzz/run.sh SECONDS
#
# Each harness gets a corpus folder build/fuzz/corpus-<name> (kept between
# runs, so it grows), seeded from the upstream fixtures of its format that
# are smaller than 64 KiB, plus the saved regression inputs of
# tests/fuzz/regressions/<format>/. Crash inputs land in
# build/fuzz/artifacts-<name>/. Exits non-zero when any harness crashes,
# leaks, times out or runs out of memory; prints the executions per harness
# and in total (libFuzzer's final stat::number_of_executed_units).
SECONDS_EACH=${1:?usage: tests/fuzz/run.sh SECONDS}
cd "$(dirname "$0")/../.." || exit 2
OUT=build/fuzz
FIX=tests/fixtures/upstream
total=0
failed=0
found=0

# seed NAME DIR: fill the corpus folder DIR for harness NAME.
seed() {
  name=$1
  dir=$2
  fmt=${name#fuzz_}
  case "$fmt" in
    bagz)
      # fuzz_bagz reads one option byte, then the file: seed each fixture
      # as none (0x01), zstd (0x02) and auto .bagz + interleaved (0x0c).
      for f in "$FIX"/bagz/*.bag*; do
        [ -f "$f" ] || continue
        [ "$(wc -c <"$f")" -lt 65536 ] || continue
        b=$(basename "$f")
        for sel in 01 02 0c; do
          { printf "\\$(printf '%03o' "0x$sel")"; cat "$f"; } >"$dir/seed-$sel-$b"
        done
      done
      ;;
    *)
      for f in "$FIX/$fmt"/*; do
        [ -f "$f" ] || continue
        [ "$(wc -c <"$f")" -lt 65536 ] || continue
        cp "$f" "$dir/seed-$(basename "$f")"
      done
      ;;
  esac
  for f in tests/fuzz/regressions/"$fmt"/*; do
    case "$f" in *.md) continue ;; esac
    [ -f "$f" ] && cp "$f" "$dir/regression-$(basename "$f")"
  done
  return 0
}

set -- "$OUT"/fuzz_*
if [ ! -x "$1" ]; then
  echo "run.sh: no harness in $OUT (run 'make fuzz' first)" >&2
  exit 2
fi

for bin in "$@"; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus=$OUT/corpus-$name
  art=$OUT/artifacts-$name
  log=$OUT/$name.log
  mkdir -p "$corpus" "$art"
  seed "$name" "$corpus"
  found=$((found + 1))
  echo "== $name: ${SECONDS_EACH}s, corpus $corpus ($(ls "$corpus" | wc -l) inputs)"
  "$bin" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -max_len=65536 \
    -timeout=25 -print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  if [ "$rc" -ne 0 ] || grep -q '^==[0-9]*==ERROR\|^SUMMARY: \|deadly signal' "$log"; then
    failed=$((failed + 1))
    echo "FAIL $name (exit $rc) after $execs executions; log: $log"
    grep -m1 -A25 '==ERROR\|runtime error\|deadly signal\|contract violated' "$log"
    ls -l "$art" | tail -n +2
  else
    echo "ok   $name: $execs executions"
  fi
done

echo "total executions: $total"
[ "$found" -gt 0 ] && [ "$failed" -eq 0 ]
