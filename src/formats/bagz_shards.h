/* bagz_shards.h - what the SQL layer asks of a bag's shards, without
 * reaching into bagz_reader: the global-row map, each shard's file, size
 * and compression, the dictionary for decompression contexts, and the
 * stored size of a record; and handing back the pages behind a scan. */
#ifndef DS_BAGZ_SHARDS_H
#define DS_BAGZ_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/shard_spec.h"
#include "formats/bagz.h"

/* The mapping between global rows and (shard, index). */
const ds_shard_map *bagz_shard_map(const bagz_reader *r);
size_t bagz_nshards(const bagz_reader *r);
/* Shard s's records file, its record count, and whether it is zstd. */
const char *bagz_shard_path(const bagz_reader *r, size_t s);
uint64_t bagz_shard_count(const bagz_reader *r, size_t s);
int bagz_shard_zstd(const bagz_reader *r, size_t s);
/* The zstd dictionary of option dictionary= (NULL: none). */
const ds_zstd_dict *bagz_dictionary(const bagz_reader *r);

/* Stored (compressed) bytes of record `index` of `shard`; 0 when the
 * limits do not say. */
uint64_t bagz_stored_size(const bagz_reader *r, size_t shard, uint64_t index);

/* A scan in the bag's order went from global row `from` to row g: drop
 * the pages of every record before g (concatenated: the shards from
 * from's to g's, g's up to it; interleaved: each shard up to g's place). */
void bagz_release_rows(const bagz_reader *r, uint64_t from, uint64_t g);

#endif
