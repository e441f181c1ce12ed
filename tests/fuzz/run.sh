#!/bin/sh
# run.sh - run every libFuzzer harness built by `make fuzz` (build/fuzz/fuzz_*)
# for SECONDS seconds each.
# Usage: tests/fuzz/run.sh SECONDS [NAME...] (NAME: fuzz_npy, ...; default
# every harness). SECONDS 0 replays the regression inputs only.
#
# Each harness gets a corpus folder build/fuzz/corpus-<name> (kept between
# runs, so it grows), seeded from the upstream fixtures of its format that
# are smaller than 64 KiB, plus the saved regression inputs of
# tests/fuzz/regressions/<format>/. The datadings harnesses share
# regressions/datadings/: sample-* files are inputs of fuzz_datadings_sample
# (one sample), index-* files inputs of fuzz_datadings_index (files packed
# as that harness's header describes); their seeds are the fixtures'
# samples cut out by the .offsets files, and the small datasets packed.
# fuzz_atlas gets every fixture shard directory (bare shards and the shards
# of dataset roots) packed as its header describes (flags byte, three u16 LE
# lengths, meta.json, index.npy, zstd_dict.bin, data.bin), with the shard's
# own dictionary (strategy 3) or the root's (strategy 2, passed as the
# shared one), once more without its dictionary, and only when the whole
# input is under 64 KiB. fuzz_pickle gets tests/fixtures/pickle/*.pkl and
# the block pickles of the atlas fixtures (at most 16 blocks per shard),
# decompressed with python3's zstandard module or the zstd tool (with -D
# for dictionary shards); compressed blocks are skipped when neither
# exists, and all block pickles when there is no python3. fuzz_bcolz gets
# every chunk file data/__<N>.blp of the bcolz fixtures (carrays and ctable
# columns) under 64 KiB prefixed with a 0x00 byte, and every meta/ folder's
# storage + NUL + sizes (storage alone when there is no sizes) prefixed
# with 0x01. fuzz_tfexample gets the records of
# tests/conformance/tfexample_records.py (written by python3-protobuf from
# proto/example.proto; nothing without python3 and protoc). fuzz_tfrecord
# gets tests/fixtures/tfrecord/*.tfrecord behind option bytes 0x00 and 0x04,
# and the one with an .idx sidecar packed with it (0x08). Crash inputs land in
# build/fuzz/artifacts-<name>/. Exits non-zero when any harness crashes,
# leaks, times out or runs out of memory; prints the executions per harness
# and in total (libFuzzer's final stat::number_of_executed_units).
SECONDS_EACH=${1:?usage: tests/fuzz/run.sh SECONDS [NAME...]}
# SECONDS 0: no fuzzing; each harness runs once on every saved input of
# tests/fuzz/regressions/ (what `make fuzz` does by default).
shift
ONLY="$*"
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

# le16 N: N as 2 bytes, little-endian.
le16() {
  byte $(($1 & 255))
  byte $(($1 >> 8 & 255))
}

# strategy_of META: the compression_strategy of an atlas meta.json (empty
# when absent).
strategy_of() {
  sed -n 's/.*"compression_strategy": *\([0-9]*\).*/\1/p' "$1" | head -1
}

# pack_atlas SHARD DICT SHARED OUT: atlas shard directory SHARD in the input
# format of fuzz_atlas: flag bit 0 when there is no data.bin, bit 1 with
# DICT (a file, or empty for none) as zstd_dict.bin, bit 2 when SHARED is 1
# (DICT is passed as the shared dictionary). Skipped at 64 KiB or more.
pack_atlas() {
  shard=$1
  dict=$2
  shared=$3
  out=$4
  [ -f "$shard/meta.json" ] && [ -f "$shard/index.npy" ] || return 0
  flags=0
  nd=0
  nb=0
  if [ -f "$shard/data.bin" ]; then nb=$(wc -c <"$shard/data.bin"); else flags=1; fi
  if [ -n "$dict" ]; then
    [ -f "$dict" ] || return 0
    nd=$(wc -c <"$dict")
    flags=$((flags | 2))
    [ "$shared" = 1 ] && flags=$((flags | 4))
  fi
  nm=$(wc -c <"$shard/meta.json")
  ni=$(wc -c <"$shard/index.npy")
  [ $((7 + nm + ni + nd + nb)) -lt 65536 ] || return 0
  {
    byte "$flags"
    le16 "$nm"
    le16 "$ni"
    le16 "$nd"
    cat "$shard/meta.json" "$shard/index.npy"
    [ -n "$dict" ] && cat "$dict"
    [ -f "$shard/data.bin" ] && cat "$shard/data.bin"
  } >"$out"
}

