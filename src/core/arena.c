/* arena.c - the bump allocator behind value trees (see value.h).
 *
 * An arena is a list of malloc'd blocks. ds_arena_alloc carves 16-byte
 * aligned pieces off the head block and only calls malloc when the head is
 * full (a new block, twice the last size up to 1 MiB) or when a request is
 * large (it then gets a block of its own, linked behind the head so the head
 * keeps serving small requests). `limit` caps the bytes handed out between
 * resets, so a hostile file cannot make a decoder eat all memory. */
#include "value.h"

#include <stdint.h>
#include <stdlib.h>

#define ARENA_ALIGN 16
#define ARENA_FIRST_BLOCK 4096
#define ARENA_MAX_BLOCK (1u << 20)

struct ds_arena_block {
  ds_arena_block *next;
  size_t size; /* usable bytes after the header */
  size_t used; /* bytes of the usable area already handed out */
  /* the usable area follows the header (aligned on use, see block_data) */
};

/* Start of a block's usable area. */
static uint8_t *block_data(ds_arena_block *b) { return (uint8_t *)(b + 1); }

/* Bytes to skip at `used` so that the next piece starts 16-byte aligned. */
static size_t block_pad(ds_arena_block *b) {
  uintptr_t p = (uintptr_t)(block_data(b) + b->used);
  return (ARENA_ALIGN - (size_t)(p % ARENA_ALIGN)) % ARENA_ALIGN;
}

/* Hand out n bytes from b if they fit, else NULL. */
static void *block_take(ds_arena_block *b, size_t n) {
  size_t pad = block_pad(b);
  if (b->used + pad > b->size || n > b->size - b->used - pad) return NULL;
  void *p = block_data(b) + b->used + pad;
  b->used += pad + n;
  return p;
}

/* A new block with room for `size` bytes plus alignment slack. */
static ds_arena_block *block_new(size_t size) {
  if (size > SIZE_MAX - sizeof(ds_arena_block) - ARENA_ALIGN) return NULL;
  ds_arena_block *b = malloc(sizeof(ds_arena_block) + size + ARENA_ALIGN);
  if (!b) return NULL;
  b->next = NULL;
  b->size = size + ARENA_ALIGN;
  b->used = 0;
  return b;
}

/* Size for the next ordinary block: double the head, capped at 1 MiB. */
static size_t next_block_size(const ds_arena *a) {
  if (!a->head) return ARENA_FIRST_BLOCK;
  size_t s = a->head->size * 2;
  return s > ARENA_MAX_BLOCK ? ARENA_MAX_BLOCK : s;
}

void *ds_arena_alloc(ds_arena *a, size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX - ARENA_ALIGN) return NULL;
  n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (a->limit && (n > a->limit || a->total > a->limit - n)) {
    a->over = 1;
    return NULL;
  }
  void *p = a->head ? block_take(a->head, n) : NULL;
  if (!p) {
    size_t want = next_block_size(a);
    if (n > want / 4 && a->head) {
      /* large request: a private block behind the head */
      ds_arena_block *b = block_new(n);
      if (!b) return NULL;
      b->next = a->head->next;
      a->head->next = b;
      p = block_take(b, n);
    } else {
      ds_arena_block *b = block_new(n > want ? n : want);
      if (!b) return NULL;
      b->next = a->head;
      a->head = b;
      p = block_take(b, n);
    }
  }
  if (p) a->total += n;
  return p;
}

int ds_arena_fail(const ds_arena *a, char **err) {
  if (a->over)
    return ds_err(err, "value needs more than max_value_bytes=%zu bytes", a->limit);
  return ds_err(err, "out of memory");
}

void *ds_arena_get(ds_arena *a, size_t n, char **err) {
  void *p = ds_arena_alloc(a, n);
  if (!p) ds_arena_fail(a, err);
  return p;
}

void ds_arena_reset(ds_arena *a) {
  a->over = 0;
  if (!a->head) {
    a->total = 0;
    return;
  }
  ds_arena_block *b = a->head->next;
  while (b) {
    ds_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head->next = NULL;
  a->head->used = 0;
  a->total = 0;
}

void ds_arena_free(ds_arena *a) {
  a->over = 0;
  ds_arena_block *b = a->head;
  while (b) {
    ds_arena_block *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->total = 0;
}
