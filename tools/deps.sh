#!/bin/sh
# deps.sh - install the Debian packages the build and tests need, but only
# when something is missing. Usage: tools/deps.sh [build|test|fuzz|bench]...
# (no argument means build + test). Safe to run repeatedly.
set -e
want=""
need() { want="$want $1"; }

check_build() {
  [ -f /usr/include/sqlite3.h ]  || need libsqlite3-dev
  [ -f /usr/include/zstd.h ]     || need libzstd-dev
  [ -f /usr/include/blosc.h ]    || need libblosc-dev
  [ -f /usr/include/msgpack.h ]  || need libmsgpack-dev
  [ -f /usr/include/blake2.h ]   || need libb2-dev
  [ -f /usr/include/jansson.h ]  || need libjansson-dev
  [ -f /usr/include/md5.h ]      || need libmd-dev
  # ISA-L: CRC-32C and gzip / zlib of TFRecord files (formats/tfrecord)
  [ -f /usr/include/isa-l/igzip_lib.h ] || need libisal-dev
  [ -f /usr/include/protobuf-c/protobuf-c.h ] || need libprotobuf-c-dev
  command -v protoc-c >/dev/null 2>&1 || need protobuf-c-compiler
  # remote paths: libcurl's headers only (the library is loaded with
  # dlopen("libcurl.so.4") when a remote path is first opened)
  [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] \
    || need libcurl4-openssl-dev
  command -v cc >/dev/null 2>&1  || need gcc
  command -v make >/dev/null 2>&1 || need make
}
check_test() {
  command -v sqlite3 >/dev/null 2>&1 || need sqlite3
  [ -x /usr/bin/python3 ] || need python3
  /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || need python3-numpy
  command -v zstd >/dev/null 2>&1 || need zstd
  command -v sqlite-utils >/dev/null 2>&1 || need sqlite-utils
  /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || need python3-pandas
  /usr/bin/python3 -c 'import dask.dataframe' >/dev/null 2>&1 || need python3-dask
  /usr/bin/python3 -c 'import distributed' >/dev/null 2>&1 || need python3-distributed
  /usr/bin/python3 -c 'import google.protobuf' >/dev/null 2>&1 || need python3-protobuf
  # the Python checks of written files (tests/unit/check_written.py: blosc;
  # tests/conformance: msgpack, zstandard)
  /usr/bin/python3 -c 'import blosc' >/dev/null 2>&1 || need python3-blosc
  /usr/bin/python3 -c 'import msgpack' >/dev/null 2>&1 || need python3-msgpack
  /usr/bin/python3 -c 'import zstandard' >/dev/null 2>&1 || need python3-zstandard
  command -v protoc >/dev/null 2>&1 || need protobuf-compiler
  # CRC-32C for the TFRecord fixtures' check (test_tfrecord_fixtures.py)
  /usr/bin/python3 -c 'import crc32c' >/dev/null 2>&1 || need python3-crc32c
  # unit/test_locale builds de_DE's LC_NUMERIC (a decimal comma) with
  # localedef from glibc's locale sources, which are in `locales`
  [ -f /usr/share/i18n/locales/de_DE ] || need locales
  # remote paths (tests/conformance/test_remote_*): botocore's signer to
  # check ours, nginx and openssl as the HTTP(S) test server
  /usr/bin/python3 -c 'import botocore' >/dev/null 2>&1 || need python3-botocore
  [ -x /usr/sbin/nginx ] || need nginx
  command -v openssl >/dev/null 2>&1 || need openssl
  command -v node >/dev/null 2>&1 || need nodejs
  command -v npm >/dev/null 2>&1 || need npm
  S3RVER=1
}
# s3rver (npm, pinned) outside the tree, for the remote tests: the one S3
# server the package registries offer (tests/conformance/remote_servers.py).
S3RVER_VERSION=3.7.1
install_s3rver() {
  home=${S3RVER_HOME:-$HOME/.cache/sqlite-datasets/s3rver-$S3RVER_VERSION}
  [ -f "$home/node_modules/s3rver/bin/s3rver.js" ] && return 0
  echo "deps.sh: installing s3rver@$S3RVER_VERSION into $home"
  mkdir -p "$home"
  npm install --no-audit --no-fund --prefix "$home" "s3rver@$S3RVER_VERSION" >/dev/null
}
check_fuzz() {
  command -v clang >/dev/null 2>&1 || need clang
  [ -n "$(find /usr/lib/llvm-14/lib/clang -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] \
    || need libclang-rt-14-dev
}
check_bench() {
  command -v hyperfine >/dev/null 2>&1 || need hyperfine
  [ -x /usr/bin/time ] || need time
  /usr/bin/python3 -c 'import zstandard' >/dev/null 2>&1 || need python3-zstandard
}

[ $# -eq 0 ] && set -- build test
for what in "$@"; do
  case "$what" in
    build) check_build ;;
    test) check_test ;;
    fuzz) check_fuzz ;;
    bench) check_bench ;;
    *) echo "deps.sh: unknown group '$what'" >&2; exit 2 ;;
  esac
done

if [ -n "$want" ]; then
  echo "deps.sh: installing:$want"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  $SUDO apt-get install -y --no-install-recommends $want >/dev/null 2>&1 || {
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y --no-install-recommends $want
  }
fi
[ -n "${S3RVER:-}" ] && install_s3rver
exit 0
