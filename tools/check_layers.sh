#!/bin/sh
# check_layers.sh - the layering rules of ARCHITECTURE.md, checked on the
# text of the sources. Prints one PASS or FAIL line per rule (tests/run.sh
# counts them) and the offending lines; exits 1 when a rule is broken.
#   1. src/core, src/decoders, src/formats and src/remote know no SQLite: no
#      "sqlite3" anywhere in them, and no include of the SQLite layer (sql/, vtab/).
#   2. The SQLite layer (src/sql, src/vtab, ext) knows no bytes: it includes
#      no format library header (zstd, blosc, msgpack-c, libb2, libmd,
#      protobuf-c and the code protoc-c generates, libcurl), calls
#      none of their functions, has no byte-order code (__BYTE_ORDER__,
#      byte swaps, ds_le*/ds_be* loaders), and includes jansson only where it
#      writes output (JANSSON_OK below), never to parse a format's files.
#   3. src/sql knows SQLite and core only: no include of formats/ or vtab/
#      (what needs a format's decoder lives in src/vtab).
#   4. Only the file-system backend (src/core/vfs_local.c) touches the file
#      system: no call of stat, lstat, fstat(at), glob, (fd)opendir,
#      open(at), access, rename(at)(2), unlink(at), mkdir(at), rmdir,
#      fsync, fdatasync, truncate, pread, readdir, link or fopen anywhere
#      else in src/ and ext/;
#      they go through the seam (src/core/vfs.h).
#   5. No include circle between modules (a module is x.c with x.h): the
#      "module includes module" pairs of src/ and ext/ go through tsort,
#      which names each loop it finds. KNOWN_LOOPS lists the loops left
#      for later (each with its reason); any other loop fails.
#   5. One table of formats (vtab/format_table.c): no switch on a format
#      value, no comparison of one, no DS_FORMAT_ enumerator outside it;
#      the cross-format files (detection, shard listing, the `dataset`
#      module, dataset_info, dataset_shards, ext/datasets.c) include no
#      header of a format's folder (formats/<fmt>/): what they know of a
#      format comes from its row and descriptor (formats/format.h).
# Usage: tools/check_layers.sh [repository root]
# Comments are stripped first (gcc -fpreprocessed), so prose may name
# anything; the lines shown are those of the comment-free text.
cd "${1:-$(dirname "$0")/..}" || exit 2
fail=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for f in $(find src ext -name '*.[ch]'); do
  mkdir -p "$TMP/$(dirname "$f")"
  gcc -fpreprocessed -dD -E -P -x c "$f" >"$TMP/$f" 2>/dev/null || cp "$f" "$TMP/$f"
done

