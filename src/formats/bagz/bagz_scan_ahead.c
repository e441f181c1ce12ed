/* bagz_scan_ahead.c - read-ahead hints of a scan's shards (see
 * bagz_scan_ahead.h). */
#include "formats/bagz/bagz_scan_ahead.h"

/* The most bytes of a shard's records, and of its limits, one hint asks
 * for; the next shard's records near the end of a shard: what the walk
 * reads there while the window behind it takes a round trip (1 MiB lasted
 * about 13 ms of a B1 scan, the window's next blocks 30-50 ms). */
#define HINT_RECORDS ((uint64_t)1 << 20)
#define HINT_NEXT ((uint64_t)4 << 20)
#define HINT_LIMITS ((uint64_t)512 << 10)
/* The next shard is hinted once the walk is this near the end of a shard
 * (estimated at the shard's mean record size). */
#define NEAR_END ((uint64_t)4 << 20)

/* Does any shard's file take hints (a remote one)? Local files ignore
 * them (ds_file_read_ahead is a no-op), so a local walk skips the
 * bookkeeping of every row. */
static int any_hinted(const bagz_reader *r) {
  for (size_t i = 0; i < r->nshards; i++) {
    const bagz_shard *s = &r->shards[i];
    if (ds_file_prefetchable(&s->data) || (s->limits && ds_file_prefetchable(s->limits)))
      return 1;
  }
  return 0;
}

void bagz_scan_ahead_init(ds_scan_ahead *a, const bagz_reader *r, const ds_rowset *rs) {
  /* only a forward walk of ranges takes hints (ds_rowset_scan_end), asked
   * first: a point lookup skips the shards' test. Interleaved bags: a
   * shard's rows are not one stretch of the walk. */
  int walk = ds_rowset_scan_end(rs) != 0;
  ds_scan_ahead_init(a, walk && r->map.layout == DS_LAYOUT_CONCATENATED && any_hinted(r) ? rs
                                                                                         : NULL);
}

/* The smaller of a and b. */
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Hint shard s from record `index`, up to the walk's end row hi (the
 * shard's first row is `first`): its limits, and its records when the
 * walk starts at record 0 (else where they start is not known yet). */
static void hint_shard(const bagz_shard *s, uint64_t first, uint64_t index, uint64_t hi,
                       uint64_t most) {
  if (index >= s->count || first + index >= hi) return;
  uint64_t rows = min64(s->count, hi - first) - index; /* the walk's rows here */
  if (!__atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE)) {
    uint64_t at = s->limits_off + 8 * (index ? index - 1 : 0);
    ds_file_read_ahead(s->limits, at, min64(HINT_LIMITS, 8 * (rows + 1)));
  }
  if (index == 0 && s->records_size) {
    /* the bytes of `rows` records at the shard's mean record size */
    double est = (double)s->records_size * (double)rows / (double)s->count;
    uint64_t n = est >= (double)most ? most : (uint64_t)est + 1;
    ds_file_read_ahead(&s->data, 0, min64(n, s->records_size));
  }
}

void bagz_scan_ahead_row(ds_scan_ahead *a, const bagz_reader *r, size_t shard,
                         uint64_t index) {
  if (!a->hi || shard >= r->nshards) return;  /* hints off: nothing a row */
  const bagz_shard *s = &r->shards[shard];
  if (ds_scan_ahead_enter(a, shard))
    hint_shard(s, r->map.first[shard], index, a->hi, HINT_RECORDS);
  if (!ds_scan_ahead_next_due(a, shard, r->nshards) || index >= s->count) return;
  double left = (double)s->records_size * (double)(s->count - index) / (double)s->count;
  if (left > (double)NEAR_END) return;
  a->next = shard + 2;
  hint_shard(&r->shards[shard + 1], r->map.first[shard + 1], 0, a->hi, HINT_NEXT);
}
