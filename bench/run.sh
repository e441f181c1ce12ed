#!/bin/sh
# run.sh - the benchmark (`make bench` runs this after building
# build/datasets.so). Builds the bench programs into build/bench/, generates
# the datasets once into ${BENCH_DIR:-/tmp/sqlite-datasets-bench} (outside
# the source tree), runs each workload's driver from the repo root, measures
# peak RSS of the scans at 1/10 and full size, and prints the table, also
# written to build/bench/RESULTS-<workload>.txt. Workloads: B1 (bagz), D1
# (datadings), A1 (atlas), then C1 (bcolz), then F-B1 (B1 on Dask,
# bench/bench_fb1.py: needs python3-dask/-distributed/-pandas), then T-B1
# (bagz of tf.Example records), then TF-1 (the same records as one TFRecord
# file, bench/bench_tf1.c; needs T-B1's bag); a run of all of them also writes
# bench/RESULTS.md (bench/results_md.py). Safe to run repeatedly.
# Environment: BENCH_DIR (data folder), BENCH_RUNS (timed runs, default 5),
# BENCH_ONLY (b1, d1, a1, c1, fb1, tb1 or tf1: run only that workload; r: the
# remote rows, or one of them: rb1scan, rb1point, rb1open, rd1key, ra1scan,
# rc1scan, rw1 (RW-B1: copying B1 to s3://); default all), BENCH_EXT (the extension the drivers load, default
# build/datasets), BENCH_REMOTE_RUNS (timed runs of the remote rows, default
# the smaller of BENCH_RUNS and 3). The remote rows (bench/bench_remote.py)
# start nginx and the tests' S3 front on 127.0.0.1 (tests/conformance/).
# A1 needs /usr/bin/python3 with numpy and zstandard (Debian packages
# python3-numpy, python3-zstandard) for its generator and its CPython
# pickle yardstick.
set -eu
cd "$(dirname "$0")/.."

BENCH_DIR=${BENCH_DIR:-/tmp/sqlite-datasets-bench}
RUNS=${BENCH_RUNS:-5}
ONLY=${BENCH_ONLY:-}
EXT=${BENCH_EXT:-build/datasets}
OUT=build/bench
CFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2"

if [ ! -f "$EXT.so" ]; then
  echo "bench: $EXT.so is missing - build it first (make)" >&2
  exit 1
fi
mkdir -p "$OUT" "$BENCH_DIR"

build() { # build NAME SOURCES... : compile bench/ programs into build/bench
  name=$1; shift
  echo "gcc $name"
  gcc $CFLAGS -o "$OUT/$name" "$@" -lsqlite3 -lzstd -lmsgpackc -lb2 -lmd -lm
}
want() { # want ID : the workload runs (BENCH_ONLY unset or equal to ID)
  [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]
}
want_r() { # want_r [ROW] : the remote rows (or remote row ROW) run
  [ -z "$ONLY" ] || [ "$ONLY" = r ] || { [ -n "${1:-}" ] && [ "$ONLY" = "$1" ]; } ||
    { [ -z "${1:-}" ] && case "$ONLY" in r?*) true ;; *) false ;; esac; }
}
case "$ONLY" in
  ""|b1|d1|a1|c1|fb1|w|tb1|tf1|r|rb1scan|rb1point|rb1open|rd1key|ra1scan|rc1scan|rw1) ;;
  *) echo "bench: BENCH_ONLY must be b1, d1, a1, c1, fb1, w, tb1, tf1, r or a remote row" \
       "(rb1scan, rb1point, rb1open, rd1key, ra1scan, rc1scan, rw1)" >&2; exit 2 ;;
