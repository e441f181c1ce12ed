/* bcolz_cache.h - a bounded least-recently-used cache of decompressed
 * bcolz chunks, for row lookups: a Blosc block often spans the whole chunk
 * (c-blosc 1.x writes one 512 KiB block for 8-byte columns), so without it
 * every random lookup decompresses a chunk. Knows the reader, not SQLite.
 * One cache serves one table handle, used by one thread at a time. */
#ifndef DS_BCOLZ_CACHE_H
#define DS_BCOLZ_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "formats/bcolz/bcolz.h"

typedef struct bcolz_cache bcolz_cache;

/* A cache holding at most budget bytes of decompressed chunks (a chunk
 * larger than the budget is decompressed but not kept). NULL when out of
 * memory. */
bcolz_cache *bcolz_cache_new(uint64_t budget);
void bcolz_cache_free(bcolz_cache *c);
/* Cap every chunk it decompresses at max bytes (max_value_bytes; 0: no
 * cap): a larger chunk is an error, cached or not. */
void bcolz_cache_set_max(bcolz_cache *c, uint64_t max);

/* The bytes of column col at row (dt->atom bytes) from its decompressed
 * chunk, decompressing and caching the chunk when missing. *p stays valid
 * until the next call. Object columns are not cached (use bcolz_row_atom). */
int bcolz_cache_row(bcolz_cache *c, bcolz_table *t, size_t col, uint64_t row,
                    const uint8_t **p, char **err);

/* Bytes held, entries, hits and misses so far (tests, diagnostics). */
void bcolz_cache_stats(const bcolz_cache *c, uint64_t *bytes, uint64_t *entries,
                       uint64_t *hits, uint64_t *misses);

#endif
