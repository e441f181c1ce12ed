/* bagz_scan_ahead.h - read-ahead hints of a scan over remote shards: the
 * first bytes of a shard (its records and its limits) are asked for
 * before the scan gets there, so that moving on to the next shard costs
 * no round trip in a row (core/vfs.h ds_vfs_read_ahead; local bags pay
 * nothing). Both walkers of a scan use it: the cursor's (threads=1) and
 * the read-ahead's claims (threads=2, bagz_readahead.c). The state is
 * core/scan_ahead.h's. */
#ifndef DS_BAGZ_SCAN_AHEAD_H
#define DS_BAGZ_SCAN_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/scan_ahead.h"
#include "formats/bagz/bagz.h"

/* Hints for a walk of rs (not borrowed) in ascending order: none for
 * lists, descending or limited walks, interleaved bags. */
void bagz_scan_ahead_init(ds_scan_ahead *a, const bagz_reader *r, const ds_rowset *rs);
/* The walk is at record `index` of shard `shard`: the first time in a
 * shard, its limits from there (and its records when at record 0) are
 * hinted; within about 4 MiB of a shard's end, the next shard's first
 * bytes are (at most 4 MiB of records and 512 KiB of limits per shard,
 * fewer when the walk ends sooner). */
void bagz_scan_ahead_row(ds_scan_ahead *a, const bagz_reader *r, size_t shard,
                         uint64_t index);

#endif