esac
build gen_b1 bench/gen_b1.c
build bench_b1 bench/bench_b1.c bench/bench_common.c
build gen_d1 bench/gen_d1.c
build bench_d1 bench/bench_d1.c bench/bench_common.c
# bench_w and bench_wac time every fsync and fdatasync of the process
# (bench/sync_clock.c defines both; exported, the extension and libsqlite3
# bind to them): the write workloads' durability cost
SYNC="bench/sync_clock.c -Wl,--export-dynamic-symbol=fsync -Wl,--export-dynamic-symbol=fdatasync"
# bench_w links the tree's datadings hashes, simplebloom and msgpack walk
# for W-D1's index yardstick (bench/wd1_index.c)
build bench_w -Isrc -DSQLITE_CORE $SYNC bench/bench_w.c bench/bench_common.c bench/wd1_index.c \
  src/formats/datadings/datadings.c src/formats/datadings/simplebloom.c src/decoders/msgpack_value.c \
  src/decoders/msgpack_encode.c src/decoders/msgpack_descr.c src/decoders/msgpack_numpy.c src/decoders/pickle.c \
  src/decoders/pickle_list.c src/core/*.c src/remote/*.c -ljansson -lisal -lpthread
# bench_wac (W-A1, W-C1) links the tree's pickle encoder for its yardstick
build bench_wac -Isrc -DSQLITE_CORE $SYNC bench/bench_wac.c bench/bench_common.c \
  src/decoders/pickle_write.c src/core/*.c src/remote/*.c -lblosc -ljansson -lisal -lpthread
# bench_a1 links the tree's own pickle decoder and .npy parser (compiled
# against libsqlite3 directly, as for the unit tests)
build bench_a1 -Isrc -DSQLITE_CORE bench/bench_a1.c bench/bench_common.c \
  src/decoders/pickle.c src/core/*.c src/remote/*.c -ljansson -lisal -lpthread
build gen_c1 bench/gen_c1.c -lblosc
build bench_c1 bench/bench_c1.c bench/bench_common.c -lblosc
# T-B1 writes and reads tf.Example records with libprotobuf-c and the code
# protoc-c generated from proto/example.proto (build/gen, made by `make`)
build gen_tb1 -Ibuild/gen bench/gen_tb1.c build/gen/example.pb-c.c -lprotobuf-c
build bench_tb1 -Ibuild/gen bench/bench_tb1.c bench/bench_common.c \
  build/gen/example.pb-c.c -lprotobuf-c
# TF-1's bare loops check CRC-32C with ISA-L, as the extension does
build bench_tf1 bench/bench_tf1.c bench/bench_common.c -lisal
# the remote rows' one-query driver (bench/bench_remote.py runs it)
build bench_rq bench/bench_rq.c bench/bench_common.c

have_shards() { # have_shards NAME : all 4 shards of NAME@4.bagz exist
  for s in 0 1 2 3; do
    [ -f "$BENCH_DIR/$1-0000$s-of-00004.bagz" ] || return 1
  done
}
gen() { # gen NAME COUNT
  have_shards "$1" || "$OUT/gen_b1" "$BENCH_DIR" "$2" "$1"
}
gen_dd() { # gen_dd NAME COUNT: NAME.msgpack + index; .md5 is written last
  [ -f "$BENCH_DIR/$1.msgpack.md5" ] || "$OUT/gen_d1" "$BENCH_DIR" "$2" "$1"
}
gen_atlas() { # gen_atlas NAME COUNT: the dataset folder NAME (renamed into
  # place when complete, so NAME/meta.json means a whole dataset)
  [ -f "$BENCH_DIR/$1/meta.json" ] ||
    /usr/bin/python3 bench/gen_a1.py "$BENCH_DIR" "$2" "$1"
}
gen_bcolz() { # gen_bcolz NAME COUNT [EXPECTEDLEN]: the ctable folder NAME
  # (written as NAME.tmp and renamed, so NAME/__rootdirs__ means a whole table)
  [ -f "$BENCH_DIR/$1/__rootdirs__" ] || {
    rm -rf "$BENCH_DIR/$1.tmp"
    "$OUT/gen_c1" "$BENCH_DIR" "$2" "$1" ${3:-}
  }
}
if want b1 || want fb1 || want w || want_r rb1scan || want_r rb1point; then
  gen b1 1000000
  gen b1small 100000
fi
if want d1 || want w || want_r rd1key; then
  gen_dd d1 1000000
  gen_dd d1small 100000
fi
if want a1 || want w || want_r ra1scan; then
  if ! /usr/bin/python3 -c 'import numpy, zstandard' 2>/dev/null; then
    echo "bench: A1 needs /usr/bin/python3 with numpy and zstandard:" \
      "apt-get install -y python3-numpy python3-zstandard" >&2
    exit 1
  fi
  gen_atlas a1 1000000
  gen_atlas a1small 100000
fi
if want tb1 || want tf1; then
  have_tb1=1
  for s in 0 1 2 3; do [ -f "$BENCH_DIR/tb1-0000$s-of-00004.bag" ] || have_tb1=; done
  [ -n "$have_tb1" ] || "$OUT/gen_tb1" "$BENCH_DIR" 1000000 tb1
fi
if want c1 || want w || want_r rc1scan; then
  gen_bcolz c1 10000000
  # the 1/10 table keeps the full table's chunklens (expectedlen), so the
  # mem workload compares row counts, not chunk sizes
  gen_bcolz c1small 1000000 10000000
fi

# peak_rss LOG CMD... : run CMD (a --scan-only driver run) in a fresh
# process with its output (with RssAnon/RssFile at the end of the scan) in
# LOG; the line printed is its peak RSS in KiB (/usr/bin/time -f %M, or the
# driver's own getrusage if time is missing), the smallest of 3 fresh
# processes (as for the times: noise from the shared machine's page cache
# and fault-around only ever adds); LOG holds the last run's output.
peak_rss() {
  log=$1; shift
  best=
  for run in 1 2 3; do
    if [ -x /usr/bin/time ]; then
      /usr/bin/time -f %M -o "$OUT/rss.tmp" "$@" >"$log" || return 1
      kib=$(tail -n 1 "$OUT/rss.tmp")
    else
      "$@" >"$log" || return 1
      kib=$(sed -n 's/.*maxrss_kib=\([0-9]*\).*/\1/p' "$log")
    fi
    if [ -z "$best" ] || [ "$kib" -lt "$best" ]; then best=$kib; fi
  done
  echo "$best"
}
# scan_rss NAME THREADS : one scan of NAME@4.bagz, log in
# $OUT/scan-NAME-THREADS.txt
scan_rss() {
  peak_rss "$OUT/scan-$1-$2.txt" \
    "$OUT/bench_b1" --ext "$EXT" --scan-only "$BENCH_DIR/$1@4.bagz" "$2"
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
  cat "$OUT"/scan-b1*.txt | grep NOTE | sort -u || true
}

