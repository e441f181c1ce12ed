#!/bin/sh
# run.sh - the benchmark (`make bench` runs this after building
# build/datasets.so). Builds the bench programs into build/bench/, generates
# the datasets once into ${BENCH_DIR:-/tmp/sqlite-datasets-bench} (outside
# the source tree), runs each workload's driver from the repo root, measures
# peak RSS of the scans at 1/10 and full size, and prints the table, also
# written to build/bench/RESULTS-<workload>.txt. Safe to run repeatedly.
# Environment: BENCH_DIR (data folder), BENCH_RUNS (timed runs, default 5).
set -eu
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/sqlite-datasets-bench}
RUNS=${BENCH_RUNS:-5}
OUT=build/bench
CFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2"

if [ ! -f build/datasets.so ]; then
  echo "bench: build/datasets.so is missing - build it first (make)" >&2
  exit 1
fi
mkdir -p "$OUT" "$BENCH_DIR"

build() { # build NAME SOURCES... : compile bench/ programs into build/bench
  name=$1; shift
  echo "gcc $name"
  gcc $CFLAGS -o "$OUT/$name" "$@" -lsqlite3 -lzstd
}
build gen_b1 bench/gen_b1.c
build bench_b1 bench/bench_b1.c bench/bench_common.c

have_shards() { # have_shards NAME : all 4 shards of NAME@4.bagz exist
  for s in 0 1 2 3; do
    [ -f "$BENCH_DIR/$1-0000$s-of-00004.bagz" ] || return 1
  done
}
gen() { # gen NAME COUNT
  have_shards "$1" || "$OUT/gen_b1" "$BENCH_DIR" "$2" "$1"
}
gen b1 1000000
gen b1small 100000

# scan_rss NAME THREADS : one scan of NAME@4.bagz in a fresh process; its
# output (with RssAnon/RssFile at the end of the scan) goes to
# $OUT/scan-NAME-THREADS.txt, and the line printed is its peak RSS in KiB
# (/usr/bin/time -f %M, or the driver's own getrusage if time is missing).
scan_rss() {
  log="$OUT/scan-$1-$2.txt"
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$OUT/rss.tmp" \
      "$OUT/bench_b1" --scan-only "$BENCH_DIR/$1@4.bagz" "$2" >"$log"
    tail -n 1 "$OUT/rss.tmp"
  else
    "$OUT/bench_b1" --scan-only "$BENCH_DIR/$1@4.bagz" "$2" >"$log"
    sed -n 's/.*maxrss_kib=\([0-9]*\).*/\1/p' "$log"
  fi
}
field() { # field NAME THREADS KEY : KEY=value from a scan log
  sed -n "s/.* $3=\([-0-9]*\).*/\1/p" "$OUT/scan-$1-$2.txt" 2>/dev/null
}

mem_rows() { # the mem workload: scans at 1/10 and full size
  echo
  echo "mem: peak RSS of one scan in a fresh process (KiB), 1/10 vs full size:"
  printf '%-26s %12s %12s %7s  %s\n' workload "1/10 KiB" "full KiB" ratio target
  for t in 1 2; do
    small=$(scan_rss b1small $t) || small=
    full=$(scan_rss b1 $t) || full=
    awk -v t="$t" -v s="$small" -v f="$full" 'BEGIN {
      if (s == "" || f == "") {
        printf "%-26s %12s %12s %7s  scan failed\n", "mem scan threads=" t,
               (s == "" ? "n/a" : s), (f == "" ? "n/a" : f), "n/a"
        exit
      }
      r = f / s
      printf "%-26s %12d %12d %7.2f  ~1.0 (flat) %s\n",
             "mem scan threads=" t, s, f, r, (r <= 1.25 ? "PASS" : "NOT FLAT")
    }'
  done
  echo "  at the end of each scan (/proc/self/status, KiB):"
  for t in 1 2; do
    for n in b1small b1; do
      printf '    %-8s threads=%s  RssAnon %8s  RssFile %8s\n' "$n" "$t" \
        "$(field $n $t rss_anon_kib)" "$(field $n $t rss_file_kib)"
    done
  done
  cat "$OUT"/scan-*.txt | grep NOTE | sort -u || true
}

RES="$OUT/RESULTS-b1.txt"
rc=0
echo "bench: running B1 ($RUNS timed runs per variant, about a minute)" >&2
{
  echo "B1 bagz benchmark, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
  "$OUT/bench_b1" --runs "$RUNS" "$BENCH_DIR" || rc=$?
  mem_rows
} >"$RES.tmp"
mv "$RES.tmp" "$RES"
rm -f "$OUT/rss.tmp"
cat "$RES"
echo
echo "bench: results written to $RES"
exit $rc
