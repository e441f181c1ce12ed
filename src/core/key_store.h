/* key_store.h - a set of byte-string keys kept in insertion order, for
 * writers that must refuse a repeated key (datadings) and write every key
 * at the end. Keys live back to back ([u32 length][bytes]) in blocks of
 * 1 MiB, so the store never copies itself to grow; a linear-probing table
 * of key positions tagged with hash bits (at most 3/4 full) answers "seen
 * before?" mostly without reading other keys. About
 * 4 + length bytes a key, plus 11-21 bytes of table. The store rolls back
 * to a mark (savepoints) and can drop its table while the keys are
 * written out. Knows no SQLite. */
#ifndef DS_KEY_STORE_H
#define DS_KEY_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_key_store {
  uint8_t **blocks;
  size_t *fill;        /* bytes used in each block */
  size_t *size;        /* bytes allocated for each block */
  size_t nblocks, cap_blocks;
  uint64_t n;          /* keys */
  uint64_t *table;     /* 0: empty; else 1 + (hash tag | block << 32 | offset) */
  size_t tcap;         /* slots, a power of two */
  int table_stale;
} ds_key_store;

typedef struct ds_key_mark {
  size_t nblocks, fill;
  uint64_t n;
} ds_key_mark;

/* Add key k: 0 added, 1 already there (*index = its insertion index),
 * -1 out of memory. */
int ds_key_store_add(ds_key_store *s, const uint8_t *k, size_t len,
                     uint64_t *index);
/* The hash ds_key_store_add_hashed takes for key k; it also starts
 * loading the key's table slot into the cache, so work done before the add
 * overlaps that memory access. */
uint64_t ds_key_store_hash(const ds_key_store *s, const uint8_t *k, size_t len);
/* ds_key_store_add with h = ds_key_store_hash(s, k, len). */
int ds_key_store_add_hashed(ds_key_store *s, const uint8_t *k, size_t len,
                            uint64_t h, uint64_t *index);
ds_key_mark ds_key_store_mark(const ds_key_store *s);
/* Forget every key added after the mark. */
void ds_key_store_rollback(ds_key_store *s, ds_key_mark m);
/* Free the table (it is rebuilt by the next add). */
void ds_key_store_drop_table(ds_key_store *s);

/* Walk the keys in insertion order: it starts zeroed; 1 and the key, or 0
 * at the end. */
typedef struct ds_key_iter {
  size_t block, off;
} ds_key_iter;
int ds_key_store_next(const ds_key_store *s, ds_key_iter *it,
                      const uint8_t **p, size_t *len);

/* Bytes held (blocks and table). */
size_t ds_key_store_bytes(const ds_key_store *s);
void ds_key_store_free(ds_key_store *s);

#endif
