/* hash_index.h - an in-memory index from byte strings to the rows that
 * hold them, built by one pass over a dataset (upstream bagz's Index /
 * MultiIndex, and lookups by key when a dataset has no index of its own).
 * Stores only 64-bit hashes and row numbers (16 bytes a row); a lookup
 * gives the candidate rows in ascending order and the caller confirms each
 * by comparing the real bytes, so a hash collision never returns a wrong
 * row. */
#ifndef DS_HASH_INDEX_H
#define DS_HASH_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_hash_entry {
  uint64_t hash;
  uint64_t row;
} ds_hash_entry;

typedef struct ds_hash_index {
  ds_hash_entry *entries; /* sorted by (hash, row) */
  uint64_t n;
} ds_hash_index;

uint64_t ds_hash64(const void *p, size_t n);

/* Reads row i through get() for i in [0, n) and indexes its bytes. Gives
 * up with "interrupted" when a core/cancel.h scope asks to stop. */
typedef int (*ds_hash_get_fn)(void *ctx, uint64_t row, const uint8_t **p,
                              size_t *n, char **err);
int ds_hash_index_build(ds_hash_index *h, uint64_t n, ds_hash_get_fn get,
                        void *ctx, char **err);
/* Candidate rows for key: *first points at the first entry with the key's
 * hash; returns how many consecutive entries share it. */
size_t ds_hash_index_find(const ds_hash_index *h, const void *key, size_t n,
                          const ds_hash_entry **first);
void ds_hash_index_free(ds_hash_index *h);

#endif
