/* big_alloc.h - large zero-filled allocations (lookup tables, files held in
 * memory) in anonymous memory that the kernel may back with huge pages
 * (madvise MADV_HUGEPAGE, when transparent huge pages allow it): filling a
 * table of many MiB then takes a few page faults, not one per 4 KiB, which
 * is most of the cost of building it. Small sizes come from calloc. */
#ifndef DS_BIG_ALLOC_H
#define DS_BIG_ALLOC_H

#include <stddef.h>

/* n zero bytes, or NULL when out of memory. */
void *ds_big_alloc(size_t n);
/* Free p (NULL is fine), allocated by ds_big_alloc with the same n. */
void ds_big_free(void *p, size_t n);

#endif
