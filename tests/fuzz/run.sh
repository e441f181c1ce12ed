#!/bin/sh
# run.sh - run every libFuzzer harness built by `make fuzz` (build/fuzz/fuzz_*)
# for SECONDS seconds each.
# Usage: tests/fuzz/run.sh SECONDS
#
# Each harness gets a corpus folder build/fuzz/corpus-<name> (kept between
# runs, so it grows), seeded from the upstream fixtures of its format that
# are smaller than 64 KiB, plus the saved regression inputs of
# tests/fuzz/regressions/<format>/. The datadings harnesses share
# regressions/datadings/: sample-* files are inputs of fuzz_datadings_sample
# (one sample), index-* files inputs of fuzz_datadings_index (files packed
# as that harness's header describes); their seeds are the fixtures'
# samples cut out by the .offsets files, and the small datasets packed. Crash inputs land in
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

# byte N: write one byte with value N (0..255) to stdout.
byte() {
  printf "\\$(printf '%03o' "$1")"
}

# be16 N: N as 2 bytes, big-endian.
be16() {
  byte $(($1 >> 8 & 255))
  byte $(($1 & 255))
}

# cut_samples DATA DIR PREFIX: every sample of DATA (found through
# DATA.offsets) smaller than 64 KiB as DIR/PREFIX-<i>.
cut_samples() {
  [ -f "$1.offsets" ] || return 0
  od -An -v -tu1 -w8 "$1.offsets" |
    awk '{ v = 0; for (i = 1; i <= NF; i++) v = v * 256 + $i; print v }' |
    awk 'NR > 1 { print prev, $1 - prev } { prev = $1 }' |
    { i=0
      while read -r start len; do
        if [ "$len" -gt 0 ] && [ "$len" -lt 65536 ]; then
          tail -c +"$((start + 1))" "$1" | head -c "$len" >"$2/$3-$i"
        fi
        i=$((i + 1))
      done; }
}

# pack_dataset DATA FLAGS OUT: the files of dataset DATA in the input
# format of fuzz_datadings_index (flag bits: 0 .offsets, 1 .keys,
# 2 .key_hashes, 3 .filter, 4 .index, 5 .md5, 6 two shards); a flagged
# file that is missing is left out of the flags. Skipped when a file is
# 64 KiB or more. The .md5 names are rewritten to the harness's X.msgpack.
pack_dataset() {
  data=$1
  flags=$2
  out=$3
  bit=0
  have=$((flags & 64))
  for suf in .offsets .keys .key_hashes .filter .index .md5; do
    if [ $((flags >> bit & 1)) -eq 1 ] && [ -f "$data$suf" ]; then
      [ "$(wc -c <"$data$suf")" -lt 65536 ] || return 0
      have=$((have | 1 << bit))
    fi
    bit=$((bit + 1))
  done
  [ "$(wc -c <"$data")" -lt 65536 ] || return 0
  base=$(basename "$data")
  {
    byte "$have"
    bit=0
    for suf in .offsets .keys .key_hashes .filter .index .md5; do
      if [ $((have >> bit & 1)) -eq 1 ]; then
        if [ "$suf" = .md5 ]; then
          sed "s/  $base/  X.msgpack/" "$data$suf" >"$out.md5tmp"
          be16 "$(wc -c <"$out.md5tmp")"
          cat "$out.md5tmp"
          rm -f "$out.md5tmp"
        else
          be16 "$(wc -c <"$data$suf")"
          cat "$data$suf"
        fi
      fi
      bit=$((bit + 1))
    done
    cat "$data"
  } >"$out"
}

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
    datadings_sample)
      # one sample per input: the fixtures' samples cut out by .offsets
      for f in "$FIX"/datadings/*/*.msgpack; do
        [ -f "$f" ] || continue
        [ "$(wc -c <"$f")" -lt 262144 ] || continue # not mid (20000 samples)
        cut_samples "$f" "$dir" "seed-$(basename "$f" .msgpack)"
      done
      ;;
    datadings_index)
      # whole small datasets: every file (0x3f), new-style files without
      # .md5 (0x0f), .offsets + .keys only (0x03), the legacy .index with
      # its .md5 (0x30), .keys + .index without .offsets (0x12), and every
      # file as two shards (0x7f)
      for f in "$FIX"/datadings/*/*.msgpack; do
        [ -f "$f" ] || continue
        b=$(basename "$f" .msgpack)
        for flags in 63 15 3 48 18 127; do
          pack_dataset "$f" "$flags" "$dir/seed-$flags-$b"
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
  regs=$fmt
  pat='*'
  case "$fmt" in
    datadings_sample) regs=datadings pat='sample-*' ;;
    datadings_index) regs=datadings pat='index-*' ;;
  esac
  for f in tests/fuzz/regressions/"$regs"/$pat; do
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
