/* key_store.c - insertion-ordered keys in blocks with a uniqueness table
 * (see key_store.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common.h"
#include "hash_index.h"
#include "key_store.h"

#define BLOCK ((size_t)1 << 20)
#define HUGE_PAGE ((size_t)2 << 20)

/* Move an iterator past exhausted blocks, so its position is that of the
 * next key (or the end). */
static void settle(const ds_key_store *s, ds_key_iter *it) {
  while (it->block < s->nblocks && it->off >= s->fill[it->block]) {
    it->block++;
    it->off = 0;
  }
}

/* A table entry is 1 + (tag << TAG_SHIFT | block << 32 | offset): the tag,
 * 12 bits of the key's hash, lets a probe pass other keys without reading
 * them (each read a cache miss at a million keys); blocks are 1 MiB, so
 * MAX_BLOCKS of them hold a TiB of keys. */
#define TAG_SHIFT 52
#define MAX_BLOCKS ((size_t)1 << (TAG_SHIFT - 32))
#define POS_MASK (((uint64_t)1 << TAG_SHIFT) - 1)

/* The key at a table position (tag bits ignored). */
static const uint8_t *key_at(const ds_key_store *s, uint64_t pos, size_t *len) {
  pos &= POS_MASK;
  const uint8_t *q = s->blocks[pos >> 32] + (pos & 0xffffffffu);
  *len = ds_le32(q);
  return q + 4;
}

/* The tag bits of a hash, in place in an entry. */
static uint64_t tag_of(uint64_t h) { return h >> TAG_SHIFT << TAG_SHIFT; }

/* The slot holding key k (hash h), or the empty slot where it would go. */
static size_t probe(const ds_key_store *s, const uint8_t *k, size_t len, uint64_t h) {
  size_t mask = s->tcap - 1, i = (size_t)h & mask;
  uint64_t tag = tag_of(h);
  for (;; i = (i + 1) & mask) {
    uint64_t e = s->table[i];
    if (e == 0) return i;
    if (tag_of(e - 1) != tag) continue;
    size_t m;
    const uint8_t *p = key_at(s, e - 1, &m);
    if (m == len && memcmp(p, k, len) == 0) return i;
  }
}

/* A table with room for `want` keys at most 3/4 full, holding every key. */
/* A zeroed table of cap slots. One of 2 MiB or more asks for transparent
 * huge pages (madvise, only for this memory): every add probes a random
 * slot, and with 4 KiB pages each probe was a TLB miss as well as a cache
 * miss. */
static uint64_t *table_alloc(size_t cap) {
  size_t bytes = cap * sizeof(uint64_t);
  if (bytes < HUGE_PAGE) return calloc(cap, sizeof(uint64_t));
  uint64_t *t = aligned_alloc(HUGE_PAGE, bytes); /* cap: a power of two */
  if (!t) return NULL;
  (void)madvise(t, bytes, MADV_HUGEPAGE); /* a hint: refused is fine */
  memset(t, 0, bytes);
  return t;
}

/* The first empty slot from a hash's home (a rebuild adds keys known to
 * be distinct: no key is compared). */
static size_t probe_empty(const uint64_t *table, size_t mask, uint64_t h) {
  size_t i = (size_t)h & mask;
  while (table[i]) i = (i + 1) & mask;
  return i;
}

#define AHEAD 16 /* keys hashed and their slots prefetched before they go in */

/* Every key into a new table: each key's home slot is prefetched AHEAD
 * keys before it is filled, so the cache misses of a large table overlap
 * (one at a time, the rebuilds of a million keys were ~50 ms). */
static int rebuild(ds_key_store *s, uint64_t want) {
  size_t cap = 16;
  while (cap / 4 * 3 < want) cap *= 2;
  uint64_t *t = table_alloc(cap);
  if (!t) return -1;
  free(s->table);
  s->table = t;
  s->tcap = cap;
  uint64_t h[AHEAD], pos[AHEAD]; /* a ring of keys hashed, not yet in */
  size_t head = 0, nq = 0, mask = cap - 1;
  ds_key_iter it = {0, 0};
  const uint8_t *p;
  size_t len;
  for (int more = 1;;) {
    if (more) {
      settle(s, &it);
      uint64_t at = (uint64_t)it.block << 32 | it.off;
      if ((more = ds_key_store_next(s, &it, &p, &len))) {
        size_t k = (head + nq++) % AHEAD;
        h[k] = ds_hash64(p, len);
        pos[k] = at;
        __builtin_prefetch(&t[h[k] & mask], 1);
        if (nq < AHEAD) continue;
      }
    }
    if (nq == 0) break;
    t[probe_empty(t, mask, h[head])] = (tag_of(h[head]) | pos[head]) + 1;
    head = (head + 1) % AHEAD;
    nq--;
  }
  s->table_stale = 0;
  return 0;
}