# rule NAME PATTERN FILES...: PASS when no line of FILES matches PATTERN.
rule() {
  name=$1
  pattern=$2
  shift 2
  hits=$(cd "$TMP" && grep -nE "$pattern" "$@" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "FAIL layers: $name"
    echo "$hits" | sed 's/^/    /'
    fail=1
  else
    echo "PASS layers: $name"
  fi
}

CORE=$(find src/core src/decoders src/formats src/remote -name '*.[ch]' | sort)
SQL=$(find src/sql src/vtab ext -name '*.[ch]' | sort)
# dataset_info builds its rows as JSON values with jansson (output only):
# dataset_info.c, info_rows.c/.h and the formats' row builders *_info.c.
JANSSON_OK=$(printf '%s\n' src/vtab/info_rows.h src/vtab/info_rows.c src/vtab/*_info.c)

# shellcheck disable=SC2086
rule "core and formats know no SQLite" 'sqlite3|SQLITE_' $CORE
# shellcheck disable=SC2086
rule "core and formats include nothing of the SQLite layer" \
  '#[[:space:]]*include[[:space:]]*"(sql|vtab)/' $CORE
# shellcheck disable=SC2086
rule "the SQLite layer includes no format library header" \
  '#[[:space:]]*include[[:space:]]*(<(zstd|zdict|blosc|blosc2|msgpack|blake2|md5|sha2|protobuf-c/|curl/)[^>]*>|"[^"]*\.pb-c\.h")' $SQL
# shellcheck disable=SC2086
rule "the SQLite layer calls no format library" \
  '(^|[^A-Za-z0-9_])(ZSTD_[A-Za-z]|blosc_|msgpack_[a-uw-z]|MSGPACK_|blake2|MD5Init|MD5Update|protobuf_c_|tensorflow__)' $SQL
# shellcheck disable=SC2086
rule "the SQLite layer has no byte-order code" \
  '__BYTE_ORDER__|__ORDER_(LITTLE|BIG)_ENDIAN__|__builtin_bswap|be(16|32|64)toh|le(16|32|64)toh|(^|[^A-Za-z0-9_])ds_(le|be)(16|32|64)' $SQL
# shellcheck disable=SC2086
rule "jansson only where the SQLite layer writes JSON output" \
  '#[[:space:]]*include[[:space:]]*<jansson\.h>' $(echo $SQL | tr ' ' '\n' | grep -vx "$JANSSON_OK")
# shellcheck disable=SC2086
rule "src/sql includes nothing of formats or vtab" \
  '#[[:space:]]*include[[:space:]]*"(formats|vtab)/' $(find src/sql -name '*.[ch]' | sort)

# shellcheck disable=SC2086
rule "no switch on a format outside the format table" \
  'case[[:space:]]+DS_FORMAT_|DS_FORMAT_(BAGZ|DATADINGS|ATLAS|BCOLZ)|switch[[:space:]]*\([^)]*(format|fmt)[^)]*\)|(->|\.)format[[:space:]]*[!=]=' \
  $(echo $CORE $SQL | tr ' ' '\n' | grep -vx src/vtab/format_table.c)
CROSS="src/formats/detect.h src/formats/detect.c src/formats/shards.c
src/formats/format.h src/formats/format_files.c src/vtab/dataset_module.c
src/vtab/dataset_info.c src/vtab/dataset_shards.c src/vtab/info_rows.c ext/datasets.c"
# shellcheck disable=SC2086
rule "cross-format files include no format's folder" \
  '#[[:space:]]*include[[:space:]]*"formats/[^/"]+/' $CROSS
# The one file that calls the file system (core/vfs.h: the seam).
VFS_BACKENDS=src/core/vfs_local.c
# shellcheck disable=SC2086
rule "only the file-system backend calls the file system" \
  '(^|[^A-Za-z0-9_.>*])(stat|lstat|fstat|fstatat|glob|opendir|fdopendir|open|openat|access|faccessat|rename|renameat|renameat2|unlink|unlinkat|mkdir|mkdirat|rmdir|fsync|fdatasync|truncate|pread|pread64|readdir|link|linkat|fopen)[[:space:]]*\(' \
  $(find src ext -name '*.[ch]' | sort | grep -vxF "$VFS_BACKENDS")

# includes: "module included-module" for every quoted include that names a
# file of src/ (relative to the includer's folder, or to src/).
includes() {
  for f in $(find src ext -name '*.[ch]' | sort); do
    d=$(dirname "$f")
    grep -hE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$TMP/$f" |
      sed -E 's/.*"([^"]+)".*/\1/' | while read -r inc; do
        if [ -f "$d/$inc" ]; then t=$(realpath -m --relative-to=. "$d/$inc")
        elif [ -f "src/$inc" ]; then t="src/$inc"
        else continue; fi
        [ "${t%.*}" != "${f%.*}" ] && echo "${f%.*} ${t%.*}"
      done
  done
}
# Loops known and left: each line the loop's modules, sorted, space-separated
# (none today).
KNOWN_LOOPS=""
# tsort names each loop as lines after "input contains a loop:"; one line
# per loop here, its modules sorted.
loops=$(includes | tsort 2>&1 >/dev/null | awk '
  function flush(  i, j, t, out) {
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && m[j - 1] > m[j]; j--) { t = m[j]; m[j] = m[j - 1]; m[j - 1] = t }
    out = ""
    for (i = 1; i <= n; i++) out = out (i > 1 ? " " : "") m[i]
    if (n) print out
    n = 0
  }
  /contains a loop/ { flush(); next }
  { sub(/^tsort: /, ""); m[++n] = $0 }
  END { flush() }' | sort -u)
if [ -n "$KNOWN_LOOPS" ]; then
  new=$(echo "$loops" | grep -vxF "$KNOWN_LOOPS" | grep .)
else
  new=$(echo "$loops" | grep .)
fi
if [ -n "$new" ]; then
  echo "FAIL layers: no include circle between modules"
  echo "$new" | sed 's/^/    loop: /'
  fail=1
else
  echo "PASS layers: no include circle between modules"
fi

exit $fail
