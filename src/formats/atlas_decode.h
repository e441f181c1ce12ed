/* atlas_decode.h - one atlas block from data.bin to decoded examples:
 * decompressed (atlas.h), then decoded by the fast list decoder
 * (pickle_list.h) or, for any other shape, the general one (pickle.h),
 * and checked to be a list of exactly the block's example count. Used by
 * the atlas table and its read-ahead thread; knows nothing of SQLite. */
#ifndef DS_ATLAS_DECODE_H
#define DS_ATLAS_DECODE_H

#include <stdint.h>

#include "core/codec.h"
#include "formats/atlas.h"
#include "formats/atlas_cache.h"
#include "formats/pickle_list.h"

/* Decode block (shard, block) of r into b, with the context z and the
 * fast decoder's scratch pl (one pair per thread). b's key (shard, block)
 * and size are set on success only. With pos < UINT64_MAX (a lookup of
 * one example) the whole block is walked and checked but only example pos
 * is built when the fast decoder can (b->partial, the example in b->ex);
 * otherwise b->list holds every example. Errors name the shard directory
 * and the block. z->max_out is max_value_bytes: a larger block (raw or
 * decompressed), or decoded values needing more memory, is an error. */
int atlas_decode_block(const atlas_reader *r, ds_zstd_ctx *z, ds_pickle_list *pl,
                       atlas_dblock *b, size_t shard, uint64_t block, uint64_t pos,
                       char **err);

#endif
