/* big_alloc.c - large allocations, huge pages where allowed (see
 * big_alloc.h). Only this process's own anonymous mappings are touched;
 * no file is mapped. */
#include "big_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE ((size_t)2 << 20) /* the huge page size on x86-64 and arm64 */

/* Sizes below this come from calloc (malloc's own mmap threshold is far
 * lower, but a huge page only pays off for a few MiB). */
#define BIG_MIN ((size_t)1 << 20)

void *ds_big_alloc(size_t n) {
  if (n < BIG_MIN) return calloc(n ? n : 1, 1);
  size_t len = (n + HUGE - 1) & ~(HUGE - 1);
  if (len < n || len + HUGE < len) return NULL;
  /* map one huge page more and trim, so the start is aligned to one */
  uint8_t *m = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uint8_t *p = (uint8_t *)(((uintptr_t)m + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
  if (p > m) munmap(m, (size_t)(p - m));
  if (p + len < m + len + HUGE) munmap(p + len, (size_t)(m + len + HUGE - (p + len)));
#ifdef MADV_HUGEPAGE
  madvise(p, len, MADV_HUGEPAGE); /* advice: refused is fine */
#endif
  return p;
}

void ds_big_free(void *p, size_t n) {
  if (!p) return;
  if (n < BIG_MIN) {
    free(p);
    return;
  }
  munmap(p, (n + HUGE - 1) & ~(HUGE - 1));
}