# atlas_shards: every shard directory of the atlas fixtures, one per line:
# "DIR CASE-NAME DICT SHARED" (DICT "-" for none).
atlas_shards() {
  for root in "$FIX"/atlas/*/; do
    root=${root%/}
    cname=$(basename "$root")
    [ "$cname" = expected ] && continue
    if [ -f "$root/index.npy" ]; then
      set -- "$root"
    else
      set -- "$root"/[0-9]*
    fi
    for shard; do
      [ -d "$shard" ] || continue
      dict=- shared=0
      case $(strategy_of "$shard/meta.json") in
        2) dict=$root/zstd_dict.bin shared=1 ;;
        3) dict=$shard/zstd_dict.bin ;;
      esac
      [ "$shard" = "$root" ] && sname=$cname || sname=$cname-$(basename "$shard")
      echo "$shard $sname $dict $shared"
    done
  done
}

# atlas_block_pickles OUTDIR: the block pickles of the atlas fixtures (at
# most 16 per shard, each under 64 KiB) as OUTDIR/seed-atlas-<case>-<b>.
atlas_block_pickles() {
  py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3) || return 0
  atlas_shards | "$py" -c '
import os, re, shutil, struct, subprocess, sys
out = sys.argv[1]
try:
    import zstandard
except ImportError:
    zstandard = None
cli = shutil.which("zstd")

def slurp(path):
    with open(path, "rb") as f:
        return f.read()

def index(path):
    b = slurp(path)
    if b[:6] != b"\x93NUMPY":
        return []
    if b[6] == 1:
        hl, off = struct.unpack("<H", b[8:10])[0], 10
    else:
        hl, off = struct.unpack("<I", b[8:12])[0], 12
    h = b[off:off + hl].decode("latin-1")
    descr = re.search(r"\x27descr\x27: *\x27([<>|=])u([1248])\x27", h)
    shape = re.search(r"\x27shape\x27: *\((\d+),?\)", h)
    if not descr or not shape:
        return []
    n, w = int(shape.group(1)), int(descr.group(2))
    fmt = (">" if descr.group(1) == ">" else "<") + {1: "B", 2: "H", 4: "I", 8: "Q"}[w] * n
    return list(struct.unpack(fmt, b[off + hl:off + hl + n * w]))

def decompress(blk, d):
    if zstandard is not None:
        dd = zstandard.ZstdCompressionDict(slurp(d)) if d else None
        dz = zstandard.ZstdDecompressor(dict_data=dd) if dd else zstandard.ZstdDecompressor()
        return dz.decompress(blk)
    if cli is None:
        return None
    r = subprocess.run([cli, "-d", "-c", "-q"] + (["-D", d] if d else []), input=blk,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return r.stdout if r.returncode == 0 else None

for line in sys.stdin:
    shard, name, d, _ = line.split()
    d = None if d == "-" else d
    data_path = os.path.join(shard, "data.bin")
    if not os.path.exists(data_path):
        continue
    data = slurp(data_path)
    idx = index(os.path.join(shard, "index.npy"))
    strategy = re.search(rb"\"compression_strategy\": *(\d)", slurp(os.path.join(shard, "meta.json")))
    raw = strategy is not None and strategy.group(1) == b"0"
    for b in range(min(len(idx) - 1, 16)):
        blk = data[idx[b]:idx[b + 1]]
        try:
            p = blk if raw else decompress(blk, d)
        except Exception:
            p = None
        if p and len(p) < 65536:
            with open(os.path.join(out, "seed-atlas-%s-%d" % (name, b)), "wb") as f:
                f.write(p)
' "$1"
}

# npy_seeds OUTDIR: .npy files of many dtypes, orders, shapes and format
# versions, written with numpy, as OUTDIR/seed-np-<i> (nothing without
# python3 and numpy).
npy_seeds() {
  py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3) || return 0
  "$py" -c '
import io, os, sys
try:
    import numpy as np
    from numpy.lib import format as npf
except ImportError:
    sys.exit(0)
out = sys.argv[1]
arrays = [
    np.array([True, False, True]), np.arange(6, dtype="<i1").reshape(2, 3),
    np.arange(5, dtype=">i2"), np.arange(4, dtype="<i4"), np.arange(3, dtype=">i8"),
    np.array([0, 255], dtype="u1"), np.array([1, 65535], dtype=">u2"),
    np.array([2**64 - 1, 0], dtype="<u8"), np.array([1.5, -0.0], dtype="<f2"),
    np.array([np.nan, np.inf, 1e-45], dtype=">f4"), np.array([0.1, -1e308], dtype="<f8"),
    np.array([1 + 2j, -3j], dtype="<c8"), np.array([np.nan + 1j], dtype=">c16"),
    np.array(["a", "été", ""], dtype="<U5"), np.array(["x", "yz"], dtype=">U2"),
    np.array([b"ab", b"\xff\x00", b""], dtype="S3"), np.zeros(2, dtype="V4"),
    np.array(["2021-03-04T05:06:07", "NaT"], dtype="M8[s]"),
    np.array([10, -5], dtype="m8[ms]"), np.array(["2000-01-01"], dtype="M8[D]"),
    np.array([0, 1], dtype="M8[10us]"),
    np.zeros(2, dtype=[("a", "<i4"), ("b", ">f8", (2,)), ("c", "S2")]),
    np.zeros(1, dtype=[("outer", [("x", "u1"), ("y", "<U1")])]),
    np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)),
    np.array(7, dtype="<i4"), np.zeros((0, 3), dtype="<f4"), np.zeros((2, 0, 2)),
    np.arange(24, dtype="<u2").reshape(2, 3, 4), np.zeros((1,) * 10, dtype="u1"),
]
for i, a in enumerate(arrays):
    for ver in ((1, 0), (2, 0), (3, 0)):
        if ver != (1, 0) and i % 4:
            continue
        b = io.BytesIO()
        try:
            npf.write_array(b, a, version=ver)
        except Exception:
            continue
        with open(os.path.join(out, "seed-np-%d-%d" % (i, ver[0])), "wb") as f:
            f.write(b.getvalue())
' "$1"
}

# seed NAME DIR: fill the corpus folder DIR for harness NAME.
# regressions NAME: the saved inputs of harness NAME, one path a line
# (tests/fuzz/regressions/<format>/, the datadings harnesses split by
# prefix; *.md notes left out).
regressions() {
  fmt=${1#fuzz_}
  regs=$fmt
  pat='*'
  case "$fmt" in
    datadings_sample) regs=datadings pat='sample-*' ;;
    datadings_index) regs=datadings pat='index-*' ;;
  esac
  for f in tests/fuzz/regressions/"$regs"/$pat; do
    case "$f" in *.md) continue ;; esac
    [ -f "$f" ] && echo "$f"
  done
}

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
    atlas)
      # every fixture shard with its dictionary, and once without it
      atlas_shards | while read -r shard sname dict shared; do
        [ "$dict" = - ] && dict=
        pack_atlas "$shard" "$dict" "$shared" "$dir/seed-$sname"
        [ -n "$dict" ] && pack_atlas "$shard" "" 0 "$dir/seed-nodict-$sname"
      done
      ;;
    pickle)
      # the pickle fixtures, and the atlas fixtures' block pickles
      for f in tests/fixtures/pickle/*.pkl; do
        [ -f "$f" ] || continue
        [ "$(wc -c <"$f")" -lt 65536 ] || continue
        cp "$f" "$dir/seed-$(basename "$f")"
      done
      atlas_block_pickles "$dir"
      ;;
    bcolz)
      # chunk files: 0x00 + data/__<N>.blp; metadata: 0x01 + meta/storage
      # + NUL + meta/sizes. Seed names are the fixture paths with / as -.
      find "$FIX/bcolz" -type f -path '*/data/__*.blp' | while read -r f; do
        [ "$(wc -c <"$f")" -lt 65535 ] || continue
        s=$(printf '%s' "${f#"$FIX"/bcolz/}" | tr '/' '-')
        { byte 0; cat "$f"; } >"$dir/seed-chunk-$s"
      done
      find "$FIX/bcolz" -type d -name meta | while read -r m; do
        [ -f "$m/storage" ] || continue
        s=$(printf '%s' "${m#"$FIX"/bcolz/}" | tr '/' '-')
        {
          byte 1
          cat "$m/storage"
          if [ -f "$m/sizes" ]; then
            byte 0
            cat "$m/sizes"
          fi
        } >"$dir/seed-$s"
      done
      ;;
    npy)
      # the fixtures' .npy files, and arrays of many dtypes written by numpy
      find "$FIX" -name '*.npy' -size -64k | while read -r f; do
        s=$(printf '%s' "${f#"$FIX"/}" | tr '/' '-')
        cp "$f" "$dir/seed-$s"
      done
      npy_seeds "$dir"
      ;;
    tfexample)
      # tf.train.Example records written by Google's protobuf runtime
      # (python3-protobuf; packed, unpacked, with unknown fields)
      if [ -x /usr/bin/python3 ] && command -v protoc >/dev/null 2>&1; then
        /usr/bin/python3 tests/conformance/tfexample_records.py "$dir" || true
      fi
      ;;
    tfrecord)
      # fuzz_tfrecord reads an option byte (bits 0-1 compression, bit 2
      # verify=false, bit 3 a u16 LE-sized .idx first), then the file: each
      # fixture of tests/fixtures/tfrecord/ detected (0x00) and without
      # data CRCs (0x04), the uncompressed one with its sidecar (0x08)
      for f in tests/fixtures/tfrecord/*.tfrecord; do
        [ -f "$f" ] || continue
        b=$(basename "$f")
        { byte 0; cat "$f"; } >"$dir/seed-00-$b"
        { byte 4; cat "$f"; } >"$dir/seed-04-$b"
        if [ -f "$f.idx" ]; then
          { byte 8; le16 "$(wc -c <"$f.idx")"; cat "$f.idx" "$f"; } >"$dir/seed-08-$b"
        fi
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
  for f in $(regressions "$name"); do
    cp "$f" "$dir/regression-$(basename "$f")"
  done
  return 0
}

# replay BIN: run the harness once on each of its saved regression inputs
# (libFuzzer runs the files given and exits); 0 when none fails.
replay() {
  files=$(regressions "$(basename "$1")")
  if [ -z "$files" ]; then
    echo "FAIL $(basename "$1"): no regression inputs in tests/fuzz/regressions/"
    return 1
  fi
  # shellcheck disable=SC2086 # one argument per file (names have no spaces)
  UBSAN_OPTIONS=print_stacktrace=1 "$1" -rss_limit_mb=2048 -timeout=25 $files \
    >"$OUT/$(basename "$1").replay.log" 2>&1
}

if [ -n "$ONLY" ]; then
  set --
  for n in $ONLY; do set -- "$@" "$OUT/$n"; done
else
  set -- "$OUT"/fuzz_*
fi
if [ ! -x "$1" ]; then
  echo "run.sh: no harness in $OUT (run 'make fuzz' first)" >&2
  exit 2
fi

if [ "$SECONDS_EACH" -eq 0 ]; then
  # no fuzzing: replay every harness's saved regression inputs
  for bin in "$@"; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    name=$(basename "$bin")
    found=$((found + 1))
    n=$(regressions "$name" | wc -l)
    if replay "$bin"; then
      echo "ok   $name: $n regression inputs replayed"
    else
      failed=$((failed + 1))
      echo "FAIL $name: a regression input fails; log: $OUT/$name.replay.log"
      grep -m1 -A25 '==ERROR\|runtime error\|deadly signal\|contract violated\|no regression' \
        "$OUT/$name.replay.log"
    fi
  done
  [ "$found" -gt 0 ] && [ "$failed" -eq 0 ]
  exit
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
  UBSAN_OPTIONS=print_stacktrace=1 "$bin" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -max_len=65536 \
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
