/* scan_ahead.c - the shared state of a scan's shard hints (see
 * scan_ahead.h). */
#include "core/scan_ahead.h"

void ds_scan_ahead_init(ds_scan_ahead *a, const ds_rowset *rs) {
  a->hi = ds_rowset_scan_end(rs);
  a->next = 0;
}

int ds_scan_ahead_enter(ds_scan_ahead *a, size_t shard) {
  if (!a->hi || shard < a->next) return 0;
  a->next = shard + 1;
  return 1;
}

int ds_scan_ahead_next_due(const ds_scan_ahead *a, size_t shard, size_t nshards) {
  return a->hi && a->next == shard + 1 && shard + 1 < nshards;
}
