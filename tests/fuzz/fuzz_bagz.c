/* fuzz_bagz.c - libFuzzer harness for the bagz reader (src/formats/bagz/bagz.c)
 * without SQLite.
 *
 * Input: one option byte, then the bytes of a tail-limits bagz file.
 *   bits 0-1  compression: 0 auto, 1 none, 2 zstd, 3 zstd
 *   bit  2    layout: 0 concatenated, 1 interleaved (one shard: same rows)
 *   bit  3    file name for auto compression: 0 "fuzz.bag", 1 "fuzz.bagz"
 *   bits 4-7  unused
 * The file is opened with bagz_open_memory(); then every record (at most
 * MAX_RECORDS) is fetched with bagz_stored() and bagz_read(), and every
 * byte of each result is touched so that ASan sees any out-of-bounds
 * pointer. Contract checks (abort = finding): a failing call sets *err, a
 * stored slice lies inside the input, an uncompressed read equals the
 * stored bytes, and out-of-range indexes are refused.
 *
 * Build: make fuzz (clang -fsanitize=fuzzer,address,undefined). Run:
 * tests/fuzz/run.sh SECONDS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/codec.h"
#include "core/common.h"
#include "formats/bagz/bagz.h"

/* The windows records are read through (one for the whole test). */
static bagz_io t_io;

#define MAX_RECORDS 10000
/* Cap each decompressed record well below the reader's 1 GiB so that a
 * frame with a huge declared or real content size does not turn into a
 * spurious out-of-memory report; the limit logic is the same code. */
#define FUZZ_MAX_OUT ((uint64_t)64 << 20)

#define FUZZ_HARNESS "fuzz_bagz"
#include "fuzz_common.h"
/* The contract broken at record g. */
#define fail(what, g) fuzz_fail("%s (record %llu)", (what), (unsigned long long)(g))
#define expect_err(err, g) \
  fuzz_expect_err((err), "error without a message (record %llu)", (unsigned long long)(g))
#define touch fuzz_touch

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = data[0];
  const uint8_t *file = data + 1;
  size_t fsize = size - 1;

  bagz_options o;
  memset(&o, 0, sizeof o);
  switch (sel & 3) {
    case 0: o.compression = BAGZ_COMPRESSION_AUTO; break;
    case 1: o.compression = BAGZ_COMPRESSION_NONE; break;
    default: o.compression = BAGZ_COMPRESSION_ZSTD; break;
  }
  o.layout = (sel >> 2) & 1 ? DS_LAYOUT_INTERLEAVED : DS_LAYOUT_CONCATENATED;
  o.limits = BAGZ_LIMITS_TAIL;
  o.dictionary_path = NULL;
  const char *name = (sel >> 3) & 1 ? "fuzz.bagz" : "fuzz.bag";

  bagz_reader *r = NULL;
  char *err = NULL;
  if (bagz_open_memory(name, file, fsize, &o, &r, &err)) {
    if (r) fail("failed open returned a reader", 0);
    expect_err(&err, 0);
    return 0;
  }
  free(err); /* tolerated on success, but must not leak */
  err = NULL;
  if (!r || r->nshards != 1) fail("open gave no reader / not one shard", 0);

  uint64_t count = bagz_count(r);
  if (count > fsize / 8) fail("more records than 8-byte limits in the file", 0);
  if (fsize == 0 && count != 0) fail("empty file with records", 0);
  int zstd = r->shards[0].zstd;

  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  z.max_out = FUZZ_MAX_OUT;
  ds_buf scratch = {0};

  uint64_t lim = count < MAX_RECORDS ? count : MAX_RECORDS;
  for (uint64_t g = 0; g < lim; g++) {
    const uint8_t *sp = NULL;
    size_t sn = 0;
    int src = bagz_stored(r, &t_io, 0, g, &sp, &sn, &err);
    if (src) {
      expect_err(&err, g);
    } else {
      if (sn > fsize) fail("stored record larger than the file", g);
      if (sn && (sp < file || sp + sn > file + fsize))
        fail("stored record outside the file", g);
      touch(sp, sn);
    }

    const uint8_t *p = NULL;
    size_t n = 0;
    if (bagz_read(r, &z, &t_io, g, &scratch, &p, &n, &err)) {
      expect_err(&err, g);
      if (!src && !zstd) fail("uncompressed read failed but stored read worked", g);
      continue;
    }
    if (src) fail("read worked but stored read failed", g);
    if (n && !p) fail("NULL record with a length", g);
    if (n > FUZZ_MAX_OUT) fail("record above the output limit", g);
    touch(p, n);
    if (!zstd && (n != sn || (n && memcmp(p, sp, n) != 0)))
      fail("uncompressed read differs from the stored bytes", g);
    if (zstd && sn == 0 && n != 0) fail("0 stored bytes gave a non-empty record", g);
  }

  /* out-of-range accesses must be refused, never read */
  const uint8_t *p;
  size_t n;
  if (bagz_read(r, &z, &t_io, count, &scratch, &p, &n, &err) == 0)
    fail("read past the last record succeeded", count);
  expect_err(&err, count);
  if (bagz_stored(r, &t_io, 0, count, &p, &n, &err) == 0)
    fail("stored read past the last record succeeded", count);
  expect_err(&err, count);
  if (bagz_stored(r, &t_io, 1, 0, &p, &n, &err) == 0)
    fail("stored read of a missing shard succeeded", 0);
  expect_err(&err, 0);

  ds_buf_free(&scratch);
  ds_zstd_ctx_free(&z);
  bagz_close(r);
  return 0;
}
