/* scan_ahead.h - the state a scan's read-ahead hints over shards share in
 * every format (formats/bagz/bagz_scan_ahead.c, formats/atlas/
 * atlas_scan_ahead.c): where the walk ends and which shards were hinted.
 * Each shard is hinted once, the first time the walk is in it, and the
 * next one once, when the walk nears the end of the one before; what to
 * hint and when a shard's end is near are the format's. */
#ifndef DS_SCAN_AHEAD_H
#define DS_SCAN_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/rowset.h"

typedef struct ds_scan_ahead {
  uint64_t hi;  /* the walk ends before this row; 0: no hints */
  size_t next;  /* the shards before it were hinted */
} ds_scan_ahead;

/* Hints for a walk of rs (NULL: none) in ascending order: none for lists,
 * descending or limited walks (ds_rowset_scan_end). */
void ds_scan_ahead_init(ds_scan_ahead *a, const ds_rowset *rs);
/* 1 the first time the walk is in shard `shard` (hints on: a->hi != 0):
 * the caller hints it now; later shards count as not hinted. */
int ds_scan_ahead_enter(ds_scan_ahead *a, size_t shard);
/* 1 when the shard after `shard` (of nshards) is not hinted yet while the
 * walk is in `shard`: the caller hints it once near the shard's end. */
int ds_scan_ahead_next_due(const ds_scan_ahead *a, size_t shard, size_t nshards);

#endif
