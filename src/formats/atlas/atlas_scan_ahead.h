/* atlas_scan_ahead.h - read-ahead hints of a scan over remote atlas
 * shards: the first bytes of a shard's data.bin are asked for before the
 * scan gets there, so that moving on to the next shard costs no round
 * trip in a row (core/vfs.h ds_vfs_read_ahead; local shards pay nothing;
 * index.npy, meta.json and dictionaries are all read by the open, so
 * data.bin is all a shard's start needs). Both walkers of a scan use it:
 * the cursor's (threads=1) and the read-ahead's claims (threads=2,
 * atlas_readahead.c). Same design as bagz_scan_ahead.h; the state is
 * core/scan_ahead.h's, started by ds_scan_ahead_init. */
#ifndef DS_ATLAS_SCAN_AHEAD_H
#define DS_ATLAS_SCAN_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/scan_ahead.h"
#include "formats/atlas/atlas.h"

/* The walk is at block `block` of shard `shard`: the first time in a
 * shard, its data.bin from that block is hinted; within about 4 MiB of a
 * shard's end, the next shard's first bytes are (at most 4 MiB per shard,
 * fewer when the walk ends sooner). */
void atlas_scan_ahead_block(ds_scan_ahead *a, const atlas_reader *r, size_t shard,
                            uint64_t block);

#endif
