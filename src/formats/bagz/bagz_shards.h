/* bagz_shards.h - what the SQL layer asks of a bag's shards, without
 * reaching into bagz_reader: the global-row map, each shard's file, size
 * and compression, and the dictionary for decompression contexts. */
#ifndef DS_BAGZ_SHARDS_H
#define DS_BAGZ_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/shard_spec.h"
#include "formats/bagz/bagz.h"

/* The mapping between global rows and (shard, index). */
const ds_shard_map *bagz_shard_map(const bagz_reader *r);
size_t bagz_nshards(const bagz_reader *r);
/* Shard s's records file, its record count, and whether it is zstd. */
const char *bagz_shard_path(const bagz_reader *r, size_t s);
uint64_t bagz_shard_count(const bagz_reader *r, size_t s);
int bagz_shard_zstd(const bagz_reader *r, size_t s);
/* The zstd dictionary of option dictionary= (NULL: none). */
const ds_zstd_dict *bagz_dictionary(const bagz_reader *r);

#endif
