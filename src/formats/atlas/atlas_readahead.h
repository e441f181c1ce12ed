/* atlas_readahead.h - decode the blocks of an ascending atlas scan ahead of
 * the cursor on a second thread. The worker and the cursor share the
 * work: the blocks of the walk are claimed in order by whichever thread
 * gets to them first (decompressed and decoded outside the lock) and handed
 * to the cursor strictly in walk order. Memory is a fixed ring of decoded
 * blocks, whatever the size of the dataset. Same design as
 * bagz_readahead.h, with atlas blocks instead of batches of records. */
#ifndef DS_ATLAS_READAHEAD_H
#define DS_ATLAS_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/rowset.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_cache.h"
#include "decoders/pickle_list.h"

typedef struct atlas_readahead atlas_readahead;

/* Start after block (shard, block): `it` is a copy of the cursor's row
 * iterator (its rowset must outlive the read-ahead), positioned after a
 * row of that block; the walk is the distinct blocks of the rows that
 * follow, in order. The worker decodes blocks under max_value_bytes
 * (max_value_bytes, see atlas_decode.h); the cursor's side decodes with
 * the cursor's own context cz, window cin and scratch cpl (borrowed: they
 * must outlive the read-ahead, and are used only within
 * atlas_readahead_get, on the cursor's thread), so that a scan holds two
 * sets of them, one per thread, not three. */
int atlas_readahead_start(const atlas_reader *r, const ds_rowiter *it, size_t shard,
                          uint64_t block, uint64_t max_value_bytes, ds_zstd_ctx *cz,
                          ds_view *cin, ds_pickle_list *cpl, atlas_readahead **out,
                          char **err);
/* Block (shard, block), the next one of the walk the cursor needs (blocks
 * of the walk before it, which the cursor skipped, are dropped): 1 with *b
 * decoded (valid until the next call or the free), 0 when the walk does
 * not hold it (the caller decodes it itself), -1 when decoding it failed
 * (*err set, the message decoding gives). */
int atlas_readahead_get(atlas_readahead *ra, size_t shard, uint64_t block,
                        atlas_dblock **b, char **err);
/* Stop the worker and free everything. NULL is fine. */
void atlas_readahead_free(atlas_readahead *ra);

#endif
