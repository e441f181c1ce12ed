/* test_atlas_cache.c - the decoded-block cache behind the atlas cache_mb
 * option (formats/atlas/atlas_cache.c): lookups by (shard, block), the byte
 * limit, least-recently-used eviction, pinned blocks never evicted, and
 * many blocks through a small cache (run under ASan by `make asan`). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats/atlas/atlas_cache.h"

/* A pinned block of `bytes` bytes for (shard, block), put into c. */
static atlas_dblock *put(atlas_cache *c, size_t shard, uint64_t block, size_t bytes) {
  atlas_dblock *b = atlas_dblock_new();
  if (!b) return NULL;
  b->shard = shard;
  b->block = block;
  b->lru.bytes = bytes;
  b->lru.pins = 1;
  if (atlas_cache_put(c, b)) {
    atlas_dblock_free(b);
    return NULL;
  }
  return b;
}

/* 1 when the cache holds (shard, block) (the lookup pin is undone). */
static int holds(atlas_cache *c, size_t shard, uint64_t block) {
  atlas_dblock *b = atlas_cache_get(c, shard, block);
  if (b) b->lru.pins--;
  return b != NULL;
}

static void test_lru(void) {
  atlas_cache c;
  atlas_cache_init(&c, 300);
  atlas_dblock *a = put(&c, 0, 1, 100), *b = put(&c, 0, 2, 100), *d = put(&c, 1, 1, 100);
  CHECK(a && b && d && c.used == 300 && c.count == 3);
  atlas_cache_unpin(&c, a);
  atlas_cache_unpin(&c, b);
  atlas_cache_unpin(&c, d);
  CHECK(holds(&c, 0, 1) && holds(&c, 0, 2) && holds(&c, 1, 1));
  CHECK(!holds(&c, 1, 2) && !holds(&c, 2, 1));
  /* (0, 1) is now the least recently used: touch it, so (0, 2) goes */
  atlas_dblock *x = atlas_cache_get(&c, 0, 2);
  CHECK(x == b && x->lru.pins == 1);
  atlas_cache_unpin(&c, x);
  x = atlas_cache_get(&c, 0, 1);
  atlas_cache_unpin(&c, x);
  atlas_dblock *e = put(&c, 2, 0, 100);
  CHECK(e && c.used == 300 && c.count == 3);
  CHECK(holds(&c, 0, 1) && holds(&c, 0, 2) && holds(&c, 2, 0) && !holds(&c, 1, 1));
  atlas_cache_unpin(&c, e);
  /* a block bigger than the limit stays while pinned, goes when unpinned */
  atlas_dblock *big = put(&c, 3, 3, 1000);
  CHECK(big && holds(&c, 3, 3) && c.used == 1000 && c.count == 1);
  atlas_cache_unpin(&c, big);
  CHECK(c.used == 0 && c.count == 0 && !holds(&c, 3, 3));
  atlas_cache_free(&c);
}

static void test_pins(void) {
  atlas_cache c;
  atlas_cache_init(&c, 250);
  atlas_dblock *a = put(&c, 0, 0, 100), *b = put(&c, 0, 1, 100);
  atlas_cache_unpin(&c, b);
  /* over the limit: b (unpinned) goes, a (pinned, older) stays */
  atlas_dblock *d = put(&c, 0, 2, 100);
  CHECK(a && d && holds(&c, 0, 0) && !holds(&c, 0, 1) && holds(&c, 0, 2));
  CHECK(c.used == 200);
  atlas_cache_unpin(&c, a);
  atlas_cache_unpin(&c, d);
  CHECK(c.used == 200 && c.count == 2);
  atlas_cache_free(&c);
}

/* Many blocks through a small cache: the limit holds after every unpin,
 * and every block found is the one asked for. */
static void test_churn(void) {
  atlas_cache c;
  atlas_cache_init(&c, 64 * 1000);
  uint64_t st = 12345;
  int over = 0, wrong = 0, hits = 0;
  for (int i = 0; i < 20000; i++) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    size_t shard = (size_t)(st >> 60);
    uint64_t block = (st >> 33) % 20;
    atlas_dblock *b = atlas_cache_get(&c, shard, block);
    if (b) {
      hits++;
      if (b->shard != shard || b->block != block) wrong++;
    } else {
      b = put(&c, shard, block, 500 + (size_t)(st % 1500));
    }
    if (b) atlas_cache_unpin(&c, b);
    if (c.used > c.limit) over++;
  }
  CHECK_MSG(over == 0 && wrong == 0 && hits > 0, "over %d wrong %d hits %d", over, wrong, hits);
  size_t n = 0, sum = 0;
  for (ds_lru_node *b = c.head; b; b = b->next) {
    n++;
    sum += b->bytes;
  }
  CHECK(n == c.count && sum == c.used);
  atlas_cache_free(&c);
}

/* A limit of 0 keeps nothing once unpinned. */
static void test_zero(void) {
  atlas_cache c;
  atlas_cache_init(&c, 0);
  atlas_dblock *a = put(&c, 0, 0, 10);
  CHECK(a && holds(&c, 0, 0));
  atlas_cache_unpin(&c, a);
  CHECK(c.count == 0 && c.used == 0);
  atlas_cache_free(&c);
}

int main(void) {
  test_lru();
  test_pins();
  test_churn();
  test_zero();
  return check_exit();
}
