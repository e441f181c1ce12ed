/* row_window.h - the rows a table opened over one shard's files shows, and
 * the whole dataset's numbers it gives them (options every module takes,
 * read by vtab/dataset.c; pure arithmetic, no SQLite):
 *
 *   shard=K          the files' shard s is shard K + s of the dataset
 *   first_rowid=F    the window's first row has rowid F
 *   rowid_step=S     and each next one S more (interleaved bagz: the
 *                    dataset's shard count; default 1)
 *   shard_index=I    the window starts at row I of the files (default 0)
 *   rows=N           and holds at most N rows (default: to the end)
 *
 * A dataset_shards row passed back as options (shard, first_rowid,
 * shard_index, rows) opens exactly that shard or split_rows range with
 * its whole-dataset rowid, shard and shard_index. Local row l (of the
 * files) has rowid F + (l - I) * S. */
#ifndef DS_ROW_WINDOW_H
#define DS_ROW_WINDOW_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/options.h"

typedef struct ds_row_window {
  int on;               /* any of the options given */
  uint64_t shard;       /* K */
  uint64_t first_rowid; /* F */
  uint64_t step;        /* S >= 1 */
  uint64_t start;       /* I */
  uint64_t end;         /* I + N (UINT64_MAX: to the end) */
} ds_row_window;

/* The options as given (ds_row_window_parse turns them into a window). */
typedef struct ds_row_window_opts {
  int64_t shard, first_rowid, rowid_step, shard_index, rows;
} ds_row_window_opts;
/* Their specs (every module takes them, in every form). */
extern const ds_opt_spec ds_row_window_specs[];

/* Read the options from o (the identity window when none is given). 0,
 * or -1 with *err naming the bad option. */
int ds_row_window_parse(const ds_options *o, ds_row_window *w, char **err);

/* With `total` rows in the files: 0 when every row of the window has a
 * rowid SQLite can hold (first_rowid + (rows - 1) * rowid_step at most
 * INT64_MAX), else -1 with *err giving the numbers. */
int ds_row_window_check(const ds_row_window *w, uint64_t total, char **err);

/* The rowid of local row l (l >= w->start). */
uint64_t ds_row_window_rowid(const ds_row_window *w, uint64_t l);

/* The local row of rowid g: 1 and *l, or 0 when no row of the window has
 * that rowid. */
int ds_row_window_local(const ds_row_window *w, uint64_t g, uint64_t *l);

/* Rowids [lo, hi) as local rows [*llo, *lhi), clipped to the window. */
void ds_row_window_range(const ds_row_window *w, uint64_t lo, uint64_t hi,
                         uint64_t *llo, uint64_t *lhi);

#endif