/* Room for 4 + len bytes at the end of the last block (or a new one). */
static int room(ds_key_store *s, size_t need) {
  if (s->nblocks && s->size[s->nblocks - 1] - s->fill[s->nblocks - 1] >= need) return 0;
  if (s->nblocks == MAX_BLOCKS) return -1;
  if (s->nblocks == s->cap_blocks) {
    size_t cap = s->cap_blocks ? 2 * s->cap_blocks : 16;
    uint8_t **b = realloc(s->blocks, cap * sizeof *b);
    if (b) s->blocks = b;
    size_t *f = b ? realloc(s->fill, cap * sizeof *f) : NULL;
    if (f) s->fill = f;
    size_t *z = f ? realloc(s->size, cap * sizeof *z) : NULL;
    if (!z) return -1;
    s->size = z;
    s->cap_blocks = cap;
  }
  size_t size = need > BLOCK ? need : BLOCK;
  if (!(s->blocks[s->nblocks] = malloc(size))) return -1;
  s->size[s->nblocks] = size;
  s->fill[s->nblocks++] = 0;
  return 0;
}

/* The insertion index of the key at table position pos (a walk: only for
 * error messages). */
static uint64_t index_of(const ds_key_store *s, uint64_t pos) {
  ds_key_iter it = {0, 0};
  const uint8_t *p;
  size_t len;
  uint64_t i = 0;
  for (;;) {
    settle(s, &it);
    if (((uint64_t)it.block << 32 | it.off) == (pos & POS_MASK) ||
        !ds_key_store_next(s, &it, &p, &len))
      break;
    i++;
  }
  return i;
}

uint64_t ds_key_store_hash(const ds_key_store *s, const uint8_t *k, size_t len) {
  uint64_t h = ds_hash64(k, len);
  if (s->table && !s->table_stale) __builtin_prefetch(&s->table[h & (s->tcap - 1)]);
  return h;
}

int ds_key_store_add(ds_key_store *s, const uint8_t *k, size_t len,
                     uint64_t *index) {
  return ds_key_store_add_hashed(s, k, len, ds_hash64(k, len), index);
}

int ds_key_store_add_hashed(ds_key_store *s, const uint8_t *k, size_t len,
                            uint64_t h, uint64_t *index) {
  if (len > UINT32_MAX) return -1;
  if (!s->table || s->table_stale) { /* as many as there are, and room */
    if (rebuild(s, s->n + 1 + s->n / 4)) return -1;
  } else if (s->tcap / 4 * 3 < s->n + 1) { /* full: double */
    if (rebuild(s, 2 * (s->n + 1))) return -1;
  }
  size_t slot = probe(s, k, len, h);
  if (s->table[slot]) {
    *index = index_of(s, s->table[slot] - 1);
    return 1;
  }
  if (room(s, 4 + len)) return -1;
  size_t b = s->nblocks - 1;
  uint8_t *q = s->blocks[b] + s->fill[b];
  q[0] = (uint8_t)len;
  q[1] = (uint8_t)(len >> 8);
  q[2] = (uint8_t)(len >> 16);
  q[3] = (uint8_t)(len >> 24);
  memcpy(q + 4, k, len);
  s->table[slot] = (tag_of(h) | (uint64_t)b << 32 | s->fill[b]) + 1;
  s->fill[b] += 4 + len;
  s->n++;
  return 0;
}

ds_key_mark ds_key_store_mark(const ds_key_store *s) {
  ds_key_mark m = {s->nblocks, s->nblocks ? s->fill[s->nblocks - 1] : 0, s->n};
  return m;
}

void ds_key_store_rollback(ds_key_store *s, ds_key_mark m) {
  while (s->nblocks > m.nblocks) free(s->blocks[--s->nblocks]);
  if (s->nblocks) s->fill[s->nblocks - 1] = m.fill;
  s->n = m.n;
  s->table_stale = 1;
}

void ds_key_store_drop_table(ds_key_store *s) {
  free(s->table);
  s->table = NULL;
  s->tcap = 0;
}

int ds_key_store_next(const ds_key_store *s, ds_key_iter *it, const uint8_t **p,
                      size_t *len) {
  settle(s, it);
  if (it->block >= s->nblocks) return 0;
  const uint8_t *q = s->blocks[it->block] + it->off;
  *len = ds_le32(q);
  *p = q + 4;
  it->off += 4 + *len;
  return 1;
}

size_t ds_key_store_bytes(const ds_key_store *s) {
  size_t b = s->tcap * sizeof *s->table;
  for (size_t i = 0; i < s->nblocks; i++) b += s->size[i];
  return b;
}

void ds_key_store_free(ds_key_store *s) {
  for (size_t i = 0; i < s->nblocks; i++) free(s->blocks[i]);
  free(s->blocks);
  free(s->fill);
  free(s->size);
  free(s->table);
  memset(s, 0, sizeof *s);
}