mem_rows_d1() { # the D1 mem workload: scans of d1small and d1
  echo
  echo "mem: peak RSS of one scan in a fresh process (KiB), 1/10 vs full size:"
  printf '%-26s %12s %12s %7s  %s\n' workload "1/10 KiB" "full KiB" ratio target
  small=$(peak_rss "$OUT/scan-d1small.txt" \
    "$OUT/bench_d1" --ext "$EXT" --scan-only "$BENCH_DIR/d1small.msgpack") || small=
  full=$(peak_rss "$OUT/scan-d1.txt" \
    "$OUT/bench_d1" --ext "$EXT" --scan-only "$BENCH_DIR/d1.msgpack") || full=
  awk -v s="$small" -v f="$full" 'BEGIN {
    if (s == "" || f == "") {
      printf "%-26s %12s %12s %7s  scan failed\n", "mem scan",
             (s == "" ? "n/a" : s), (f == "" ? "n/a" : f), "n/a"
      exit
    }
    r = f / s
    printf "%-26s %12d %12d %7.2f  ~1.0 (flat) %s\n",
           "mem scan", s, f, r, (r <= 1.25 ? "PASS" : "NOT FLAT")
  }'
  echo "  at the end of each scan (/proc/self/status, KiB):"
  for n in d1small d1; do
    printf '    %-8s  RssAnon %8s  RssFile %8s\n' "$n" \
      "$(d1field $n rss_anon_kib)" "$(d1field $n rss_file_kib)"
  done
  awk -v s="$(d1field d1small rss_anon_kib)" -v f="$(d1field d1 rss_anon_kib)" \
    'BEGIN { if (s > 0 && f > 0)
      printf "  RssAnon alone, full / 1/10: %.2f (%s)\n", f / s,
             (f / s <= 1.25 ? "flat" : "grows") }'
}
d1field() { # d1field NAME KEY : KEY=value from the D1 scan log of NAME
  sed -n "s/.* $2=\([-0-9]*\).*/\1/p" "$OUT/scan-$1.txt" 2>/dev/null
}

mem_rows_a1() { # the A1 mem workload: scans of a1small and a1
  echo
  echo "mem: peak RSS of one scan in a fresh process (KiB), 1/10 vs full size:"
  printf '%-26s %12s %12s %7s  %s\n' workload "1/10 KiB" "full KiB" ratio target
  small=$(peak_rss "$OUT/scan-a1small.txt" \
    "$OUT/bench_a1" --ext "$EXT" --scan-only "$BENCH_DIR/a1small") || small=
  full=$(peak_rss "$OUT/scan-a1.txt" \
    "$OUT/bench_a1" --ext "$EXT" --scan-only "$BENCH_DIR/a1") || full=
  awk -v s="$small" -v f="$full" 'BEGIN {
    if (s == "" || f == "") {
      printf "%-26s %12s %12s %7s  scan failed\n", "mem scan",
             (s == "" ? "n/a" : s), (f == "" ? "n/a" : f), "n/a"
      exit
    }
    r = f / s
    printf "%-26s %12d %12d %7.2f  ~1.0 (flat) %s\n",
           "mem scan", s, f, r, (r <= 1.25 ? "PASS" : "NOT FLAT")
  }'
  echo "  at the end of each scan (/proc/self/status, KiB):"
  for n in a1small a1; do
    printf '    %-8s  RssAnon %8s  RssFile %8s\n' "$n" \
      "$(d1field $n rss_anon_kib)" "$(d1field $n rss_file_kib)"
  done
  awk -v s="$(d1field a1small rss_anon_kib)" -v f="$(d1field a1 rss_anon_kib)" \
    'BEGIN { if (s > 0 && f > 0)
      printf "  RssAnon alone, full / 1/10: %.2f (%s)\n", f / s,
             (f / s <= 1.25 ? "flat" : "grows") }'
}

