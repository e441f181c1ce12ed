/* row_window.c - a shard's window of rows and its whole-dataset numbering
 * (see row_window.h). */
#include "row_window.h"

#include "core/common.h"

const char *const ds_row_window_options[] = {"shard", "first_rowid", "rowid_step",
                                             "shard_index", "rows", NULL};

/* Largest rowid or shard number SQLite's signed 64-bit integers hold. */
#define MAX_NUMBER INT64_MAX

int ds_row_window_parse(const ds_options *o, ds_row_window *w, char **err) {
  int64_t shard, first, step, start, rows;
  if (ds_options_int(o, "shard", 0, 0, MAX_NUMBER, &shard, err) ||
      ds_options_int(o, "first_rowid", 0, 0, MAX_NUMBER, &first, err) ||
      ds_options_int(o, "rowid_step", 1, 1, (int64_t)1 << 32, &step, err) ||
      ds_options_int(o, "shard_index", 0, 0, MAX_NUMBER, &start, err) ||
      ds_options_int(o, "rows", -1, 0, MAX_NUMBER, &rows, err))
    return -1;
  w->on = 0;
  for (const char *const *k = ds_row_window_options; *k; k++)
    if (ds_options_get(o, *k)) w->on = 1;
  w->shard = (uint64_t)shard;
  w->first_rowid = (uint64_t)first;
  w->step = (uint64_t)step;
  w->start = (uint64_t)start;
  w->end = rows < 0 ? UINT64_MAX : (uint64_t)start + (uint64_t)rows;
  /* the window's last rowid must stay a SQLite integer */
  uint64_t span = rows > 0 ? (uint64_t)rows - 1 : 0;
  if (rows >= 0 && span > ((uint64_t)MAX_NUMBER - w->first_rowid) / w->step)
    return ds_err(err, "option rows=%lld: rowids past first_rowid=%lld overflow",
                  (long long)rows, (long long)first);
  return 0;
}

int ds_row_window_check(const ds_row_window *w, uint64_t total, char **err) {
  uint64_t end = w->end < total ? w->end : total;
  if (!w->on || end <= w->start) return 0;
  uint64_t last = end - w->start - 1; /* the window's last row, counted from 0 */
  if (last <= ((uint64_t)MAX_NUMBER - w->first_rowid) / w->step) return 0;
  return ds_err(err, "first_rowid=%llu with rowid_step=%llu: the window's %llu rows "
                     "would take rowids past %lld, the largest SQLite holds",
                (unsigned long long)w->first_rowid, (unsigned long long)w->step,
                (unsigned long long)(last + 1), (long long)MAX_NUMBER);
}

uint64_t ds_row_window_rowid(const ds_row_window *w, uint64_t l) {
  return w->first_rowid + (l - w->start) * w->step;
}

int ds_row_window_local(const ds_row_window *w, uint64_t g, uint64_t *l) {
  if (g < w->first_rowid || (g - w->first_rowid) % w->step) return 0;
  uint64_t k = (g - w->first_rowid) / w->step;
  if (k >= w->end - w->start) return 0;
  *l = w->start + k;
  return 1;
}

/* Rows of the window with rowid below g: ceil((g - F) / S), capped. */
static uint64_t rows_below(const ds_row_window *w, uint64_t g) {
  if (g <= w->first_rowid) return 0;
  uint64_t d = g - w->first_rowid;
  uint64_t k = d / w->step + (d % w->step != 0);
  uint64_t n = w->end - w->start;
  return k < n ? k : n;
}

void ds_row_window_range(const ds_row_window *w, uint64_t lo, uint64_t hi,
                         uint64_t *llo, uint64_t *lhi) {
  *llo = w->start + rows_below(w, lo);
  *lhi = w->start + rows_below(w, hi);
  if (*lhi < *llo) *lhi = *llo;
}
