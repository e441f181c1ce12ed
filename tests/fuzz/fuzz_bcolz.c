/* fuzz_bcolz.c - libFuzzer harness for the bcolz reader (src/formats/
 * bcolz.c) without SQLite.
 *
 * Input: one selector byte, then the payload.
 *   selector bit 0 = 0: the payload is one chunk file (data/__<N>.blp):
 *     bcolz_check_chunk_file + bcolz_decode_chunk_file (blpk header, Blosc
 *     header against the size, blosc_decompress_ctx), then for every
 *     element size the Blosc typesize allows, a few rows through
 *     bcolz_cell_value for a handful of dtypes over the decompressed bytes.
 *   selector bit 0 = 1: the payload is "<meta/storage>\n\x00<meta/sizes>"
 *     (split at the first NUL byte; no NUL: everything is meta/storage and
 *     sizes is empty): bcolz_parse_meta.
 * Also one blosc_getitem range (bits 1-7 of the selector pick it), the
 * call bcolz_row_atom makes on a validated chunk.
 * Contract checks (abort = finding): a failing call sets a non-empty
 * message; a decoded chunk's length equals the Blosc header's nbytes; a
 * parsed dtype has atom == itemsize * nelem.
 * The input is copied into a heap buffer of exactly its size so that ASan
 * sees any read past it (c-blosc trusts its header once validated).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -Isrc tests/fuzz/
 * fuzz_bcolz.c src/formats/bcolz/bcolz.c src/decoders/pickle.c src/core/<all>.c
 * -ljansson -lblosc -lzstd -lsqlite3 -lm -lpthread. */
#include <blosc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/value.h"
#include "formats/bcolz/bcolz.h"

#define FUZZ_HARNESS "fuzz_bcolz"
#include "fuzz_common.h"
#define fail(what) fuzz_fail("%s", (what))
#define expect_err(err) fuzz_expect_err((err), "error without a message")

static void cells(const uint8_t *p, size_t n) {
  static const char *const kinds = "biufSUMm";
  ds_arena a = {0};
  char *err = NULL;
  for (const char *k = kinds; *k; k++) {
    bcolz_dtype dt;
    memset(&dt, 0, sizeof dt);
    dt.kind = *k;
    dt.byteorder = (n & 1) ? '>' : '<';
    dt.itemsize = *k == 'b' ? 1 : *k == 'S' ? 3 : *k == 'U' ? 8
                  : (*k == 'M' || *k == 'm') ? 8 : 4;
    dt.unit = (*k == 'M' || *k == 'm') ? (int)(n % 13) : -1;
    dt.mult = 1;
    dt.nelem = 1;
    dt.atom = dt.itemsize;
    snprintf(dt.str, sizeof dt.str, "%c%c%u", dt.byteorder, *k,
             (unsigned)dt.itemsize);
    for (size_t off = 0; off + dt.atom <= n && off < 64 * dt.atom;
         off += dt.atom) {
      ds_value v;
      ds_arena_reset(&a);
      if (bcolz_cell_value(&dt, p + off, (size_t)dt.atom, 0, &a, &v, &err))
        expect_err(&err);
    }
  }
  ds_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = data[0];
  size_t n = size - 1;
  uint8_t *p = malloc(n ? n : 1);
  if (!p) return 0;
  memcpy(p, data + 1, n);
  char *err = NULL;
  if (!(sel & 1)) {
    uint64_t nbytes = 0;
    if (bcolz_check_chunk_file(p, n, "fuzz.blp", &nbytes, &err)) {
      expect_err(&err);
    } else if (nbytes <= ((uint64_t)64 << 20)) {
      /* the row path: blosc_getitem of one aligned item range, as
         bcolz_row_atom calls it */
      uint32_t ts = p[19];
      uint64_t items = nbytes / ts;
      if (items > 0) {
        uint64_t start = (sel >> 1) % items;
        uint64_t cnt = 1 + (uint64_t)(sel >> 4) % (items - start);
        uint8_t *dest = malloc((size_t)(cnt * ts));
        if (dest) {
          int r = blosc_getitem(p + 16, (int)start, (int)cnt, dest);
          if (r > 0 && (uint64_t)r != cnt * ts) fail("getitem length");
          free(dest);
        }
      }
      ds_buf b = {0};
      if (bcolz_decode_chunk_file(p, n, "fuzz.blp", &b, &err))
        expect_err(&err);
      else {
        if (b.len != nbytes) fail("decoded length differs from nbytes");
        cells(b.data, b.len);
      }
      ds_buf_free(&b);
    }
  } else {
    const uint8_t *nul = memchr(p, 0, n);
    size_t tn = nul ? (size_t)(nul - p) : n;
    const uint8_t *sz = nul ? nul + 1 : p + n;
    size_t sn = nul ? n - tn - 1 : 0;
    bcolz_dtype dt;
    uint64_t len, chunklen;
    if (bcolz_parse_meta(p, tn, sz, sn, &dt, &len, &chunklen, &err))
      expect_err(&err);
    else if (dt.kind != 'O' && dt.atom != (uint64_t)dt.itemsize * dt.nelem)
      fail("atom != itemsize * nelem");
  }
  free(p);
  return 0;
}
