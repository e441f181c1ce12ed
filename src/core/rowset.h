/* rowset.h - the set of global row indexes a query asked for, and an
 * iterator that walks it in ascending or descending order with OFFSET and
 * LIMIT applied, in constant memory.
 *
 * A set is one of
 *   RANGES   sorted, disjoint half-open ranges (a full scan is [0, n));
 *   LIST     sorted, distinct row indexes (rowid IN, key lookups);
 *   STRIDED  rows s + j*k for each start s (sorted, < k) and j < count[s]
 *            (some shards of an interleaved set),
 * clipped to [lo, hi). Iterators are independent: a read-ahead thread can
 * walk the same set as the cursor. Knows nothing about SQLite. */
#ifndef DS_ROWSET_H
#define DS_ROWSET_H

#include <stddef.h>
#include <stdint.h>

typedef enum { DS_RS_RANGES, DS_RS_LIST, DS_RS_STRIDED } ds_rs_kind;

typedef struct ds_range {
  uint64_t lo, hi; /* [lo, hi) */
} ds_range;

typedef struct ds_rowset {
  ds_rs_kind kind;
  ds_range *ranges; size_t nranges;   /* RANGES */
  uint64_t *ids; size_t nids;         /* LIST (ids may point at one) */
  uint64_t one;                       /* storage for a one-row LIST */
  uint64_t k;                         /* STRIDED */
  uint64_t *starts, *counts; size_t nstarts;
  uint64_t lo, hi;                    /* clip, [lo, hi) */
  int desc;
  uint64_t offset;
  uint64_t limit;                     /* UINT64_MAX: none */
} ds_rowset;

/* All rows [0, n). */
int ds_rowset_init_all(ds_rowset *rs, uint64_t n);
/* Take ownership of a malloc'd id array; it is sorted and deduplicated. */
void ds_rowset_init_list(ds_rowset *rs, uint64_t *ids, size_t n);
/* One row (a point lookup): no allocation. */
void ds_rowset_init_one(ds_rowset *rs, uint64_t id);
/* Take ownership of malloc'd range array (sorted and merged here). */
void ds_rowset_init_ranges(ds_rowset *rs, ds_range *r, size_t n);
/* Take ownership of malloc'd starts/counts arrays (sorted here). */
void ds_rowset_init_strided(ds_rowset *rs, uint64_t k, uint64_t *starts,
                            uint64_t *counts, size_t n);
/* The rows of the shards flagged in on[0..k): for concatenated shards the
 * ranges [first[s], first[s] + counts[s]); for interleaved ones (strided
 * = 1) the rows s + j*k for j < counts[s]. -1 when out of memory. */
int ds_rowset_init_shards(ds_rowset *rs, int strided, const uint64_t *first,
                          const uint64_t *counts, size_t k,
                          const unsigned char *on);
/* Narrow to [lo, hi). */
void ds_rowset_clip(ds_rowset *rs, uint64_t lo, uint64_t hi);
/* Is row g in the set (ignoring offset/limit)? */
int ds_rowset_contains(const ds_rowset *rs, uint64_t g);
/* The row an ascending, unlimited walk of ranges ends before (what a
 * scan's read-ahead hints may reach); 0 for lists, descending, limited
 * or empty walks, which get no hints. */
uint64_t ds_rowset_scan_end(const ds_rowset *rs);
void ds_rowset_free(ds_rowset *rs);

typedef struct ds_rowiter {
  const ds_rowset *rs;
  size_t i;        /* range / list / start position */
  uint64_t cur;    /* RANGES: next row; STRIDED: j */
  uint64_t emitted;
  uint64_t skip;   /* offset still to skip */
  int started;
} ds_rowiter;

void ds_rowiter_init(ds_rowiter *it, const ds_rowset *rs);
/* Next row index into *g; 0 when the set is exhausted, or when a
 * core/cancel.h scope asked to stop while skipping the offset (the scope
 * reports that). */
int ds_rowiter_next(ds_rowiter *it, uint64_t *g);
/* Take up to max rows that follow the last row ds_rowiter_next gave, in
 * one step, when the walk is ascending ranges with no offset left to
 * skip: the rows last+1 .. last+n, n returned (0 when the range ended,
 * the LIMIT is reached, or the walk is of another kind: call
 * ds_rowiter_next). A scan's fast path (tfrecord threads=2). */
uint64_t ds_rowiter_run(ds_rowiter *it, uint64_t max);

#endif
