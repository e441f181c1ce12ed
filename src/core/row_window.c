/* row_window.c - a shard's window of rows and its whole-dataset numbering
 * (see row_window.h). */
#include "row_window.h"

#include "core/common.h"

/* Largest rowid or shard number SQLite's signed 64-bit integers hold. */
#define MAX_NUMBER INT64_MAX

/* One option of the window: an integer in [lo, hi], field of
 * ds_row_window_opts. */
#define WINDOW(name_, field, lo, hi, d, dtext, text)                                \
  {.name = name_, .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = lo, .max = hi, \
   .def = d, .def_text = dtext, .help = text, .at = offsetof(ds_row_window_opts, field)}
const ds_opt_spec ds_row_window_specs[] = {
    WINDOW("shard", shard, 0, MAX_NUMBER, 0, NULL,
           "the number in the whole dataset of the files' first shard"),
    WINDOW("first_rowid", first_rowid, 0, MAX_NUMBER, 0, NULL, "rowid of the window's first row"),
    WINDOW("rowid_step", rowid_step, 1, (int64_t)1 << 32, 1, NULL,
           "each next row's rowid is this much more (interleaved bagz: the shard count)"),
    WINDOW("shard_index", shard_index, 0, MAX_NUMBER, 0, NULL,
           "the window starts at this row of the files"),
    WINDOW("rows", rows, 0, MAX_NUMBER, -1, "to the end", "the window holds at most this many rows"),
    {0}};

int ds_row_window_parse(const ds_options *o, ds_row_window *w, char **err) {
  static const ds_opt_group group[] = {{ds_row_window_specs, 0}, {0}};
  ds_row_window_opts v;
  if (ds_opt_read(group, o, &v, err)) return -1;
  int64_t shard = v.shard, first = v.first_rowid, step = v.rowid_step,
          start = v.shard_index, rows = v.rows;
  w->on = 0;
  for (const ds_opt_spec *s = ds_row_window_specs; s->name; s++)
    if (ds_opt_given(o, s)) w->on = 1;
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
