#!/bin/sh
# check_layers.sh - the layering rules of ARCHITECTURE.md, checked on the
# text of the sources. Prints one PASS or FAIL line per rule (tests/run.sh
# counts them) and the offending lines; exits 1 when a rule is broken.
#   1. src/core, src/decoders and src/formats know no SQLite: no "sqlite3" anywhere in
#      them, and no include of the SQLite layer (sql/, vtab/).
#   2. The SQLite layer (src/sql, src/vtab, ext) knows no bytes: it includes
#      no format library header (zstd, blosc, msgpack-c, libb2, libmd,
#      protobuf-c and the code protoc-c generates, ISA-L), calls
#      none of their functions, has no byte-order code (__BYTE_ORDER__,
#      byte swaps, ds_le*/ds_be* loaders), and includes jansson only where it
#      writes output (JANSSON_OK below), never to parse a format's files.
#   3. src/sql knows SQLite and core only: no include of formats/ or vtab/
#      (what needs a format's decoder lives in src/vtab).
#   4. No include circle between modules (a module is x.c with x.h): the
#      "module includes module" pairs of src/ and ext/ go through tsort,
#      which names each loop it finds. KNOWN_LOOPS lists the loops left
#      for later (each with its reason); any other loop fails.
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

CORE=$(find src/core src/decoders src/formats -name '*.[ch]' | sort)
SQL=$(find src/sql src/vtab ext -name '*.[ch]' | sort)
# dataset_info builds its rows as JSON values with jansson (output only).
JANSSON_OK=src/vtab/dataset_info.c

# shellcheck disable=SC2086
rule "core and formats know no SQLite" 'sqlite3|SQLITE_' $CORE
# shellcheck disable=SC2086
rule "core and formats include nothing of the SQLite layer" \
  '#[[:space:]]*include[[:space:]]*"(sql|vtab)/' $CORE
# shellcheck disable=SC2086
rule "the SQLite layer includes no format library header" \
  '#[[:space:]]*include[[:space:]]*(<(zstd|zdict|blosc|blosc2|msgpack|blake2|md5|sha2|protobuf-c/|isa-l)[^>]*>|"[^"]*\.pb-c\.h")' $SQL
# shellcheck disable=SC2086
rule "the SQLite layer calls no format library" \
  '(^|[^A-Za-z0-9_])(ZSTD_[A-Za-z]|blosc_|msgpack_[a-uw-z]|MSGPACK_|blake2|MD5Init|MD5Update|protobuf_c_|tensorflow__|isal_|crc32_iscsi)' $SQL
# shellcheck disable=SC2086
rule "the SQLite layer has no byte-order code" \
  '__BYTE_ORDER__|__ORDER_(LITTLE|BIG)_ENDIAN__|__builtin_bswap|be(16|32|64)toh|le(16|32|64)toh|(^|[^A-Za-z0-9_])ds_(le|be)(16|32|64)' $SQL
# shellcheck disable=SC2086
rule "jansson only where the SQLite layer writes JSON output" \
  '#[[:space:]]*include[[:space:]]*<jansson\.h>' $(echo $SQL | tr ' ' '\n' | grep -vx "$JANSSON_OK")
# shellcheck disable=SC2086
rule "src/sql includes nothing of formats or vtab" \
  '#[[:space:]]*include[[:space:]]*"(formats|vtab)/' $(find src/sql -name '*.[ch]' | sort)

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
# Loops known and left: each line the loop's modules, sorted, space-separated.
#  - options.c checks the row-window options (row_window.h), which take
#    their names from options.h: issue 21 section 2 (one option spec).
#  - bcolz_chunk_writer.h takes the writer's column types from
#    bcolz_writer.h, whose writer uses the chunk writer.
#  - stage_journal.c uses stage.c's file steps (ds_fsync_path,
#    ds_remove_tree, ds_write_all, ds_rename_noreplace), which move to the
#    one file-system seam of issue 21 section 3.
KNOWN_LOOPS="src/core/options src/core/row_window
src/core/stage src/core/stage_journal
src/formats/bcolz/bcolz_chunk_writer src/formats/bcolz/bcolz_writer"
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
new=$(echo "$loops" | grep -vxF "$KNOWN_LOOPS" | grep .)
if [ -n "$new" ]; then
  echo "FAIL layers: no include circle between modules"
  echo "$new" | sed 's/^/    loop: /'
  fail=1
else
  echo "PASS layers: no include circle between modules"
fi

exit $fail
