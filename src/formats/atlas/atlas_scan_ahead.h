/* atlas_scan_ahead.h - read-ahead hints of a scan over remote atlas
 * shards: the first bytes of a shard's data.bin are asked for before the
 * scan gets there, so that moving on to the next shard costs no round
 * trip in a row (core/vfs.h ds_vfs_read_ahead; local shards pay nothing;
 * index.npy, meta.json and dictionaries are all read by the open, so
 * data.bin is all a shard's start needs). Both walkers of a scan use it:
 * the cursor's (threads=1) and the read-ahead's claims (threads=2,
 * atlas_readahead.c). Same design as bagz_scan_ahead.h. */
#ifndef DS_ATLAS_SCAN_AHEAD_H
#define DS_ATLAS_SCAN_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/rowset.h"
#include "formats/atlas/atlas.h"

typedef struct atlas_scan_ahead {
  uint64_t hi;  /* the walk ends before this row; 0: no hints */
  size_t next;  /* the shards before it were hinted */
} atlas_scan_ahead;

/* Hints for a walk of rs (not borrowed) in ascending order: none for
 * lists, descending or limited walks. */
void atlas_scan_ahead_init(atlas_scan_ahead *a, const atlas_reader *r, const ds_rowset *rs);
/* The walk is at block `block` of shard `shard`: the first time in a
 * shard, its data.bin from that block is hinted; within about 4 MiB of a
 * shard's end, the next shard's first bytes are (at most 4 MiB per shard,
 * fewer when the walk ends sooner). */
void atlas_scan_ahead_block(atlas_scan_ahead *a, const atlas_reader *r, size_t shard,
                            uint64_t block);

#endif