mem_rows_c1() { # the C1 mem workload: scans of c1small and c1
  echo
  echo "mem: peak RSS of one scan in a fresh process (KiB), 1/10 vs full size:"
  printf '%-26s %12s %12s %7s  %s\n' workload "1/10 KiB" "full KiB" ratio target
  small=$(peak_rss "$OUT/scan-c1small.txt" \
    "$OUT/bench_c1" --ext "$EXT" --scan-only "$BENCH_DIR/c1small") || small=
  full=$(peak_rss "$OUT/scan-c1.txt" \
    "$OUT/bench_c1" --ext "$EXT" --scan-only "$BENCH_DIR/c1") || full=
  awk -v s="$small" -v f="$full" 'BEGIN {
    if (s == "" || f == "") {
      printf "%-26s %12s %12s %7s  scan failed\n", "mem scan",
             (s == "" ? "n/a" : s), (f == "" ? "n/a" : f), "n/a"
      exit
    }
    r = f / s
    printf "%-26s %12d %12d %7.2f  ~1.0 (flat) %s\n",
           "mem scan", s, f, r, (r <= 1.25 ? "PASS" : "NOT FLAT")
  }'
  echo "  at the end of each scan (/proc/self/status, KiB):"
  for n in c1small c1; do
    printf '    %-8s  RssAnon %8s  RssFile %8s\n' "$n" \
      "$(d1field $n rss_anon_kib)" "$(d1field $n rss_file_kib)"
  done
}

rc=0
run_workload() { # run_workload ID TITLE DRIVER MEMFN
  res="$OUT/RESULTS-$1.txt"
  wrc=0
  echo "bench: running $(echo "$1" | tr a-z A-Z) ($RUNS timed runs per variant)" >&2
  {
    echo "$2, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n)"
    "$OUT/$3" --ext "$EXT" --runs "$RUNS" "$BENCH_DIR" || wrc=$?
    $4
  } >"$res.tmp"
  mv "$res.tmp" "$res"
  rm -f "$OUT/rss.tmp"
  cat "$res"
  echo
  echo "bench: results written to $res"
  [ "$wrc" -eq 0 ] || rc=$wrc
}
want b1 && run_workload b1 "B1 bagz benchmark" bench_b1 mem_rows
want d1 && run_workload d1 "D1 datadings benchmark" bench_d1 mem_rows_d1
want a1 && run_workload a1 "A1 atlas benchmark" bench_a1 mem_rows_a1
want c1 && run_workload c1 "C1 bcolz benchmark" bench_c1 mem_rows_c1
if want fb1; then
  echo "== F-B1: B1 fanned out on Dask"
  /usr/bin/python3 bench/bench_fb1.py "$BENCH_DIR" "$EXT" "$RUNS" | tee "$OUT/RESULTS-fb1.txt" ||
    rc=1
fi
if want w; then
  echo "bench: running W (writing: W-B1, W-D1, W-A1, W-C1)" >&2
  BENCH_DIR="$BENCH_DIR" BENCH_EXT="$EXT" bench/run_w.sh || rc=$?
fi
want tb1 && run_workload tb1 "T-B1 bagz tf.Example benchmark" bench_tb1 true
want tf1 && run_workload tf1 "TF-1 tfrecord benchmark" bench_tf1 true
if want_r; then
  # the remote rows: one row (BENCH_ONLY=rb1scan ...) or all of them
  row=; case "$ONLY" in r|"") ;; *) row=$ONLY ;; esac
  rruns=${BENCH_REMOTE_RUNS:-$([ "$RUNS" -lt 3 ] && echo "$RUNS" || echo 3)}
  echo "bench: running R (remote reading, $rruns timed runs per variant)" >&2
  rrc=0
  /usr/bin/python3 bench/bench_remote.py "$BENCH_DIR" "$EXT" "$rruns" $row \
    >"$OUT/RESULTS-r.txt.tmp" || rrc=$?
  mv "$OUT/RESULTS-r.txt.tmp" "$OUT/RESULTS-r.txt"
  cat "$OUT/RESULTS-r.txt"
  echo
  echo "bench: results written to $OUT/RESULTS-r.txt"
  [ "$rrc" -eq 0 ] || rc=$rrc
fi
if [ -z "$ONLY" ]; then
  /usr/bin/python3 bench/results_md.py "$OUT" >bench/RESULTS.md.tmp &&
    mv bench/RESULTS.md.tmp bench/RESULTS.md &&
    echo "bench: the table of every workload written to bench/RESULTS.md"
fi
exit $rc
