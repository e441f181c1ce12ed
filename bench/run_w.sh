#!/bin/sh
# run_w.sh - the writing workloads W-B1 and W-D1 (BENCHMARK.md), called by
# bench/run.sh (BENCH_ONLY=w, or a run of everything) after it built
# build/bench/bench_w and generated B1 and D1. Each figure is the minimum
# of $RUNS runs, variants interleaved; peak RSS of one copy in a fresh
# process at 1/10 and full size (/usr/bin/time). Output goes to stdout and
# build/bench/RESULTS-w.txt.
# Environment: BENCH_DIR, BENCH_RUNS (default 3), BENCH_EXT.
set -eu
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/sqlite-datasets-bench}
RUNS=${BENCH_RUNS:-3}
EXT=${BENCH_EXT:-build/datasets}
OUT=build/bench
W="$BENCH_DIR/w"
mkdir -p "$W"
B="$OUT/bench_w"

ms() { sed -n 's/^ms=\([0-9.]*\).*/\1/p'; }
min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

# best NAME CMD...: min ms of CMD over RUNS runs into $OUT/w-NAME.ms
# (one run per call; the caller interleaves)
once() { name=$1; shift; "$@" | ms >>"$OUT/w-$name.ms"; }
best() { min <"$OUT/w-$1.ms"; }
rss() { # rss CMD... : peak RSS (KiB) of one run
  /usr/bin/time -f %M -o "$OUT/w-rss.tmp" "$@" >/dev/null && tail -n 1 "$OUT/w-rss.tmp"
}

rm -f "$OUT"/w-*.ms
for r in $(seq "$RUNS"); do
  once bare "$B" "$EXT" wb1-bare "$BENCH_DIR/b1@4.bagz"
  once t1 "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/wb1.bagz" 1
  once t2 "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/wb1.bagz" 2
  once cp "$B" "$EXT" wd1-cp "$BENCH_DIR/d1.msgpack" "$W/cp.msgpack"
  once raw "$B" "$EXT" wd1 "$BENCH_DIR/d1.msgpack" "$W/wd1.msgpack" raw
  once typed "$B" "$EXT" wd1 "$BENCH_DIR/d1.msgpack" "$W/wd1.msgpack" typed
  once native "$B" "$EXT" wd1-native "$BENCH_DIR/d1.msgpack" "$W/native.db"
done
{
  echo "W-B1 / W-D1 (writing), $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), min of $RUNS runs"
  printf '%-34s %10s %10s %7s  %s\n' workload "ours ms" "yard ms" ratio target
  row() { # row NAME OURS YARD TARGET
    awk -v n="$1" -v o="$2" -v y="$3" -v t="$4" 'BEGIN {
      r = o / y
      printf "%-34s %10.0f %10.0f %7.2f  <= %s %s\n", n, o, y, r, t, (r <= t ? "PASS" : "MISS") }'
  }
  row "W-B1 copy threads=1 / bare zstd" "$(best t1)" "$(best bare)" 1.15
  row "W-B1 copy threads=2 / bare zstd" "$(best t2)" "$(best bare)" 0.65
  row "W-D1 copy by raw / cp" "$(best raw)" "$(best cp)" 2.0
  row "W-D1 copy typed / CREATE TABLE AS" "$(best typed)" "$(best native)" 1.5
  echo
  echo "peak RSS of one copy in a fresh process (KiB), 1/10 vs full size:"
  s=$(rss "$B" "$EXT" wb1 "$BENCH_DIR/b1small@4.bagz" "$W/m.bagz" 2)
  f=$(rss "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/m.bagz" 2)
  echo "  W-B1 threads=2: $s / $f"
  s=$(rss "$B" "$EXT" wd1 "$BENCH_DIR/d1small.msgpack" "$W/m.msgpack" raw)
  f=$(rss "$B" "$EXT" wd1 "$BENCH_DIR/d1.msgpack" "$W/m.msgpack" raw)
  # the source's own reader (keys and offsets tables, mapped pages) grows
  # too: measured alone by a scan that reads key and raw
  rs=$(rss sqlite3 :memory: ".load $EXT" \
    "SELECT count(*), sum(length(key)), sum(length(raw)) FROM datadings('$BENCH_DIR/d1small.msgpack')")
  rf=$(rss sqlite3 :memory: ".load $EXT" \
    "SELECT count(*), sum(length(key)), sum(length(raw)) FROM datadings('$BENCH_DIR/d1.msgpack')")
  awk -v s="$s" -v f="$f" -v rs="$rs" -v rf="$rf" 'BEGIN {
    all = (f - s) * 1024 / 900000; rd = (rf - rs) * 1024 / 900000
    printf "  W-D1 raw: %d / %d KiB: %.1f bytes per sample beyond the 1/10 run; the source reader alone %.1f;\n", s, f, all, rd
    printf "  the writer %.1f bytes per sample (keys \"s%%07d\": 8 bytes; target <= 48 + 8) %s\n",
           all - rd, (all - rd <= 56 ? "PASS" : "MISS") }'
} | tee "$OUT/RESULTS-w.txt"
rm -rf "$W" "$OUT"/w-*.ms "$OUT/w-rss.tmp"
