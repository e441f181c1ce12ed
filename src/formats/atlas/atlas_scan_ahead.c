/* atlas_scan_ahead.c - read-ahead hints of a scan's shards (see
 * atlas_scan_ahead.h). */
#include "formats/atlas/atlas_scan_ahead.h"

/* The most bytes of a shard's data.bin the hint at the walk's first
 * block asks for (its read-ahead window follows at once). */
#define HINT_DATA ((uint64_t)1 << 20)
/* The most bytes of the next shard's data.bin asked for near the end of
 * a shard (remote_file.c stops a hint at a stream's window, DS_RFILE_AHEAD_MAX): what
 * the walk reads there while the window behind it takes a round trip to
 * arrive. 4 MiB asked 4 MiB before the end still left waits: at load 7
 * the S3 front answered the rest of the shard (asked when the walk got
 * there) or the hint itself after the walk needed it, 2-14 reads
 * blocked for 5-170 ms a scan of A1; the whole shard asked a shard ahead:
 * none in 10 scans. */
#define HINT_NEXT ((uint64_t)8 << 20)
/* The next shard is hinted once the walk is this near the end of a
 * shard's data.bin (A1's shards, 6 MB: as the walk enters one). */
#define NEAR_END ((uint64_t)8 << 20)

/* The smaller of a and b. */
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Hint shard s's data.bin from block `block`, up to the walk's end row
 * hi: at most `most` bytes, and no more than the blocks of its rows. */
static void hint_shard(const atlas_reader *r, size_t s, uint64_t block, uint64_t hi,
                       uint64_t most) {
  uint64_t first = atlas_shard_first(r, s), count = atlas_shard_count(r, s);
  uint64_t bs = atlas_block_size(r, s), nb = atlas_num_blocks(r, s);
  if (!atlas_has_data(r, s) || block >= nb || first + block * bs >= hi) return;
  uint64_t rows = min64(count, hi - first);      /* the walk's rows of s */
  uint64_t end_block = min64(nb, (rows + bs - 1) / bs);
  uint64_t from = atlas_index_entry(r, s, block), to = atlas_index_entry(r, s, end_block);
  if (to > from) atlas_read_ahead(r, s, from, min64(most, to - from));
}

void atlas_scan_ahead_block(ds_scan_ahead *a, const atlas_reader *r, size_t shard,
                            uint64_t block) {
  size_t n = atlas_nshards(r);
  if (!a->hi || shard >= n) return;
  if (ds_scan_ahead_enter(a, shard)) hint_shard(r, shard, block, a->hi, HINT_DATA);
  if (!ds_scan_ahead_next_due(a, shard, n) || block >= atlas_num_blocks(r, shard)) return;
  uint64_t size = atlas_data_size(r, shard), at = atlas_index_entry(r, shard, block);
  if (size > at && size - at > NEAR_END) return;
  /* shards with no rows are skipped: the walk goes on to the next one */
  size_t s = shard + 1;
  while (s + 1 < n && atlas_shard_count(r, s) == 0) s++;
  a->next = s + 1;
  hint_shard(r, s, 0, a->hi, HINT_NEXT);
}

void atlas_scan_ahead_open(const atlas_reader *r) {
  size_t n = atlas_nshards(r), s = 0;
  while (s < n && atlas_shard_count(r, s) == 0) s++;
  if (s < n) hint_shard(r, s, 0, UINT64_MAX, HINT_NEXT);
}
