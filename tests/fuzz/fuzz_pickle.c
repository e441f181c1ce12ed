/* fuzz_pickle.c - libFuzzer harness for the safe pickle decoder
 * (src/decoders/pickle.c).
 *
 * Input: the bytes of a pickle. It is decoded with small limits (16 MiB of
 * memory, depth 200, 100,000 memo entries, 1,000,000 stack entries,
 * 4096-byte integers) into an arena that is reset for every input; a
 * decoded value is walked and serialised with ds_value_json, then freed.
 * Contract checks (abort = finding):
 *   - a failed decode sets a non-empty message;
 *   - TEXT is valid UTF-8 (invalid input is replaced), BIGINT is "-?[0-9]+",
 *     an UNSUPPORTED name is non-empty, every NDARRAY is a .npy blob that
 *     ds_npy_parse accepts, in C order, with a little-endian or
 *     byte-order-free dtype (structured dtypes keep their fields' orders);
 *   - the value is a tree of bounded expanded size (the walk counts nodes
 *     and stops the harness if shared references expand past the limit).
 * Every byte of every string/blob is read so that ASan checks the ranges.
 *
 * Build: make fuzz (clang -fsanitize=fuzzer,address,undefined). Run:
 *   build/fuzz/fuzz_pickle -max_total_time=180 <corpus dir>
 * seeded with the tests/fixtures/pickle/ pickles. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "core/value.h"
#include "core/value_json.h"
#include "decoders/pickle.h"

#include "fuzz_limits.h"

#define FUZZ_MAX_BYTES ((size_t)16 << 20)

static ds_arena g_arena;
static uint64_t g_nodes;

#define FUZZ_HARNESS "fuzz_pickle"
#include "fuzz_common.h"
#define fail(what) fuzz_fail("%s", (what))
#define touch fuzz_touch

/* Check one value and everything below it. */
static void walk(const ds_value *v, int depth) {
  if (++g_nodes > FUZZ_MAX_BYTES / sizeof(ds_value)) fail("value expands past the limit");
  if (depth > 210) fail("value deeper than max_depth");
  switch (v->type) {
    case DS_V_TEXT:
      touch(v->u.s.p, v->u.s.n);
      if (!ds_utf8_valid(v->u.s.p, v->u.s.n)) fail("TEXT is not UTF-8");
      break;
    case DS_V_BYTES: touch(v->u.s.p, v->u.s.n); break;
    case DS_V_BIGINT: {
      int64_t x;
      if (ds_bigint_to_i64(v->u.s.p, v->u.s.n, &x) != 0) fail("BIGINT malformed or fits int64");
      break;
    }
    case DS_V_UNSUPPORTED:
      touch(v->u.s.p, v->u.s.n);
      if (!v->u.s.n) fail("UNSUPPORTED without a name");
      break;
    case DS_V_NDARRAY: {
      ds_npy a;
      char *err = NULL;
      touch(v->u.s.p, v->u.s.n);
      if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, &err)) {
        fprintf(stderr, "npy: %s\n", err);
        fail("NDARRAY does not parse");
      }
      if (a.fortran_order) fail("NDARRAY not in C order");
      if (a.byteorder == '>') fail("NDARRAY with a big-endian dtype");
      if (a.data_len != v->u.s.n - (size_t)(a.data - v->u.s.p)) fail("NDARRAY trailing bytes");
      break;
    }
    case DS_V_LIST: case DS_V_TUPLE: case DS_V_SET: case DS_V_MAP: {
      size_t n = v->type == DS_V_MAP ? 2 * v->u.list.n : v->u.list.n;
      for (size_t i = 0; i < n; i++) walk(&v->u.list.items[i], depth + 1);
      break;
    }
    case DS_V_NULL: case DS_V_BOOL: case DS_V_INT: case DS_V_UINT: case DS_V_FLOAT:
    case DS_V_COMPLEX:
      break;
    default: fail("unknown value type");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ds_pickle_limits lim;
  memset(&lim, 0, sizeof lim);
  lim.max_bytes = FUZZ_MAX_BYTES;
  lim.max_depth = 200;
  lim.max_memo = 100000;
  lim.max_stack = 1000000;
  lim.max_long = 4096;
  ds_value v;
  char *err = NULL;
  ds_arena_reset(&g_arena);
  if (ds_pickle_decode(data, size, &lim, &g_arena, &v, &err)) {
    if (!err || !*err) fail("error without a message");
    free(err);
    return 0;
  }
  free(err); /* tolerated on success, but must not leak */
  err = NULL;
  g_nodes = 0;
  walk(&v, 0);
  ds_buf out = {0};
  if (ds_value_json_capped(&out, &v, FUZZ_JSON_CAP, NULL, &err) == 0) touch(out.data, out.len);
  else if (!err || !*err) fail("JSON error without a message");
  free(err);
  ds_buf_free(&out);
  return 0;
}
