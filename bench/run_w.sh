#!/bin/sh
# run_w.sh - the writing workloads W-B1, W-D1, W-A1 and W-C1 (BENCHMARK.md),
# called by bench/run.sh (BENCH_ONLY=w, or a run of everything) after it
# built build/bench/bench_w and bench_wac and generated B1, D1, A1 and C1
# (A1's CPython yardstick: bench/bench_wa1_py.py). Each figure is the minimum
# of $RUNS runs, variants interleaved; peak RSS of one copy in a fresh
# process at 1/10 and full size (/usr/bin/time). Output goes to stdout and
# build/bench/RESULTS-w.txt. The durability cost: every copy runs as
# BEGIN; INSERT ... SELECT; COMMIT and reports the COMMIT alone and the time
# inside fsync/fdatasync during the COMMIT (bench/sync_clock.c), each the
# minimum of the runs, as information rows against the whole copy.
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
BW="$OUT/bench_wac"

ms() { sed -n 's/^ms=\([0-9.]*\).*/\1/p'; }
# key NAME: the value of NAME=... in a driver's line
key() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

# once NAME CMD...: one run of CMD, its ms appended to $OUT/w-NAME.ms
# (one run per call; the caller interleaves); a copy's COMMIT and fsync
# times go to w-NAME-commit.ms and w-NAME-fsync.ms
once() {
  name=$1; shift
  "$@" >"$OUT/w-line.tmp"
  ms <"$OUT/w-line.tmp" >>"$OUT/w-$name.ms"
  for k in commit fsync; do
    v=$(key $k <"$OUT/w-line.tmp")
    [ -z "$v" ] || echo "$v" >>"$OUT/w-$name-$k.ms"
  done
}
best() { min <"$OUT/w-$1.ms"; }
rss() { # rss CMD... : peak RSS (KiB) of one run
  /usr/bin/time -f %M -o "$OUT/w-rss.tmp" "$@" >/dev/null && tail -n 1 "$OUT/w-rss.tmp"
}

rm -f "$OUT"/w-*.ms "$OUT/w-a1note.txt"
LOAD=$(uptime | sed 's/.*load average: //')
for r in $(seq "$RUNS"); do
  once bare "$B" "$EXT" wb1-bare "$BENCH_DIR/b1@4.bagz"
  once t1 "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/wb1.bagz" 1
  once t2 "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/wb1.bagz" 2
  once cp "$B" "$EXT" wd1-cp "$BENCH_DIR/d1.msgpack" "$W/cp.msgpack"
  # the yardstick's second part: the copy's index files built anew in C
  once index "$B" "$EXT" wd1-index "$W/cp.msgpack"
  once raw "$B" "$EXT" wd1 "$BENCH_DIR/d1.msgpack" "$W/wd1.msgpack" raw
  once typed "$B" "$EXT" wd1 "$BENCH_DIR/d1.msgpack" "$W/wd1.msgpack" typed
  once native "$B" "$EXT" wd1-native "$BENCH_DIR/d1.msgpack" "$W/native.db"
  # W-A1: the copy first; the yardstick trains its own dictionary the same
  # way (and says when it differs from the copy's)
  once a1 "$BW" "$EXT" wa1 "$BENCH_DIR/a1" "$W/wa1"
  "$BW" "$EXT" wa1-bare "$BENCH_DIR/a1" "$W/wa1/zstd_dict.bin" 1 >"$OUT/w-a1bare.txt"
  ms <"$OUT/w-a1bare.txt" >>"$OUT/w-a1bare.ms"
  for k in enc train zstd; do key $k <"$OUT/w-a1bare.txt" >>"$OUT/w-a1$k.ms"; done
  grep -q 'dict_same=1' "$OUT/w-a1bare.txt" || echo "  (W-A1: the yardstick's dictionary differs from the copy's)" >"$OUT/w-a1note.txt"
  once a1py /usr/bin/python3 bench/bench_wa1_py.py "$BENCH_DIR/a1" 1
  once c1 "$BW" "$EXT" wc1 "$BENCH_DIR/c1" "$W/wc1"
  once c1bare "$BW" "$EXT" wc1-bare "$BENCH_DIR/c1" 1
  # W-C1's floor: the same INSERT ... SELECT into a vtab whose xUpdate
  # does nothing (bench_wac's test-only nullsink), and the read alone
  once c1floor "$BW" "$EXT" wc1-floor "$BENCH_DIR/c1"
  once c1read "$BW" "$EXT" wc1-read "$BENCH_DIR/c1"
