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
 * shard, its data.bin from that block is hinted; within about 8 MiB of a
 * shard's end, the next shard's first bytes are (at most 8 MiB per shard,
 * which the remote file cuts to a stream's window, fewer when the walk
 * ends sooner). */
void atlas_scan_ahead_block(ds_scan_ahead *a, const atlas_reader *r, size_t shard,
                            uint64_t block);

/* The open is about to read the first rows (the schema's inference): the
 * first shard with rows has its data.bin's first bytes hinted (as the
 * next shard of a scan: up to a stream's window, DS_RFILE_AHEAD_MAX)
 * before that read, so that the read waits for the head of a stream
 * rather than a lone 64 KiB block, and the scan that usually follows the
 * CREATE finds those bytes there instead of starting the stream cold:
 * one round trip less before the first row. A table opened and never read
 * has fetched them for nothing (the read-ahead window the inference's
 * reads start anyway once they follow each other). */
void atlas_scan_ahead_open(const atlas_reader *r);

#endif
