/* atlas_decode.h - one atlas block from data.bin to decoded examples:
 * decompressed (atlas.h), then decoded by the fast list decoder
 * (pickle_list.h) or, for any other shape, the general one (pickle.h),
 * and checked to be a list of exactly the block's example count. Used by
 * the atlas table and its read-ahead thread; knows nothing of SQLite. */
#ifndef DS_ATLAS_DECODE_H
#define DS_ATLAS_DECODE_H

#include <stdint.h>

#include "core/codec.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_cache.h"
#include "decoders/pickle_list.h"

/* Decode block (shard, block) of r into b, with the context z, the window
 * v on data.bin and the fast decoder's scratch pl (one set per thread). b's key (shard, block)
 * and size are set on success only. With pos < UINT64_MAX (a lookup of
 * one example) the whole block is walked and checked but only example pos
 * is built when the fast decoder can (b->partial, the example in b->ex);
 * otherwise b->list holds every example. A block the fast decoder has
 * taken whole with the right example count is marked checked in r
 * (atlas_block_set_checked); a lookup in a checked block walks the block
 * only as far as its example (ds_pickle_list_prefix), so every block is
 * checked whole before any of its rows is shown, and only once. Errors
 * name the shard directory and the block. z->max_out is max_value_bytes: a
 * larger block (raw or decompressed), or decoded values needing more
 * memory, is an error. */
int atlas_decode_block(const atlas_reader *r, ds_zstd_ctx *z, ds_view *v,
                       ds_pickle_list *pl,
                       atlas_dblock *b, size_t shard, uint64_t block, uint64_t pos,
                       char **err);

#endif
