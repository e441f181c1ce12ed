/* test_bcolz_cache.c - unit tests of the decompressed-chunk cache for bcolz
 * row lookups: every cell it returns equals the cell of the chunk read
 * directly (bcolz_chunk), hits and misses count as expected, and the bytes
 * held never pass the budget (except one chunk larger than it, which is not
 * kept). Fixture: upstream ctable_basic (50,000 rows, chunklens 8192 to
 * 131072). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats/bcolz/bcolz_cache.h"

#define FIX "tests/fixtures/upstream/bcolz/ctable_basic"

/* The atom of (col, row) read without the cache. */
static int direct(bcolz_table *t, size_t col, uint64_t row, ds_buf *buf, const uint8_t **p) {
  char *err = NULL;
  uint64_t k = bcolz_col_chunk_of(t, col, row), rows;
  const uint8_t *cp;
  if (bcolz_chunk(t, col, k, buf, &cp, &rows, &err)) {
    free(err);
    return -1;
  }
  *p = cp + (row - bcolz_col_chunk_first(t, col, k)) * bcolz_col_dtype(t, col)->atom;
  return 0;
}

static void random_reads(bcolz_table *t, uint64_t budget, int n, uint64_t *max_bytes,
                         int *bad, uint64_t *hits, uint64_t *misses) {
  bcolz_cache *c = bcolz_cache_new(budget);
  ds_buf buf = {0};
  uint64_t seed = 99;
  *max_bytes = 0;
  for (int i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t col = (size_t)(seed >> 61) % bcolz_ncols(t);
    uint64_t row = (seed >> 20) % bcolz_nrows(t);
    const uint8_t *p = NULL, *q = NULL;
    char *err = NULL;
    if (bcolz_cache_row(c, t, col, row, &p, &err) || direct(t, col, row, &buf, &q) ||
        memcmp(p, q, bcolz_col_dtype(t, col)->atom) != 0)
      (*bad)++;
    free(err);
    uint64_t bytes, entries, h, m;
    bcolz_cache_stats(c, &bytes, &entries, &h, &m);
    if (bytes > *max_bytes) *max_bytes = bytes;
    *hits = h;
    *misses = m;
  }
  ds_buf_free(&buf);
  bcolz_cache_free(c);
}

int main(void) {
  bcolz_table *t = NULL;
  char *err = NULL;
  if (!CHECK(bcolz_open(FIX, &t, &err) == 0)) {
    printf("    %s\n", err ? err : "?");
    free(err);
    return 1;
  }
  /* a budget holding every chunk: each chunk is decompressed once */
  uint64_t max_bytes, hits, misses;
  int bad = 0;
  random_reads(t, UINT64_C(1) << 30, 5000, &max_bytes, &bad, &hits, &misses);
  uint64_t nchunks = 0;
  for (size_t col = 0; col < bcolz_ncols(t); col++) nchunks += bcolz_col_nchunks(t, col);
  CHECK_MSG(bad == 0, "%d cells differ", bad);
  CHECK_MSG(misses <= nchunks && hits + misses == 5000, "hits %llu misses %llu chunks %llu",
            (unsigned long long)hits, (unsigned long long)misses, (unsigned long long)nchunks);
  /* a budget of about two chunks: still right, never over budget */
  bad = 0;
  uint64_t budget = 600 * 1024;
  random_reads(t, budget, 3000, &max_bytes, &bad, &hits, &misses);
  CHECK_MSG(bad == 0, "%d cells differ", bad);
  CHECK_MSG(max_bytes <= budget, "held %llu bytes over a budget of %llu",
            (unsigned long long)max_bytes, (unsigned long long)budget);
  CHECK_MSG(misses > nchunks, "a small cache must evict: %llu misses", (unsigned long long)misses);
  /* a budget smaller than any chunk: nothing kept, cells still right */
  bad = 0;
  random_reads(t, 16, 500, &max_bytes, &bad, &hits, &misses);
  CHECK_MSG(bad == 0, "%d cells differ", bad);
  CHECK(max_bytes == 0);
  CHECK(misses == 500);
  /* out-of-range rows are errors */
  bcolz_cache *c = bcolz_cache_new(1 << 20);
  const uint8_t *p;
  CHECK(bcolz_cache_row(c, t, 0, bcolz_nrows(t), &p, &err) == -1 && err);
  free(err);
  bcolz_cache_free(c);
  bcolz_close(t);
  return check_failures_ != 0;
}
