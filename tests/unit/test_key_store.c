/* test_key_store.c - core/key_store.c: uniqueness over many keys (blocks
 * and table growth), insertion order, rollback to a mark, a dropped table
 * rebuilt, the empty key and a key longer than a block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/key_store.h"

int main(void) {
  ds_key_store s = {0};
  char k[32];
  uint64_t dup = 0;
  int ok = 1;
  for (int i = 0; i < 200000 && ok; i++) {
    int n = snprintf(k, sizeof k, "key-%d", i);
    ok = ds_key_store_add(&s, (const uint8_t *)k, (size_t)n, &dup) == 0;
  }
  CHECK(ok && s.n == 200000);
  CHECK(ds_key_store_add(&s, (const uint8_t *)"key-12345", 9, &dup) == 1 && dup == 12345);
  ds_key_mark m = ds_key_store_mark(&s);
  CHECK(ds_key_store_add(&s, (const uint8_t *)"", 0, &dup) == 0);
  static uint8_t big[3 << 20];
  memset(big, 'b', sizeof big);
  CHECK(ds_key_store_add(&s, big, sizeof big, &dup) == 0);
  CHECK(ds_key_store_add(&s, big, sizeof big, &dup) == 1 && dup == 200001);
  ds_key_store_rollback(&s, m);
  CHECK(s.n == 200000);
  CHECK(ds_key_store_add(&s, big, sizeof big, &dup) == 0); /* gone with the rollback */
  ds_key_store_drop_table(&s);
  CHECK(ds_key_store_add(&s, (const uint8_t *)"key-199999", 10, &dup) == 1 && dup == 199999);
  /* the rebuilt table holds the keys, the last ones too (the rebuild
   * hashes keys ahead of filling their slots); every 997th and the last
   * 64 (each repeat walks the keys to name its index) */
  ok = 1;
  for (int i = 0; i < 200000 && ok; i += i >= 200000 - 64 ? 1 : 997) {
    int n = snprintf(k, sizeof k, "key-%d", i);
    ok = ds_key_store_add(&s, (const uint8_t *)k, (size_t)n, &dup) == 1 && dup == (uint64_t)i;
    if (!ok) CHECK_MSG(0, "key-%d after the rebuild: not found as sample %d", i, i);
  }
  CHECK(ok && s.n == 200001);
  CHECK(ds_key_store_add(&s, big, sizeof big, &dup) == 1 && dup == 200000);
  ds_key_iter it = {0, 0};
  const uint8_t *p;
  size_t n;
  uint64_t i = 0;
  ok = 1;
  while (ds_key_store_next(&s, &it, &p, &n)) {
    int want = i < 200000 ? snprintf(k, sizeof k, "key-%llu", (unsigned long long)i) : -1;
    if (i < 200000) ok = ok && n == (size_t)want && memcmp(p, k, n) == 0;
    else ok = ok && n == sizeof big;
    i++;
  }
  CHECK_MSG(ok && i == 200001, "keys in insertion order (%llu)", (unsigned long long)i);
  CHECK_MSG(ds_key_store_bytes(&s) < (size_t)200000 * 40 + sizeof big + (2u << 20), "%zu bytes", ds_key_store_bytes(&s));
  ds_key_store_free(&s);
  return check_exit();
}