done
{
  echo "W-B1 / W-D1 / W-A1 / W-C1 (writing), $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), min of $RUNS runs"
  echo "load before the run: $LOAD"
  printf '%-56s %10s %10s %7s  %s\n' workload "ours ms" "yard ms" ratio target
  echo "--------"
  row() { # row NAME OURS YARD TARGET (a target of - is a row for information)
    awk -v n="$1" -v o="$2" -v y="$3" -v t="$4" 'BEGIN {
      if (o == "" || y == "" || y + 0 == 0) {
        printf "%-56s %10s %10s %7s  n/a (not measured)\n", n, (o == "" ? "-" : o), (y == "" ? "-" : y), "-"
        exit
      }
      r = o / y
      if (t == "-") printf "%-56s %10.0f %10.0f %7.2f  (info)\n", n, o, y, r
      else printf "%-56s %10.0f %10.0f %7.2f  <= %s %s\n", n, o, y, r, t, (r <= t ? "PASS" : "MISS") }'
  }
  row "W-B1 copy threads=1 / bare zstd" "$(best t1)" "$(best bare)" 1.15
  row "W-B1 copy threads=2 / bare zstd" "$(best t2)" "$(best bare)" 0.70
  row "W-D1 copy by raw / (cp + C index files)" "$(best raw)" \
    "$(awk -v c="$(best cp)" -v i="$(best index)" 'BEGIN { print c + i }')" 0.75
  row "W-D1 copy by raw / cp" "$(best raw)" "$(best cp)" -
  row "W-D1 C index files / cp (yardstick parts)" "$(best index)" "$(best cp)" -
  row "W-D1 copy typed / CREATE TABLE AS" "$(best typed)" "$(best native)" 1.5
  row "W-A1 copy / (dict training + bare zstd+dict + our encoder)" "$(best a1)" "$(best a1bare)" 1.3
  row "W-A1 pickle encode: ours / CPython dumps" "$(best a1enc)" "$(best a1py)" 0.7
  row "W-A1 copy / bare zstd+dict" "$(best a1)" "$(best a1zstd)" -
  row "W-A1 dict training / bare zstd+dict (yardstick parts)" "$(best a1train)" "$(best a1zstd)" -
  row "W-C1 copy / floor (copy into null vtab)" "$(best c1)" "$(best c1floor)" 1.5
  row "W-C1 copy / bare blosc 5 columns" "$(best c1)" "$(best c1bare)" -
  row "W-C1 floor: copy into null vtab / bare blosc" "$(best c1floor)" "$(best c1bare)" -
  row "W-C1 read alone (5 columns) / bare blosc" "$(best c1read)" "$(best c1bare)" -
  # the durability cost: COMMIT alone, and the fsyncs, against the copy
  for v in "t1:W-B1 threads=1" "t2:W-B1 threads=2" "raw:W-D1 raw" "typed:W-D1 typed" \
           "native:W-D1 CREATE TABLE AS" "a1:W-A1" "c1:W-C1"; do
    n=${v%%:*}; label=${v#*:}
    row "$label: COMMIT / whole copy" "$(best $n-commit)" "$(best $n)" -
    row "$label: COMMIT's fsyncs / whole copy" "$(best $n-fsync)" "$(best $n)" -
  done
  row "W-D1 cp: fsyncs / whole cp" "$(best cp-fsync)" "$(best cp)" -
  cat "$OUT/w-a1note.txt" 2>/dev/null || true
  echo
  echo "peak RSS of one copy in a fresh process (KiB), 1/10 vs full size:"
  s=$(rss "$B" "$EXT" wb1 "$BENCH_DIR/b1small@4.bagz" "$W/m.bagz" 2)
  f=$(rss "$B" "$EXT" wb1 "$BENCH_DIR/b1@4.bagz" "$W/m.bagz" 2)
  echo "  W-B1 threads=2: $s / $f"
  s=$(rss "$BW" "$EXT" wa1 "$BENCH_DIR/a1small" "$W/ma1")
  f=$(rss "$BW" "$EXT" wa1 "$BENCH_DIR/a1" "$W/ma1")
  echo "  W-A1: $s / $f (shards of 12,500 / 125,000 examples; each shard's blocks wait in a mapped file for the dictionary)"
  c1s=$(rss "$BW" "$EXT" wc1 "$BENCH_DIR/c1small" "$W/mc1")
  c1f=$(rss "$BW" "$EXT" wc1 "$BENCH_DIR/c1" "$W/mc1")
  echo "  W-C1: $c1s / $c1f"
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
  echo
  echo "mem: peak RSS of one copy in a fresh process (KiB), 1/10 vs full size:"
  printf '%-26s %12s %12s %7s  %s\n' workload "1/10 KiB" "full KiB" ratio target
  awk -v s="$c1s" -v f="$c1f" 'BEGIN { r = f / s
    printf "%-26s %12d %12d %7.2f  ~1.0 (flat) %s\n", "mem W-C1 copy", s, f, r, (r <= 1.25 ? "PASS" : "NOT FLAT") }'
} | tee "$OUT/RESULTS-w.txt"
rm -rf "$W" "$OUT"/w-*.ms "$OUT/w-rss.tmp" "$OUT/w-a1bare.txt" "$OUT/w-line.tmp" "$OUT/w-a1note.txt"
